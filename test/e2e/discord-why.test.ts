/**
 * "Why this answer?" on Discord end to end: the message context-menu command (an application
 * command of type 3 over the fake gateway) against the real discord.js client and the real Core on
 * both databases. The answer is ephemeral (flag 64) to whoever picked it, and explains THAT reply
 * (not the channel's last): its rules, lessons, facts, skills and the messages its search returned,
 * and nothing the asker may not see.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeGuild, type FakeUser, type PostedMessage } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { WHY_MENU } from "../../src/platforms/discord/commands/why-menu.ts";
import { NOT_AN_ANSWER } from "../../src/commands/why.ts";
import { dmHits, drawingTurn, expectWhy, seedWhy, storedTrace } from "../support/why.ts";

const person = (username: string, globalName: string): FakeUser => ({ id: snowflake(), username, globalName });
const alice = person("alice", "Alice");
const bob = person("bob", "Bob");
const GUILDS = Array.from({ length: 4 }, (_, i) => {
  const [a, b] = [snowflake(), snowflake()];
  return { id: snowflake(), name: `Guild ${i}`, a, b, channels: [{ id: a, name: "alpha" }, { id: b, name: "beta" }], members: [alice, bob] } satisfies FakeGuild & { a: string; b: string };
});

forEachDatabase("discord why this answer", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  let used = 0;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: GUILDS });
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0 } });
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });

  /** Sends a mention of cairn and waits until its answer is posted and recorded; the answer's message id. */
  const ask = async (channelId: string, author: FakeUser, text: string): Promise<string> => {
    const sent = discord.sendMessage({ channelId, author, content: `<@${discord.bot.id}> ${text}` });
    const answer = await waitFor(() => discord.posts.find((p) => p.replyTo === sent.id), `the answer to "${text}"`);
    await adapter.idle();
    await waitFor(async () => (await getDb().prisma.delivery.findFirst({ where: { platformId: answer.id } })) ?? undefined, "its delivery");
    return answer.id;
  };
  /** `user` picks Why this answer? on `messageId`: the answer's parts, each checked ephemeral. */
  const why = async (user: FakeUser, messageId: string): Promise<string> => {
    const id = discord.sendMessageCommand({ user, messageId, name: WHY_MENU });
    await waitFor(() => discord.posts.some((p) => p.interactionId === id), "the why answer");
    await adapter.idle();
    const parts: PostedMessage[] = discord.posts.filter((p) => p.interactionId === id);
    for (const p of parts) expect(p.flags & 64).toBe(64);
    return parts.map((p) => p.content).join("\n");
  };
  const replyIdOf = async (id: string) => (await getDb().prisma.delivery.findFirstOrThrow({ where: { platformId: id } })).messageId;

  it("explains the reply it is picked on, ephemerally: Alice sees all of it, Bob what he may see", async () => {
    const g = GUILDS[used++]!;
    const tag = uniqueId("w").toLowerCase();
    const at = (user: FakeUser) => core.history.resolve({ platform: "discord", workspace: { externalId: g.id, name: g.name }, author: { externalId: user.id }, channel: { externalId: g.a, isDm: false }, threadId: null, messageId: "", text: "", sentAt: new Date() });
    const seed = await seedWhy(core, getDb(), await at(alice), await at(bob), tag);
    anthropic.setDefault({ text: "Noted." });
    // Earlier, in another channel: a message the search finds, which both may see.
    await ask(g.b, bob, `the pnpm lockfile is committed ${tag}`);
    // Bob speaks first here: his profile is in the session's snapshot too, never in Alice's prompt.
    await ask(g.a, bob, "hello");
    anthropic.enqueue(drawingTurn(seed, `pnpm ${tag}`), { text: "Install them with pnpm." });
    const first = await ask(g.a, alice, "how do we install packages, npm or pnpm?");
    anthropic.enqueue({ text: "Tuesdays." });
    const second = await ask(g.a, alice, "and when do we ship?");

    const trace = await storedTrace(getDb(), await replyIdOf(first));
    const dms = await dmHits(getDb(), trace);
    const asBob = await why(bob, first);
    expect(asBob).toContain(`**Why this answer** (reply ${await replyIdOf(first)})`);
    expectWhy(asBob, "bob", seed, trace, dms);
    expectWhy(await why(alice, first), "alice", seed, trace, dms);

    // The channel's last answer drew on no tool: picked on it, no search or skill is listed.
    const last = await why(alice, second);
    expect(last).toContain(`(reply ${await replyIdOf(second)})`);
    expect(last).toContain("It called no tools.");
    expect(last).not.toContain("Searches it ran");
    expect(last).not.toContain(seed.teamSkill);
    // Picked on a person's message: not an answer of cairn's.
    const mine = discord.sendMessage({ channelId: g.a, author: bob, content: "just chatting" });
    await adapter.idle();
    expect(await why(alice, mine.id)).toBe(NOT_AN_ANSWER);
  });

  it("answers @cairn why by DM to the asker alone, with what the channel's last answer drew on, and posts nothing in the channel", async () => {
    const g = GUILDS[used++]!;
    anthropic.setDefault({ text: "Noted." });
    anthropic.enqueue({ toolUse: [{ name: "skills_list", input: {} }] }, { text: "We ship on Tuesdays." });
    await ask(g.a, alice, "when do we ship?");
    const requests = anthropic.requests.length;
    const inChannel = discord.posts.filter((p) => p.channelId === g.a).length;
    discord.sendMessage({ channelId: g.a, author: bob, content: `<@${discord.bot.id}> why?` });
    const dm = discord.dmChannel(bob);
    const answer = await waitFor(() => discord.posts.find((p) => p.channelId === dm && p.content.includes("Why my last answer here")), "the why answer in Bob's DMs");
    await adapter.idle();
    expect(answer.content).toContain("Tools called: 1.");
    // A command, not a turn: the model was not asked, and nothing was posted in the channel.
    expect(anthropic.requests).toHaveLength(requests);
    expect(discord.posts.filter((p) => p.channelId === g.a)).toHaveLength(inChannel);
    expect(discord.posts.filter((p) => p.channelId === discord.dmChannel(alice) && p.content.includes("Why my last answer"))).toEqual([]);
  });
});
