/**
 * Channel knowledge on Discord end to end: the real discord.js client (gateway over a real
 * WebSocket, REST over real HTTP) against the fake Discord on 127.0.0.1, the real Core on the test
 * databases (SQLite and PostgreSQL), the real Anthropic SDK against the fake model server.
 *
 * Each test has a guild of its own (its own workspace), shaped alike: #general, open to everyone,
 * and #plans, which @everyone may not view and the planners role may (a role overwrite), and whose
 * no-history role may view but not read its history; in #plans an active thread, an archived one
 * and a private one. Who finds what is decided by those roles and overwrites, read from the fake as
 * Discord would hand them out; people ask in #general, the model searches with session_search.
 *
 * Nothing sleeps: a test waits until the client has received a dispatch and the adapter has
 * finished every handler it started, or for a post it expects, then looks.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore, toolResults } from "../support/agent.ts";
import { settledOn, type DispatchData } from "../support/discord-settled.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { PERMISSIONS, snowflake, startFakeDiscord, waitFor, type ApiMessage, type FakeDiscord, type FakeGuild, type FakeUser } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { knowledgeKey } from "../../src/knowledge/store.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";

const DAY = 24 * 60 * 60_000;
const person = (username: string, globalName: string): FakeUser => ({ id: snowflake(), username, globalName });
/** The guild's owner (Discord gives the owner every permission): nobody the tests are about. */
const owner = person("owner", "Olivia");
/** The cairn admin (CAIRN_ADMINS=discord:<id>), a planner. */
const ada = person("ada", "Ada");
/** A planner who asks. */
const alice = person("alice", "Alice");
/** In the guild without the planners role: #plans is hidden from him. */
const bob = person("bob", "Bob");
/** A planner with the no-history role: she may view #plans but not read its history. */
const carol = person("carol", "Carol");
/** Planners who talk in #plans. */
const dana = person("dana", "Dana");
const erin = person("erin", "Erin");
const deployBot: FakeUser = { id: snowflake(), username: "deploybot", bot: true };

interface KnowledgeGuild extends FakeGuild {
  general: string;
  plans: string;
  /** Threads of #plans: active, archived (public), private. */
  details: string;
  retro: string;
  hr: string;
  planners: string;
  noHistory: string;
}

function knowledgeGuild(i: number): KnowledgeGuild {
  const [id, general, plans, details, retro, hr, planners, noHistory] = Array.from({ length: 8 }, () => snowflake());
  return {
    id: id!,
    name: `Guild ${i}`,
    general: general!,
    plans: plans!,
    details: details!,
    retro: retro!,
    hr: hr!,
    planners: planners!,
    noHistory: noHistory!,
    channels: [
      { id: general!, name: "general" },
      {
        id: plans!,
        name: "plans",
        overwrites: [
          { id: id!, type: "role", deny: PERMISSIONS.viewChannel },
          { id: planners!, type: "role", allow: PERMISSIONS.viewChannel },
          { id: noHistory!, type: "role", deny: PERMISSIONS.readMessageHistory },
        ],
      },
    ],
    threads: [
      { id: details!, name: "cutover details", parentId: plans! },
      { id: retro!, name: "retro", parentId: plans!, archived: true },
      { id: hr!, name: "hr", parentId: plans!, private: true },
    ],
    roles: [
      { id: planners!, name: "planners" },
      { id: noHistory!, name: "no-history" },
    ],
    members: [owner, ada, alice, bob, carol, dana, erin, deployBot],
    memberRoles: { [ada.id]: [planners!], [alice.id]: [planners!], [carol.id]: [planners!, noHistory!], [dana.id]: [planners!], [erin.id]: [planners!] },
  };
}

const GUILDS = Array.from({ length: 6 }, (_, i) => knowledgeGuild(i));

forEachDatabase("discord channel knowledge end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  let used = 0;
  const mention = () => `<@${discord.bot.id}>`;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: GUILDS });
    core = makeCore(getDb(), anthropic, { bundledSkillsDir: null, access: accessPolicy({ admins: [`discord:${ada.id}`], users: [], channels: [], roles: [] }) });
    await core.start();
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, {
      typingIntervalMs: 40,
      interactionDeferMs: 2_000,
      shutdownGraceMs: 5_000,
    });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault({ text: "ok" });
  });

  const nextGuild = (): KnowledgeGuild => {
    const g = GUILDS[used++];
    if (!g) throw new Error("not enough test guilds");
    return g;
  };

  /** Runs `send`, then waits until the client got its dispatch `t` and every handler it started (the channel event too) is done. */
  const settled = <T>(t: string, pick: (d: DispatchData, sent: T) => boolean, send: () => T): Promise<T> => settledOn([adapter], t, pick, send);
  const say = (channelId: string, author: FakeUser, content: string): Promise<ApiMessage> =>
    settled("MESSAGE_CREATE", (d, sent) => d["id"] === sent.id, () => discord.sendMessage({ channelId, author, content }));

  /** `/cairn <subcommand>` as `user` in `channelId`: the answer's text once every handler is done. */
  const command = async (user: FakeUser, channelId: string, subcommand: string, options: Record<string, string> = {}): Promise<string> => {
    const id = await settled("INTERACTION_CREATE", (d, sent) => d["id"] === sent, () => discord.sendCommand({ user, channelId, subcommand, options }));
    const answer = discord.posts.filter((p) => p.interactionId === id && p.content !== "").at(-1);
    if (!answer) throw new Error(`no answer to /cairn ${subcommand}`);
    return answer.content;
  };

  /** The admin's DMs about a channel's backfill. */
  const backfillDms = (channel: string): string[] =>
    discord.posts.filter((p) => p.channelId === discord.dmChannel(ada) && p.via === "channel" && p.content.includes(`<#${channel}>`)).map((p) => p.content);

  /** `/cairn listen on` by the admin in #plans, then the backfill run to its end. */
  const listenOn = async (g: KnowledgeGuild): Promise<void> => {
    const before = backfillDms(g.plans).length;
    expect(await command(ada, g.plans, "listen", { action: "on" })).toMatch(/^Listening in this channel from now on/);
    await core.learning.drain();
    await waitFor(() => backfillDms(g.plans).length > before, "the backfill's last DM");
  };

  /** What cairn keeps of the guild's #plans: its rows, oldest first. */
  const kept = (g: KnowledgeGuild) =>
    getDb().prisma.message.findMany({ where: { role: "channel", conversation: { key: knowledgeKey("discord", g.id, g.plans) } }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });

  /**
   * `who` asks cairn in #general; the model searches for `query` and answers `answer`. The search's
   * result (what the model was given) and the answer as posted.
   */
  const ask = async (g: KnowledgeGuild, who: FakeUser, query: string, answer = "nothing more"): Promise<{ found: string; posted: string }> => {
    anthropic.enqueue({ toolUse: [{ name: "session_search", input: { query } }] }, { text: answer });
    const question = await say(g.general, who, `${mention()} what do we know about ${query}?`);
    const first = await waitFor(() => discord.posts.find((p) => p.replyTo === question.id), `cairn's answer to ${who.username}`);
    await adapter.idle();
    const results = toolResults(anthropic.lastRequest()!);
    expect(results).toHaveLength(1);
    return { found: results[0]!.content, posted: discord.message(first.id)?.content ?? first.content };
  };
  const NOTHING = /^No earlier messages match/;

  /** A few messages of #plans from before listening: a decision, chatter, one in each thread. */
  const seedFew = (g: KnowledgeGuild) => {
    const now = Date.now();
    const [decision] = discord.seedMessages(g.plans, [
      { author: dana, content: "We decided: the billing cutover happens on March 3rd, after the freeze", at: new Date(now - 10 * DAY) },
      { author: erin, content: "lunch anyone?", at: new Date(now - 2 * DAY) },
    ]);
    const [runbook] = discord.seedMessages(g.details, [{ author: erin, content: "the cutover runbook lives in the wiki under billing", at: new Date(now - 3 * DAY) }]);
    discord.seedMessages(g.hr, [{ author: dana, content: "private salary talk about the billing team", at: new Date(now - 4 * DAY) }]);
    return { decision: decision!, runbook: runbook! };
  };
  const linkOf = (g: KnowledgeGuild, channel: string, m: { id: string }) => `https://discord.com/channels/${g.id}/${channel}/${m.id}`;

  it("listen on: announced once, refused to non-admins, reads back pages of history and the public threads, waiting out a 429, and DMs the admin", async () => {
    const g = nextGuild();
    const now = Date.now();
    const routine = Array.from({ length: 248 }, (_, i) => ({ author: i % 2 ? dana : erin, content: `routine standup note number ${i}`, at: new Date(now - DAY - i * 0.3 * DAY) }));
    const seeded = discord.seedMessages(g.plans, [
      { author: dana, content: "ancient kumquat migration plan", at: new Date(now - 200 * DAY) },
      ...routine,
      { author: dana, content: "We decided: the billing cutover happens on March 3rd, after the freeze", at: new Date(now - 10 * DAY) },
      { author: deployBot, content: "deploy bot: billing cutover build green", at: new Date(now - 9 * DAY) },
      { author: erin, content: "billing cutover alert from the status page", at: new Date(now - 8 * DAY), webhookId: snowflake() },
      { author: erin, content: "", type: 7, at: new Date(now - 5 * DAY) },
    ]);
    const decision = seeded.find((m) => m.content.startsWith("We decided"))!;
    const [runbook] = discord.seedMessages(g.details, [{ author: erin, content: "the cutover runbook lives in the wiki under billing", at: new Date(now - 3 * DAY) }]);
    const [retro] = discord.seedMessages(g.retro, [{ author: dana, content: "retro notes: the pineapple incident", at: new Date(now - 20 * DAY) }]);
    discord.seedMessages(g.hr, [{ author: dana, content: "private salary talk about the billing team", at: new Date(now - 4 * DAY) }]);
    const history = new RegExp(`^/channels/${g.plans}/messages$`);
    discord.rateLimitNext({ method: "GET", path: history }, 1, 0.05);

    expect(await command(alice, g.plans, "listen", { action: "on" })).toMatch(/Only cairn admins/);
    await listenOn(g);

    // Announced in the channel, once, in plain words.
    const announcements = discord.posts.filter((p) => p.channelId === g.plans && p.via === "channel");
    expect(announcements).toHaveLength(1);
    expect(announcements[0]!.content).toContain("cairn now keeps this channel's messages");
    expect(announcements[0]!.content).toContain("/cairn listen exclude-me");

    // Pages of 100, newest first, each continuing before the oldest of the last; the first was
    // answered 429 and asked again once its retry_after had passed.
    const pages = discord.calls("GET", history);
    // 255 messages (the seeded ones, the announcement, the command's answer): three pages.
    expect(pages.map((c) => c.status)).toEqual([429, 200, 200, 200]);
    expect(pages[0]!.query).toEqual({ limit: "100" });
    expect(pages[1]!.query).toEqual({ limit: "100" });
    expect(pages[2]!.query.before).toBeDefined();
    expect(BigInt(pages[3]!.query.before!)).toBeLessThan(BigInt(pages[2]!.query.before!));
    // Then the active thread and the archived one; the private thread is never read.
    expect(discord.calls("GET", new RegExp(`^/channels/${g.details}/messages$`))).toHaveLength(1);
    expect(discord.calls("GET", new RegExp(`^/channels/${g.retro}/messages$`))).toHaveLength(1);
    expect(discord.calls("GET", new RegExp(`^/channels/${g.hr}/messages$`))).toHaveLength(0);

    // People's messages within 90 days, the threads' among them: not the 200-day-old one, the bot,
    // the webhook, the join notice or the private thread.
    const rows = await kept(g);
    expect(rows).toHaveLength(251);
    const byId = new Map(rows.map((r) => [r.platformId, r]));
    expect(byId.get(decision.id)).toMatchObject({ text: decision.content, link: linkOf(g, g.plans, decision) });
    expect(byId.get(runbook!.id)?.link).toBe(linkOf(g, g.details, runbook!));
    expect(byId.has(retro!.id)).toBe(true);
    for (const m of seeded.filter((x) => /kumquat|deploy bot|status page/.test(x.content) || x.type === 7)) expect(byId.has(m.id)).toBe(false);
    expect(rows.some((r) => r.text.includes("salary"))).toBe(false);

    // The admin is told in a DM when it is done.
    expect(backfillDms(g.plans)).toEqual([expect.stringMatching(new RegExp(`^Done reading <#${g.plans}>: 251 messages kept, back to \\d{4}-\\d{2}-\\d{2}\\.`))]);

    // Listening is per channel: `listen` in one of its threads is about #plans. Off and on again
    // does not announce twice, and keeps nothing twice.
    expect(await command(ada, g.details, "listen", { action: "on" })).toMatch(/already listen in this channel/);
    expect(await command(alice, g.plans, "listen", { action: "status" })).toMatch(/\*\*Listening here: on\*\*[\s\S]*251 messages kept[\s\S]*everyone who can read this channel now can search them/);
    expect(await command(ada, g.plans, "listen", { action: "off" })).toMatch(/^Stopped/);
    await listenOn(g);
    expect(discord.posts.filter((p) => p.channelId === g.plans && p.via === "channel")).toHaveLength(1);
    expect(await kept(g)).toHaveLength(251);

    // DMs are never listened in.
    expect(await adapter.channelKind!(g.id, discord.dmChannel(alice))).toBe("dm");
    expect(await adapter.channelKind!(g.id, g.details)).toBe("channel");
    expect(await command(ada, discord.dmChannel(ada), "listen", { action: "on" })).toMatch(/never listen in DMs/);
  });

  it("answers a reader's question from the channel: the search gives the message's URL and author, the answer links it", async () => {
    const g = nextGuild();
    const { decision, runbook } = seedFew(g);
    await listenOn(g);
    const url = linkOf(g, g.plans, decision);
    const { found, posted } = await ask(g, alice, "billing cutover", `Dana decided it 10 days ago: [the cutover is on March 3rd](${url}).`);
    expect(found).toContain(url);
    expect(found).toMatch(/said in <#\d+> · https:\/\/discord\.com\/channels\/\d+\/\d+\/\d+ · Dana\] We decided: the «billing» «cutover» happens on March 3rd/);
    // The thread's message is found too, with the link into its thread.
    expect(found).toContain(linkOf(g, g.details, runbook));
    expect(found).not.toContain("salary");
    expect(posted).toBe(`Dana decided it 10 days ago: [the cutover is on March 3rd](${url}).`);
  });

  it("finds a channel's messages only for people its roles and overwrites let read it, as they are at each search", async () => {
    const g = nextGuild();
    seedFew(g);
    await listenOn(g);
    const finds = async (who: FakeUser): Promise<boolean> => !NOTHING.test((await ask(g, who, "billing cutover")).found);

    expect(await finds(alice)).toBe(true);
    // @everyone may not view #plans (a role overwrite) and Bob has no role that may.
    expect(await finds(bob)).toBe(false);
    // Carol may view it, but her no-history role's overwrite denies Read Message History.
    expect(await finds(carol)).toBe(false);
    // Alice loses the planners role: her next search finds nothing of #plans.
    discord.setMemberRoles(g.id, alice, []);
    expect(await finds(alice)).toBe(false);
    // An overwrite for Bob himself (CHANNEL_UPDATE) lets him read it.
    await settled("CHANNEL_UPDATE", (d) => d["id"] === g.plans, () =>
      discord.setOverwrites(g.plans, [
        { id: g.id, type: "role", deny: PERMISSIONS.viewChannel },
        { id: g.planners, type: "role", allow: PERMISSIONS.viewChannel },
        { id: bob.id, type: "member", allow: PERMISSIONS.viewChannel },
      ]),
    );
    expect(await finds(bob)).toBe(true);
    // Leaving the guild: nothing.
    discord.removeMember(g.id, bob);
    expect(await finds(bob)).toBe(false);
    // The channel deleted: nobody finds what was kept of it.
    expect(await finds(dana)).toBe(true);
    await settled("CHANNEL_DELETE", (d) => d["id"] === g.plans, () => discord.deleteChannel(g.plans));
    expect(await finds(dana)).toBe(false);
  });

  it("keeps new messages live, in threads and turns too; an edit is found by its new words only; deletions go", async () => {
    const g = nextGuild();
    seedFew(g);
    await listenOn(g);
    const before = (await kept(g)).length;

    const staging = await say(g.plans, erin, "the staging database moves to eu-west on Friday");
    const inThread = await say(g.details, dana, "the cutover dry run is on Thursday");
    const turn = await say(g.plans, alice, `${mention()} when is the freeze?`);
    expect(discord.posts.find((p) => p.replyTo === turn.id)?.content).toBe("ok");
    // Not kept: a private thread, a bot, a channel not listened in.
    await say(g.hr, dana, "private raise numbers");
    await say(g.plans, deployBot, "deploy finished");
    await say(g.general, erin, "general zebra chatter");

    const rows = new Map((await kept(g)).map((r) => [r.platformId, r]));
    expect(rows.size).toBe(before + 3);
    expect(rows.get(staging.id)).toMatchObject({ text: staging.content, link: linkOf(g, g.plans, staging) });
    expect(rows.get(inThread.id)).toMatchObject({ text: inThread.content, link: linkOf(g, g.details, inThread) });
    // A turn is kept as the channel read it, and answered as ever.
    expect(rows.get(turn.id)?.text).toBe("@cairn when is the freeze?");
    expect((await ask(g, alice, "staging database")).found).toContain(linkOf(g, g.plans, staging));

    await settled("MESSAGE_UPDATE", (d) => d["id"] === staging.id, () => discord.editMessage(staging.id, "the staging database moves to us-east on Monday"));
    const edited = (await ask(g, alice, "staging database")).found;
    expect(edited).toContain("us-east");
    expect(edited).not.toContain("eu-west");
    expect((await ask(g, alice, "eu-west")).found).toMatch(NOTHING);
    // An edit in a thread reaches the message kept under the channel.
    await settled("MESSAGE_UPDATE", (d) => d["id"] === inThread.id, () => discord.editMessage(inThread.id, "the cutover dry run moved to Wednesday"));
    expect((await kept(g)).find((r) => r.platformId === inThread.id)?.text).toBe("the cutover dry run moved to Wednesday");

    await settled("MESSAGE_DELETE", (d) => d["id"] === staging.id, () => discord.deleteMessages(g.plans, [staging.id]));
    expect((await ask(g, alice, "staging database")).found).toMatch(NOTHING);
    // A moderator's purge (bulk) and a deletion in a thread.
    const purge = [await say(g.plans, erin, "mango one"), await say(g.plans, dana, "mango two")];
    await settled("MESSAGE_DELETE_BULK", (d) => d["channel_id"] === g.plans, () => discord.deleteMessages(g.plans, purge.map((m) => m.id)));
    await settled("MESSAGE_DELETE", (d) => d["id"] === inThread.id, () => discord.deleteMessages(g.details, [inThread.id]));
    const left = new Set((await kept(g)).map((r) => r.platformId));
    for (const m of [staging, inThread, ...purge]) expect(left.has(m.id)).toBe(false);
    expect(left.has(turn.id)).toBe(true);
  });

  it("listen exclude-me and forget me remove a person's messages; listen off stops keeping", async () => {
    const g = nextGuild();
    seedFew(g);
    await listenOn(g);

    // Dana leaves her messages out: the one kept goes, and her next ones are not kept.
    expect(await command(dana, g.plans, "listen", { action: "exclude-me" })).toMatch(/removed 1 of your messages/);
    expect((await ask(g, alice, "billing cutover decided")).found).not.toContain("We decided");
    const hers = await say(g.plans, dana, "another pineapple decision");
    expect((await kept(g)).some((r) => r.platformId === hers.id)).toBe(false);
    await command(dana, g.plans, "listen", { action: "include-me" });
    const again = await say(g.plans, dana, "pineapple follow-up");
    expect((await kept(g)).some((r) => r.platformId === again.id)).toBe(true);

    // Forget me: Erin's kept messages (the chatter, the thread's runbook) go with the rest of what cairn holds of her.
    expect(await command(erin, g.general, "forget", { what: "me" })).toContain("forget me confirm");
    expect(await command(erin, g.general, "forget", { what: "me confirm" })).toMatch(/2 messages kept from channels/);
    expect((await ask(g, alice, "runbook wiki")).found).toMatch(NOTHING);

    // Off: nothing new is kept; what was kept stays searchable by its readers.
    expect(await command(ada, g.plans, "listen", { action: "off" })).toMatch(/^Stopped/);
    const after = await say(g.plans, alice, "secret zebra roadmap");
    expect((await kept(g)).some((r) => r.platformId === after.id)).toBe(false);
    expect((await ask(g, alice, "zebra")).found).toMatch(NOTHING);
    expect((await ask(g, alice, "pineapple")).found).toContain(linkOf(g, g.plans, again));
  });
});
