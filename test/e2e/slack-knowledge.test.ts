/**
 * Channel knowledge on Slack end to end: the real Bolt (HTTP mode with v0 signatures, and Socket
 * Mode over a real WebSocket) and the real WebClient against the fake Slack, a real Core on SQLite
 * and PostgreSQL, the real Anthropic SDK against the fake model server. `/cairn listen on` by an
 * admin, the backfill paging through conversations.history and each thread's conversations.replies
 * (a 429 waited out, a page that fails taken up again from the stored cursor), members from
 * conversations.members and member events, live messages, edits and deletions from Slack's events,
 * and what a person asking cairn in a DM finds: the message, its author and its permalink, only
 * while they are in the channel.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore, toolResults } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { captureLogger, eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack, type SlackCall, type StoredMessage } from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import type { SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { METHOD_SCOPES } from "../../src/platforms/slack/scopes.ts";
import { startBothModes } from "../support/slack-modes.ts";

const ADMIN = "UADMIN";
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] });
const DAY = 24 * 60 * 60_000;
const PEOPLE: Record<string, string> = { [ADMIN]: "Ada", UANA: "Ana", UBEN: "Ben", UCAT: "Cat", UMEMBER: "Mia", UOUTSIDER: "Otto", UOLD: "Old" };
/** A channel id as Slack's look (capitals and digits), unique per test. */
const channelId = (prefix = "C"): string => uniqueId(prefix).replace("-", "").toUpperCase();
const NOTHING = /^No earlier messages match/;

/** What seedChannel put in a channel: the ts of the messages the tests ask about, and of every one that should be kept. */
interface Seeded {
  decision: string;
  rollback: string;
  broadcast: string;
  lunch: string;
  kept: string[];
}

let tsSeq = 0;
/** A ts `ago` milliseconds back, unique within the run (its microseconds count up). */
const tsAgo = (ago: number): string => `${Math.floor((Date.now() - ago) / 1000)}.${String(++tsSeq % 1_000_000).padStart(6, "0")}`;

forEachDatabase("slack channel knowledge end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let httpMode: SlackHandle;
  let socketMode: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;
  const methodsSeen = new Set<string>();


  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    for (const [id, displayName] of Object.entries(PEOPLE)) slack.addUser({ id, displayName });
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, access: ACCESS });
    ({ httpMode, socketMode, eventsUrl } = await startBothModes(core, slack, logs.log));
  });
  afterAll(async () => {
    await httpMode?.stop();
    await socketMode?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    for (const c of slack.calls) methodsSeen.add(c.method);
    anthropic.reset();
    anthropic.setDefault({ text: "ok" });
    slack.reset();
    team = uniqueId("T");
  });

  const posts = (channel: string): SlackCall[] => slack.callsTo("chat.postMessage").filter((c) => c.args.channel === channel);
  const logged = (msg: string, pred: (l: Record<string, unknown>) => boolean) => waitUntil(`log "${msg}"`, () => logs.find(msg, pred).length > 0, 15_000);
  const workspace = async () => getDb().prisma.workspace.findFirstOrThrow({ where: { platform: "slack", externalId: team } });
  /** What cairn keeps of a channel, oldest first. */
  const kept = async (channel: string) =>
    getDb().prisma.message.findMany({ where: { role: "channel", conversation: { key: `slack:${team}:listen:${channel}` } }, include: { author: true }, orderBy: { createdAt: "asc" } });

  /** `/cairn <text>` by `user` in `channel`, signed over HTTP or as a Socket Mode envelope; the answer's text. */
  async function command(user: string, channel: string, text: string, via: "http" | "socket" = "http"): Promise<string> {
    const responseUrl = slack.responseUrl();
    const payload = { command: "/cairn", text, team_id: team, channel_id: channel, user_id: user, response_url: responseUrl, trigger_id: uniqueId("trig") };
    if (via === "http") expect((await postSigned(eventsUrl, payload, { contentType: "application/x-www-form-urlencoded" })).status).toBe(200);
    else slack.pushEnvelope("slash_commands", payload);
    const answer = await slack.waitFor(`the answer to /cairn ${text}`, () => slack.responses.find((r) => responseUrl.endsWith(r.id)), 15_000);
    return String(answer.body.text);
  }

  /**
   * Sends an event as Slack does (signed over HTTP, or over the socket) and waits until the adapter
   * has handed it to the core (`id`: the message's ts, the deleted ts, or the member's id).
   */
  async function deliver(event: Record<string, unknown>, id: string, via: "http" | "socket" = "http"): Promise<void> {
    const seen = () => logs.find("channel event observed", (l) => l.id === id && l.team === team).length;
    const before = seen();
    if (via === "http") expect((await postSigned(eventsUrl, eventCallback(team, event))).status).toBe(200);
    else await slack.waitForAck(slack.pushEnvelope("events_api", eventCallback(team, event)));
    await waitUntil(`${String(event.type)} ${id} observed`, () => seen() > before, 15_000);
  }

  /** A person's post in a channel: put in the fake's store (as Slack holds it) and sent as its message event. */
  async function say(user: string, channel: string, text: string, opts: { thread?: string; via?: "http" | "socket" } = {}): Promise<string> {
    const ts = slack.seedMessage({ channel, user, text, ...(opts.thread ? { thread_ts: opts.thread } : {}) });
    await deliver({ type: "message", channel, channel_type: "channel", user, text, ts, event_ts: ts, ...(opts.thread ? { thread_ts: opts.thread } : {}) }, ts, opts.via);
    return ts;
  }

  /** `user` asks cairn in a DM; the model searches for `query` and answers `answer`: the tool's result, and what was posted. */
  async function ask(user: string, query: string, answer = "answered"): Promise<{ result: string; posted: string[] }> {
    anthropic.enqueue({ toolUse: [{ name: "session_search", input: { query } }] }, { text: answer });
    const channel = `D${user}${team.slice(2)}`;
    const ts = slack.nextTs();
    expect((await postSigned(eventsUrl, eventCallback(team, { type: "message", channel, channel_type: "im", user, text: `what about ${query}?`, ts, event_ts: ts }))).status).toBe(200);
    await logged("reply posted", (l) => l.ts === ts);
    const result = toolResults(anthropic.lastRequest()!)[0]!.content;
    return { result, posted: slack.messages(channel).filter((m) => m.user === slack.bot.userId && Number(m.ts) > Number(ts)).map((m) => m.text) };
  }

  /**
   * A channel as Slack holds it: its members, and within the backfill's 90 days a decision whose
   * thread runs to three pages of replies (one of them also sent to the channel), a join message,
   * a bot's post, cairn's own, `chatter` standup notes and a lunch call; and one message older
   * than the backfill reaches.
   */
  function seedChannel(channel: string, chatter = 120): Seeded {
    for (const user of [ADMIN, "UANA", "UBEN", "UCAT", "UMEMBER", slack.bot.userId]) slack.joinChannel(user, channel);
    const at = (days: number, minutes = 0) => tsAgo(days * DAY - minutes * 60_000);
    const decision = at(20);
    const messages: (Omit<StoredMessage, "channel" | "ts"> & { ts: string })[] = [
      { ts: at(200), user: "UOLD", text: "ancient kumquat migration plan" },
      { ts: decision, user: "UANA", text: "We decided: the billing cutover happens on March 3rd, after the freeze" },
    ];
    const replies = Array.from({ length: 45 }, (_, i) => ({ ts: at(20, -(i + 1)), user: i % 2 ? "UCAT" : "UMEMBER", text: `thread chatter ${i}`, thread_ts: decision }));
    const rollback = at(20, -50);
    const broadcast = at(20, -51);
    messages.push(
      ...replies,
      { ts: rollback, user: "UBEN", text: "the rollback window for the cutover is two hours", thread_ts: decision },
      { ts: broadcast, user: "UANA", text: "broadcast: the cutover checklist lives in the wiki", thread_ts: decision, subtype: "thread_broadcast" },
      { ts: at(19), user: "UCAT", text: "<@UCAT> has joined the channel", subtype: "channel_join" },
      { ts: at(18), bot_id: "BDEPLOY", text: "deploy bot: billing cutover build green", subtype: "bot_message" },
      { ts: at(17), user: slack.bot.userId, bot_id: slack.bot.botId, text: "cairn's own note on the cutover" },
      ...Array.from({ length: chatter }, (_, i) => ({ ts: at(15, i), user: "UCAT", text: `standup note ${i}` })),
    );
    const lunch = at(2);
    messages.push({ ts: lunch, user: "UANA", text: "lunch anyone?" });
    slack.seedHistory(channel, messages);
    const keptTs = messages.filter((m) => m.user && m.user !== "UOLD" && m.user !== slack.bot.userId && m.subtype !== "channel_join").map((m) => m.ts);
    return { decision, rollback, broadcast, lunch, kept: keptTs };
  }

  /** Listening turned on by the admin, and the backfill run to its end. */
  async function listenIn(channel: string): Promise<void> {
    expect(await command(ADMIN, channel, "listen on")).toMatch(/^Listening in this channel from now on/);
    await core.learning.drain();
  }

  const link = (channel: string, ts: string, thread?: string) =>
    `https://fake.slack.com/archives/${channel}/p${ts.replace(".", "")}${thread ? `?thread_ts=${thread}&cid=${channel}` : ""}`;

  it("listens when an admin turns it on, says so once, and reads back pages of history with every thread's replies, waiting out a 429", async () => {
    const channel = channelId();
    const seeded = seedChannel(channel);
    // Slack answers fewer than asked: four pages of history, three of the long thread's replies.
    slack.setPageMax("conversations.history", 40);
    slack.setPageMax("conversations.replies", 20);
    slack.rateLimit("conversations.history", 1, 1);

    expect(await command("UANA", channel, "listen on")).toMatch(/Only cairn admins/);
    const groupDm = channelId("G");
    slack.groupDm(groupDm, [ADMIN, "UANA"]);
    expect(await command(ADMIN, groupDm, "listen on", "socket")).toMatch(/never listen in DMs or group DMs/);
    await listenIn(channel);

    const announcements = posts(channel);
    expect(announcements).toHaveLength(1);
    expect(String(announcements[0]!.args.text)).toContain("*cairn now keeps this channel's messages*");
    expect(String(announcements[0]!.args.text)).toContain("/cairn listen exclude-me");

    // People's words within 90 days, each once (the broadcast is in the history and in its thread):
    // not the join message, the bot's post, cairn's own, nor the 200-day-old plan.
    const rows = await kept(channel);
    expect(rows.map((m) => m.platformId).sort()).toEqual([...seeded.kept].sort());
    const byTs = new Map(rows.map((m) => [m.platformId, m]));
    expect(byTs.get(seeded.decision)).toMatchObject({ text: "We decided: the billing cutover happens on March 3rd, after the freeze", link: link(channel, seeded.decision) });
    expect(byTs.get(seeded.decision)!.author?.displayName).toBe("Ana");
    expect(byTs.get(seeded.rollback)).toMatchObject({ link: link(channel, seeded.rollback, seeded.decision) });
    expect(byTs.get(seeded.rollback)!.author?.displayName).toBe("Ben");
    expect(byTs.get(seeded.rollback)!.createdAt.getTime()).toBe(Math.floor(Number(seeded.rollback) * 1000));

    // The first history call was refused with a 429 and made again after its Retry-After.
    const history = slack.calls.filter((c) => c.method === "conversations.history" && c.args.channel === channel);
    expect(history[0]).toMatchObject({ status: 429 });
    const pages = history.filter((c) => c.ok);
    expect(pages).toHaveLength(4);
    expect(pages[0]!.args.cursor).toBeUndefined();
    expect(pages.slice(1).every((c) => typeof c.args.cursor === "string" && c.args.cursor.length > 0)).toBe(true);
    // Back to 90 days before listening started.
    const oldest = Number(pages[0]!.args.oldest) * 1000;
    expect(oldest).toBeGreaterThan(Date.now() - 91 * DAY);
    expect(oldest).toBeLessThan(Date.now() - 89 * DAY);
    const replies = slack.callsTo("conversations.replies").filter((c) => c.args.channel === channel);
    expect(replies.map((c) => c.args.ts)).toEqual([seeded.decision, seeded.decision, seeded.decision]);
    expect(slack.callsTo("conversations.members").filter((c) => c.args.channel === channel)).toHaveLength(1);

    // The admin who asked is told in a DM when it is done.
    expect(posts(slack.dmChannel(ADMIN)).map((c) => String(c.args.text))).toEqual([expect.stringMatching(new RegExp(`^Done reading <#${channel}>: ${seeded.kept.length} messages kept, back to `))]);
    expect(await command("UCAT", channel, "listen status")).toMatch(new RegExp(`on\\*.*\\n• ${seeded.kept.length} messages kept; history read back to .*\\n• 5 channel members can search them`));

    // Off and on again: no second announcement, nothing kept twice.
    expect(await command(ADMIN, channel, "listen off")).toMatch(/^Stopped/);
    await listenIn(channel);
    expect(posts(channel)).toHaveLength(1);
    expect(await kept(channel)).toHaveLength(seeded.kept.length);
  });

  it("answers a member with the message's permalink and author, posted as a Slack link; nothing for a non-member, nor once they leave", async () => {
    const channel = channelId();
    const seeded = seedChannel(channel);
    await listenIn(channel);
    const url = link(channel, seeded.rollback, seeded.decision);

    const { result, posted } = await ask("UMEMBER", "rollback window", `Ben said so on the 20th: [the rollback window is two hours](${url}).`);
    expect(result).toContain(`said in <#${channel}> · ${url}`);
    expect(result).toMatch(/· Ben\] the «rollback» «window» for the cutover is two hours/);
    // The model's Markdown link, as Slack mrkdwn (its & escaped, as Slack wants in text).
    expect(posted.at(-1)).toBe(`Ben said so on the 20th: <${url.replace("&", "&amp;")}|the rollback window is two hours>.`);

    expect((await ask("UOUTSIDER", "rollback window")).result).toMatch(NOTHING);

    // Leaving the channel hides it at the next search (Socket Mode), joining again shows it (HTTP).
    await deliver(slack.memberLeft("UMEMBER", channel), "UMEMBER", "socket");
    expect((await ask("UMEMBER", "rollback window")).result).toMatch(NOTHING);
    await deliver(slack.memberJoined("UMEMBER", channel, { inviter: "UANA" }), "UMEMBER");
    expect((await ask("UMEMBER", "rollback window")).result).toContain(url);
    // Someone new joining can search it at once.
    await deliver(slack.memberJoined("UOUTSIDER", channel), "UOUTSIDER");
    expect((await ask("UOUTSIDER", "rollback window")).result).toContain(url);
  });

  it("keeps what people say live (posts, thread replies, mentions that are also answered), and follows edits and deletions", async () => {
    const channel = channelId();
    const seeded = seedChannel(channel, 5);
    await listenIn(channel);

    const staging = await say("UANA", channel, "the staging database moves to eu-west on Friday");
    const reply = await say("UBEN", channel, "dry run of the cutover on Tuesday", { thread: seeded.decision, via: "socket" });

    // A mention is a turn, answered in its thread as before, and kept once though Slack sends it twice.
    anthropic.enqueue({ text: "On Tuesday." });
    const mentionText = `<@${slack.bot.userId}> when is the cutover dry run?`;
    const mention = slack.seedMessage({ channel, user: "UCAT", text: mentionText });
    const post = { channel, user: "UCAT", text: mentionText, ts: mention, event_ts: mention };
    // Both copies are handed to the core (over HTTP and over the socket); the store keeps one.
    await Promise.all([deliver({ type: "message", channel_type: "channel", ...post }, mention), deliver({ type: "app_mention", ...post }, mention, "socket")]);
    await waitUntil("both copies observed", () => logs.find("channel event observed", (l) => l.id === mention && l.team === team).length === 2, 15_000);
    await logged("reply posted", (l) => l.ts === mention);
    expect(posts(channel).filter((c) => c.args.thread_ts === mention).map((c) => c.args.text)).toEqual(["On Tuesday."]);

    const rows = new Map((await kept(channel)).map((m) => [m.platformId, m]));
    expect(rows.get(staging)).toMatchObject({ text: "the staging database moves to eu-west on Friday", link: link(channel, staging) });
    expect(rows.get(reply)).toMatchObject({ link: link(channel, reply, seeded.decision) });
    expect(rows.get(mention)).toMatchObject({ text: "when is the cutover dry run?", link: link(channel, mention) });
    expect((await kept(channel)).filter((m) => m.platformId === mention)).toHaveLength(1);
    expect((await ask("UMEMBER", "dry run")).result).toContain(link(channel, reply, seeded.decision));

    // An edit: found by its new words, not its old ones.
    await deliver(slack.messageChanged(channel, staging, "the staging database moves to us-east on Monday"), staging, "socket");
    const edited = (await ask("UMEMBER", "staging database")).result;
    expect(edited).toContain("us-east");
    expect(edited).not.toContain("eu-west");
    expect((await ask("UMEMBER", "eu-west")).result).toMatch(NOTHING);

    // A deletion: gone.
    await deliver(slack.messageDeleted(channel, staging), staging);
    expect((await ask("UMEMBER", "staging database")).result).toMatch(NOTHING);
    expect(rows.has(seeded.lunch)).toBe(true);
    expect((await kept(channel)).some((m) => m.platformId === staging)).toBe(false);
  });

  it("leaves out the messages of someone who opts out or is forgotten, and keeps nothing new once listening is off", async () => {
    const channel = channelId();
    const seeded = seedChannel(channel, 5);
    await listenIn(channel);
    expect((await ask("UMEMBER", "rollback window")).result).toContain(seeded.rollback.replace(".", ""));

    // Ben leaves his messages out: those kept go at once, and new ones are not kept.
    expect(await command("UBEN", channel, "listen exclude-me", "socket")).toMatch(/removed 1 of your messages/);
    expect((await ask("UMEMBER", "rollback window")).result).toMatch(NOTHING);
    const later = await say("UBEN", channel, "another pineapple decision");
    expect((await kept(channel)).some((m) => m.platformId === later)).toBe(false);
    expect(await command("UBEN", channel, "listen include-me")).toMatch(/kept again/);
    const again = await say("UBEN", channel, "pineapple follow-up");
    expect((await kept(channel)).some((m) => m.platformId === again)).toBe(true);

    // Ana asks cairn to forget her: her kept messages go with the rest.
    const anaDm = `DUANA${team.slice(2)}`;
    expect(await command("UANA", anaDm, "forget me")).toMatch(/confirm/);
    expect(await command("UANA", anaDm, "forget me confirm")).toMatch(/3 messages kept from channels/);
    expect((await kept(channel)).filter((m) => m.author?.externalId === "UANA")).toHaveLength(0);
    expect((await ask("UMEMBER", "billing decided March")).result).not.toContain("We decided");

    // Off: nothing new is kept; what was kept stays searchable by members.
    expect(await command(ADMIN, channel, "listen off")).toMatch(/^Stopped/);
    const secret = await say("UCAT", channel, "secret zebra roadmap");
    expect((await kept(channel)).some((m) => m.platformId === secret)).toBe(false);
    expect((await ask("UMEMBER", "zebra")).result).toMatch(NOTHING);
    expect((await ask("UMEMBER", "standup note")).result).toContain("standup note");
  });

  it("goes on with a backfill cut short from its stored cursor, keeping each message once, and tells the admin how far it got", async () => {
    const channel = channelId();
    // Over 2,000 messages: twelve pages of 200, and a progress DM on the way.
    const seeded = seedChannel(channel, 2_300);
    let historyCalls = 0;
    slack.failNext("conversations.history", "internal_error", 1, (args) => args.channel === channel && ++historyCalls === 3);

    expect(await command(ADMIN, channel, "listen on")).toMatch(/^Listening/);
    await core.learning.drain();
    const ws = await workspace();
    const cut = await getDb().prisma.channelListen.findUniqueOrThrow({ where: { workspaceId_channelId: { workspaceId: ws.id, channelId: channel } } });
    // Two pages kept, the third refused: the cursor of the third is stored.
    const history = () => slack.calls.filter((c) => c.method === "conversations.history" && c.args.channel === channel);
    expect(history().map((c) => c.ok)).toEqual([true, true, false]);
    expect(cut).toMatchObject({ backfill: "running", cursor: history()[2]!.args.cursor });
    expect(cut.backfilled).toBe((await kept(channel)).length);
    // 400 messages read, one of them cairn's announcement (the newest), not kept.
    expect(cut.backfilled).toBe(399);

    // The job is retried after its backoff (made due now), from the stored cursor.
    await getDb().prisma.job.updateMany({ where: { kind: "listen_backfill", status: "queued" }, data: { runAt: new Date() } });
    await core.learning.drain();
    const calls = history();
    expect(calls).toHaveLength(13);
    expect(calls[3]!.args.cursor).toBe(calls[2]!.args.cursor);
    expect(calls.slice(1).every((c) => c.args.cursor !== undefined)).toBe(true);
    const done = await getDb().prisma.channelListen.findUniqueOrThrow({ where: { id: cut.id } });
    expect(done).toMatchObject({ backfill: "done", backfilled: seeded.kept.length, cursor: null });
    const rows = await kept(channel);
    expect(rows).toHaveLength(seeded.kept.length);
    expect(new Set(rows.map((m) => m.platformId)).size).toBe(seeded.kept.length);

    const told = posts(slack.dmChannel(ADMIN)).map((c) => String(c.args.text));
    expect(told).toEqual([
      expect.stringMatching(new RegExp(`^Reading <#${channel}>: 2,199 messages kept so far, back to \\d{4}-\\d{2}-\\d{2}\\.$`)),
      expect.stringMatching(new RegExp(`^Done reading <#${channel}>: ${seeded.kept.length.toLocaleString("en-US")} messages kept, back to `)),
    ]);
  });

  it("calls only Web API methods whose scopes the manifest declares", () => {
    for (const c of slack.calls) methodsSeen.add(c.method);
    expect([...methodsSeen]).toEqual(expect.arrayContaining(["conversations.history", "conversations.replies", "conversations.members", "conversations.info"]));
    for (const method of methodsSeen) expect(Object.keys(METHOD_SCOPES), method).toContain(method);
  });
});
