/**
 * `help`, written for where it is read. Every command is shown as it is typed there (`/cairn me` on
 * Slack and Discord, `/me` in the console), so each can be copied as shown. The console has no
 * channels, threads or reactions: its help says how to chat and correct in a terminal instead.
 */
import type { Platform } from "../ground/types.ts";

/** A command as typed on `platform`. */
const typed = (platform: Platform) => (words: string) => `\`${platform === "console" ? "/" : "/cairn "}${words}\``;

const CONSOLE_HELP = (c: (words: string) => string) => `**cairn** remembers what your team teaches it. This console is a private chat with it.
Type a message and press Enter to chat. On my last answer:
${c("correct <what was wrong>")} correct it: I answer again with it applied and keep the lesson · ${c("good")} it was right
${c("learn <text>")} turn pasted text into a skill (${c("learn")} alone: learn from this conversation)
${c("lessons")} what I learned from your corrections, with ids · ${c("me")} what I know about you · ${c("skills")} the skill library
${c("new")} start a fresh session · ${c("why")} what my last answer drew on
${c("forget <id>")} delete one entry or lesson · ${c("forget me")} erase everything I hold about you
${c("report")} the latest weekly self-review · ${c("jobs")} the curator's and the report's runs (${c("jobs run curator")} runs one now)
Also here: ${["team", "confirm <id>", "approve <id>", "history <id>", "rollback <revision id>", "persona", "verify"].map(c).join(", ")}.
${c("help")} this text · \`/quit\` leave`;

/**
 * Slack and Discord. Discord takes 25 subcommands, so `verify` is its team view's *Still true*
 * there (platforms/discord/commands/slash.ts); `correct` and `good` are reactions there and on Slack.
 */
const CHAT_HELP = (c: (words: string) => string, platform: Platform) => `**cairn** remembers what your team teaches it.
- Talk to it in a DM, or mention it in a channel; it follows the thread after that.
- Tell it your preferences ("I prefer bullet points"), team conventions and decisions: it saves them.
- An answer was wrong? React 👎 and say what it should have done, or just tell it in words: it answers again and keeps the lesson. 👍 says an answer helped.
- It keeps a shared library of skills (procedures) the whole team can use and improve.
- What you tell it in a DM stays yours. What you ask it to remember for the team, and a team skill you make, stays where you said it (this channel, or yours from a DM) until a teammate approves it with ✅ or ${c("approve <id>")}; a change to a team skill waits for their approval too.
Commands:
${c("help")} this text · ${c("me")} what cairn knows about you · ${c("team")} the team's rules, lessons, proposals and memory · ${c("skills")} the skill library · ${c("new")} start a fresh session
${c("learn <text>")} turn pasted text into a skill (mention cairn with \`learn\` in a thread: learn from it; cairn opens no links)
${c("lessons")} the lessons and team rules you can see, with their ids and where each came from · ${c("why")} what my last answer here drew on (rules, lessons, facts, skills, searches; *Why this answer?* on any answer of mine)
${c("forget <id>")} delete one of your entries or private lessons, archive a channel lesson you taught (admins: a team rule) · ${c("forget me")} erase everything cairn holds about you
${c("confirm <id>")} share an entry you proposed from a DM with the team · ${c("approve <id>")} / ${c("reject <id>")} a proposed team rule, team skill or change to one, or fact for the whole team (as ✅ does; not your own) · ${c("keep <id>")} / ${c("reword <id> <text>")} a doubtful team rule (admins) · ${c("keep new|old|both <id>")} say which of two disagreeing entries holds · ${platform === "discord" ? `*Still true* in ${c("team")}` : `${c("verify <id>")} (${c("verify")} alone: what is due here)`} say a shared fact, rule, lesson or team skill still holds
${c("pin <skill>")} · ${c("unpin <skill>")} · ${c("archive <skill>")} · ${c("restore <skill>")} keep the skill library (admins) · ${c("persona")} how cairn speaks here (${c("persona set <text>")}, ${c("persona clear")}: admins)
${c("listen on|off|status")} keep this channel's messages so people who can read it can ask what was said (on/off: admins) · ${c("listen exclude-me")} leave yours out
${c("report")} the latest weekly self-review: what cairn learned, its corrections and trends
${c("history <skill or entry id>")} every change to it, with revision ids · ${c("rollback <revision id>")} undo one change (admins; your own private items: you)
${c("teachers list|add|remove <user>")} people whose team writes need no approval (admins) · ${c("jobs")} the curator's and the weekly report's last and next runs · ${c("jobs run curator|report")} run one now (admins; ${c("jobs run curator --dry-run")}: only says what it would change)`;

export function helpText(platform: Platform): string {
  const c = typed(platform);
  return platform === "console" ? CONSOLE_HELP(c) : CHAT_HELP(c, platform);
}
