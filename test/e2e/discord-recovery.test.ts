/**
 * Crash recovery on Discord: a reply a killed process had stored is posted by the next process
 * through the real adapter, against the fake Discord, and never twice. Each part carries an
 * idempotency key (the person's message id and the part's number, as Discord's `nonce` with
 * `enforce_nonce`): a part the dead process had posted comes back from Discord instead of being
 * posted again, and a draft it had begun is edited into the part. On SQLite and PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, resetData } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeUser } from "../fakes/discord.ts";
import { HistoryStore, type Lease } from "../../src/history/store/store.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import type { Core } from "../../src/app/core.ts";

const GUILD = snowflake();
const GENERAL = snowflake();
const alice: FakeUser = { id: snowflake(), username: "alice", globalName: "Alice" };
/** A process that died long ago: its leases have run out. */
const DEAD: Lease = { owner: "gone-host/1:1:0badcafe", until: new Date(Date.now() - 60_000) };

forEachDatabase("discord: replies finished by crash recovery", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core | null = null;
  let adapter: DiscordAdapter | null = null;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    discord = await startFakeDiscord({ guilds: [{ id: GUILD, name: "Acme", channels: [{ id: GENERAL, name: "general" }], members: [alice] }] });
  });
  afterAll(async () => {
    await discord?.close();
    await anthropic?.close();
  });
  beforeEach(async () => {
    await resetData(getDb());
    postsBefore = discord.posts.length;
  });
  afterEach(async () => {
    await adapter?.stop();
    await core?.stopBackground(100);
    adapter = null;
    core = null;
  });

  /** Alice's mention in #general, stored by a process that then died, with the reply it had stored. */
  async function lostTurn(question: string, answer: string): Promise<{ personMessage: string; replyId: number }> {
    const asked = discord.sendMessage({ channelId: GENERAL, author: alice, content: `<@${discord.bot.id}> ${question}`, offline: true });
    const history = new HistoryStore(getDb());
    const inbound = inboundFor({ platform: "discord", workspace: GUILD, user: alice.id, channel: GENERAL, isDm: false }, question, asked.id);
    const place = await history.resolve(inbound);
    const session = await getDb().prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const stored = await history.recordInbound(place, inbound, session.id, DEAD);
    const reply = await history.recordReply(place, session.id, stored!.id, answer, "sent", DEAD);
    return { personMessage: asked.id, replyId: reply!.id };
  }

  /** What the dead process sent before dying: a part under its idempotency key, as the adapter sends it. */
  async function postedByTheDead(personMessage: string, content: string): Promise<string> {
    const res = await fetch(`${discord.apiUrl}/v10/channels/${GENERAL}/messages`, {
      method: "POST",
      headers: { authorization: `Bot ${discord.token}`, "content-type": "application/json" },
      body: JSON.stringify({ content, nonce: `${personMessage}.0`, enforce_nonce: true, message_reference: { message_id: personMessage, fail_if_not_exists: false } }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  }

  /** A new process: the Discord adapter connected, then recovery started. */
  async function restart(): Promise<void> {
    core = makeCore(getDb(), anthropic, { leases: { leaseMs: 400 } });
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger);
    await core.startBackground();
  }

  /** cairn's posts in #general since the test began (recovery posts a reply's parts without a reference). */
  let postsBefore = 0;
  const botPostsSince = () => discord.posts.slice(postsBefore).filter((p) => p.channelId === GENERAL);
  /** The distinct messages among them (the fake lists an edit as a post of the same id). */
  const messagesSince = () => [...new Set(botPostsSince().map((p) => p.id))];
  const deliveredAs = async (replyId: number) =>
    waitFor(async () => (await getDb().prisma.delivery.findMany({ where: { messageId: replyId } })).map((d) => d.platformId).join(",") || undefined, `the delivery of reply ${replyId}`);

  it("posts a stored reply nobody had posted, once", async () => {
    const { replyId } = await lostTurn("where are the runbooks?", "In the wiki, under Ops.");
    await restart();
    const delivered = await deliveredAs(replyId);
    expect(botPostsSince().map((p) => [p.id, discord.message(p.id)?.content])).toEqual([[delivered, "In the wiki, under Ops."]]);
    expect(anthropic.requests).toHaveLength(0);
  });

  it("records the part the dead process had posted instead of posting it again", async () => {
    const { personMessage, replyId } = await lostTurn("who is on call?", "Dana is on call this week.");
    const earlier = await postedByTheDead(personMessage, "Dana is on call this week.");
    await restart();
    expect(await deliveredAs(replyId)).toBe(earlier);
    expect(messagesSince()).toEqual([earlier]);
    expect(discord.nonceReturns).toContainEqual({ nonce: `${personMessage}.0`, messageId: earlier });
    expect(discord.message(earlier)?.content).toBe("Dana is on call this week.");
  });

  it("edits the draft the dead process had begun into the answer, without a second message", async () => {
    const { personMessage, replyId } = await lostTurn("summarise the incident", "The incident began at 09:12 and was fixed by 09:40.");
    const draft = await postedByTheDead(personMessage, "The incident began at 09:");
    await restart();
    expect(await deliveredAs(replyId)).toBe(draft);
    await waitFor(() => discord.message(draft)?.content === "The incident began at 09:12 and was fixed by 09:40." || undefined, "the draft edited into the answer");
    expect(messagesSince()).toEqual([draft]);
  });
});
