/**
 * A database outage as cairn lives through it, in one process: PostgreSQL behind a proxy the test
 * makes refuse or hang (test/support/tcp-proxy.ts), the real Slack adapter in HTTP and Socket Mode
 * against the fake Slack, the real Discord adapter against the fake Discord, and the inbound
 * journal on disk. What people sent meanwhile is kept, acknowledged, told about once per
 * conversation, and answered once storage is back, once each, in order.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { freshPostgres, postgresSuite, uniqueId } from "../support/db.ts";
import { TEST_SETTINGS } from "../support/agent.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { echoToken, startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { eventCallback, postSigned, startFakeSlack, waitUntil, type FakeSlack } from "../fakes/slack.ts";
import { snowflake, startFakeDiscord, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { startBothModes, type BothModes } from "../support/slack-modes.ts";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { Core } from "../../src/app/core.ts";
import { createModelClient } from "../../src/agent/model.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { FileJournal } from "../../src/journal/file-journal.ts";
import { STORAGE_DOWN_NOTICE } from "../../src/ground/replies.ts";
import { toMrkdwn } from "../../src/platforms/slack/mrkdwn.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { startSlack } from "../../src/platforms/slack/adapter.ts";
import { fakeSlackSettings } from "../support/slack-modes.ts";
import { SIGNING_SECRET } from "../fakes/slack.ts";
import { parsePrometheusText, sumOf } from "../support/prom-text.ts";

const TOKEN = /tok-[a-z0-9]+/;
const answer = (token: string | null) => `answer to ${token ?? "nothing"}`;
const SLACK_NOTICE = toMrkdwn(STORAGE_DOWN_NOTICE);
const GUILD = snowflake();
const GENERAL = snowflake();
const alice: FakeUser = { id: snowflake(), username: "alice", globalName: "Alice" };

postgresSuite()("a database outage: messages kept in the journal, answered when storage is back", () => {
  let pgdb: Awaited<ReturnType<typeof freshPostgres>>;
  let proxy: TcpProxy;
  let db: Database;
  let direct: pg.Client;
  let dir: string;
  let journal: FileJournal;
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let core: Core;
  let modes: BothModes;
  let discordAdapter: DiscordAdapter;
  let team: string;

  const model = () => createModelClient({ apiKey: anthropic.apiKey, baseURL: anthropic.url, maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 });
  const dm = (user: string, token: string) => {
    const ts = slack.nextTs();
    return { type: "message", channel: `D${user}${team.slice(2)}`, channel_type: "im", user, text: `${token} what now?`, ts, event_ts: ts };
  };
  const sendHttp = (event: Record<string, unknown>) => postSigned(modes.eventsUrl, eventCallback(team, event));
  const slackPosts = (channel: string) => slack.botPosts().filter((p) => p.channel === channel && !p.deleted);
  const answersIn = (posts: { text: string }[]) => posts.map((p) => p.text).filter((t) => t.startsWith("answer to"));
  /** Rows of the person's messages, read past the proxy. */
  const storedUserMessages = async (ids: readonly string[]) =>
    (await direct.query<{ platformId: string }>(`SELECT "platformId" FROM "Message" WHERE role = 'user' AND "platformId" = ANY($1)`, [ids])).rows.map((r) => r.platformId);

  beforeAll(async () => {
    pgdb = await freshPostgres();
    proxy = await startTcpProxy({ host: "127.0.0.1", port: Number(new URL(pgdb.url).port || 5432) });
    db = await openDatabase(proxy.through(pgdb.url));
    direct = new pg.Client({ connectionString: pgdb.url });
    await direct.connect();
    dir = mkdtempSync(join(tmpdir(), "cairn-outage-"));
    const opened = await FileJournal.open(join(dir, "journal"));
    journal = opened.journal;
    anthropic = await startFakeAnthropic();
    anthropic.setDefault(echoToken(TOKEN, answer, 30));
    slack = await startFakeSlack();
    discord = await startFakeDiscord({ guilds: [{ id: GUILD, name: "Acme", channels: [{ id: GENERAL, name: "general" }], members: [alice] }] });
    core = new Core({ database: db, model: model(), settings: TEST_SETTINGS, log: silentLogger, journal: { backend: journal, pending: opened.pending } });
    await core.start();
    modes = await startBothModes(core, slack, silentLogger);
    discordAdapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { typingIntervalMs: 40 });
  });
  afterAll(async () => {
    await modes?.stop();
    await discordAdapter?.stop();
    await core?.journal.close();
    await Promise.all([slack?.close(), discord?.close(), anthropic?.close()]);
    await db?.close();
    await direct?.end();
    await proxy?.close();
    await pgdb?.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    team = uniqueId("T");
    // Whatever a failed test left: the database reachable.
    await proxy.pass();
  });

  it("answers everything sent while PostgreSQL refused connections, once each and in order, after one notice per conversation", async () => {
    // A turn first, so the pool holds connections the outage cuts.
    const warm = dm("UWARM", "tok-warm");
    await sendHttp(warm);
    await waitUntil("the warm-up answer", () => answersIn(slackPosts(warm.channel)).length === 1, 15_000);

    await proxy.refuse();
    const overHttp = ["tok-h1", "tok-h2", "tok-h3"].map((t) => dm("UALICE", t));
    for (const event of overHttp) expect((await sendHttp(event)).status).toBe(200);
    const overSocket = ["tok-s1", "tok-s2"].map((t) => dm("UBOB", t));
    for (const event of overSocket) await slack.waitForAck(slack.pushEnvelope("events_api", eventCallback(team, event)));
    const onDiscord = ["tok-d1", "tok-d2"].map((t) => discord.sendMessage({ channelId: GENERAL, author: alice, content: `<@${discord.bot.id}> ${t} what now?` }));

    // One notice per conversation, the 👀 kept on every Slack message, nothing claims to be saved.
    const slackConversations = [overHttp[0]!.channel, overSocket[0]!.channel];
    for (const channel of slackConversations) await waitUntil(`the notice in ${channel}`, () => slackPosts(channel).length >= 1, 15_000);
    await waitUntil("the notice on Discord", () => discord.posts.some((p) => p.channelId === GENERAL && p.content === STORAGE_DOWN_NOTICE), 15_000);
    const slackWaiting = [...overHttp, ...overSocket];
    await waitUntil("👀 on every Slack message", () => slackWaiting.every((e) => slack.reactionsOn(e.channel, e.ts).includes("eyes")), 15_000);
    expect(core.journal.depth).toBe(7);
    expect(core.journal.waitingForStorage).toBe(true);
    // The outage goes on a while: probes fail, and nothing more is posted meanwhile.
    const postsDuring = slack.botPosts().length + discord.posts.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(slack.botPosts().length + discord.posts.length).toBe(postsDuring);

    await proxy.pass();
    for (const [channel, events] of [
      [overHttp[0]!.channel, overHttp],
      [overSocket[0]!.channel, overSocket],
    ] as const) {
      await waitUntil(`${events.length} answers in ${channel}`, () => answersIn(slackPosts(channel)).length >= events.length, 30_000);
    }
    await waitUntil("2 answers on Discord", () => discord.posts.filter((p) => p.channelId === GENERAL && p.content.startsWith("answer to")).length >= 2, 30_000);
    await waitUntil("the journal emptied", () => core.journal.depth === 0, 15_000);
    await new Promise((r) => setTimeout(r, 300));

    // Each conversation: the notice once, then the answers once each in the order sent.
    expect(slackPosts(overHttp[0]!.channel).map((p) => p.text)).toEqual([SLACK_NOTICE, "answer to tok-h1", "answer to tok-h2", "answer to tok-h3"]);
    expect(slackPosts(overSocket[0]!.channel).map((p) => p.text)).toEqual([SLACK_NOTICE, "answer to tok-s1", "answer to tok-s2"]);
    // On Discord the notice is the first part of the first message's reply (its idempotency key):
    // the answer, once there, takes its place; the second message's answer is a reply of its own.
    const botMessages = discord.messagesIn(GENERAL).filter((m) => m.author.id === discord.bot.id);
    expect(botMessages.map((m) => m.content)).toEqual(["answer to tok-d1", "answer to tok-d2"]);
    expect(discord.posts.filter((p) => p.channelId === GENERAL && p.content === STORAGE_DOWN_NOTICE)).toHaveLength(1);
    expect(slack.botPosts().some((p) => /saved/.test(p.text))).toBe(false);
    // Stored once each; the 👀 taken off by the turn that answered.
    expect((await storedUserMessages(slackWaiting.map((e) => e.ts))).sort()).toEqual(slackWaiting.map((e) => e.ts).sort());
    expect((await storedUserMessages(onDiscord.map((m) => m.id))).sort()).toEqual(onDiscord.map((m) => m.id).sort());
    await waitUntil("👀 off every Slack message", () => slackWaiting.every((e) => slack.reactionsOn(e.channel, e.ts).length === 0), 15_000);
    expect(core.journal.waitingForStorage).toBe(false);
    // Counted: every one handed on again after the outage; each Slack event's acknowledgement timed.
    const metrics = parsePrometheusText(await core.metrics.expose());
    expect(sumOf(metrics, "cairn_journal_replays_total", { platform: "slack" })).toBeGreaterThanOrEqual(5);
    expect(sumOf(metrics, "cairn_journal_replays_total", { platform: "discord" })).toBeGreaterThanOrEqual(2);
    expect(sumOf(metrics, "cairn_ack_duration_seconds_count", { platform: "slack" })).toBeGreaterThanOrEqual(6);
    expect(sumOf(metrics, "cairn_journal_depth")).toBe(0);
  });

  it("acknowledges a delivery once it is kept while PostgreSQL hangs, and answers it after", async () => {
    const event = dm("UCAROL", "tok-hang");
    proxy.hang();
    let acknowledged = false;
    const sent = sendHttp(event).then((res) => {
      acknowledged = true;
      return res;
    });
    await waitUntil("the acknowledgement", () => acknowledged, 10_000);
    // Acknowledged with nothing stored and nothing answered: the journal holds it.
    expect((await sent).status).toBe(200);
    expect(await storedUserMessages([event.ts])).toEqual([]);
    expect(slackPosts(event.channel)).toEqual([]);
    expect(core.journal.depth).toBeGreaterThanOrEqual(1);
    await proxy.pass();
    await waitUntil("the answer", () => answersIn(slackPosts(event.channel)).length === 1, 30_000);
    expect(slackPosts(event.channel).map((p) => p.text)).toEqual(["answer to tok-hang"]);
    expect(await storedUserMessages([event.ts])).toEqual([event.ts]);
  });

  it("survives connections cut while a statement is under way (a hang, then a refusal), and answers once storage is back", async () => {
    const event = dm("UERIN", "tok-cut");
    proxy.hang();
    expect((await sendHttp(event)).status).toBe(200);
    // The message's insert waits on a held connection; the outage then cuts it mid-statement. pg
    // emits 'error' on that checked-out client: unhandled, that ended the process (this worker).
    await proxy.refuse();
    await new Promise((r) => setTimeout(r, 300));
    await proxy.pass();
    await waitUntil("the answer", () => answersIn(slackPosts(event.channel)).length === 1, 30_000);
    expect(await storedUserMessages([event.ts])).toEqual([event.ts]);
  });

  it("replays what an earlier process kept, and a replay of a message stored already stores and answers nothing twice", async () => {
    const event = dm("UDAVE", "tok-replay");
    const kept = { type: "message", event, body: eventCallback(team, event) };
    // Kept by a process that died before storing it: the next one (here, a second core) answers it.
    const earlier = mkdtempSync(join(tmpdir(), "cairn-replay-"));
    try {
      for (const round of [1, 2]) {
        const left = await FileJournal.open(earlier);
        await left.journal.append("slack", `replay-${round}`, kept);
        await left.journal.close();
        const reopened = await FileJournal.open(earlier);
        expect(reopened.pending.map((e) => e.key)).toEqual([`replay-${round}`]);
        const next = new Core({ database: db, model: model(), settings: TEST_SETTINGS, log: silentLogger, journal: { backend: reopened.journal, pending: reopened.pending } });
        const adapter = await startSlack(next, fakeSlackSettings(slack, { signingSecret: SIGNING_SECRET }), silentLogger);
        await waitUntil(`replay ${round} settled`, () => next.journal.depth === 0, 30_000);
        await adapter.stop();
        await next.journal.close();
      }
      expect(slackPosts(event.channel).map((p) => p.text)).toEqual(["answer to tok-replay"]);
      expect(await storedUserMessages([event.ts])).toEqual([event.ts]);
      // Settled for good: nothing left to replay.
      const last = await FileJournal.open(earlier);
      expect(last.pending).toEqual([]);
      await last.journal.close();
    } finally {
      rmSync(earlier, { recursive: true, force: true });
    }
  });
});
