/**
 * Crash recovery with turn leases (src/core/leases.ts, recovery.ts), on SQLite and PostgreSQL.
 *
 * A process killed mid-turn leaves rows behind exactly as a `kill -9` does: a person's message
 * stored under the dead process's lease (no reply), or a reply stored under its lease and never
 * posted. Those rows are written here through the same store the core uses, with a lease that has
 * run out, and a second, live Core (its adapter the in-memory FakeAdapter) must finish the work:
 * answer once, in order, tell the person when it is too late, post a stored reply as stored, and
 * never post anything twice. The two-process test with real kills is test/cluster.
 */
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { machineKey } from "../../src/turn/lease-owner.ts";
import { forEachDatabase, inboundFor, resetData, uniqueId, type PlaceOptions } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import type { Core } from "../../src/app/core.ts";
import type { Database } from "../../src/db/client.ts";
import type { Lease } from "../../src/history/store/store.ts";
import type { PostedPart, PostTarget, ReplyTarget } from "../../src/ground/adapter.ts";

const LEASE_MS = 400;
const DEAD: Lease = { owner: "dead-host:1:00000000", until: new Date(Date.now() - 60_000) };

/**
 * A FakeAdapter that also records the working marks cleared on people's messages, and marks posts
 * with the message they answer as Slack does with metadata (`postedFor` finds them; `remove` takes
 * one down).
 */
class RecordingAdapter extends FakeAdapter {
  readonly cleared: { channel: string; message: string }[] = [];
  readonly marks = new Map<string, string>();
  readonly removed: string[] = [];
  async clearWorking(channel: string, message: string): Promise<void> {
    this.cleared.push({ channel, message });
  }
  override async open(target: PostTarget): Promise<ReplyTarget> {
    const place = await super.open(target);
    const answers = target.kind === "channel" ? target.answers : undefined;
    return {
      ...place,
      send: async (text) => {
        const id = await place.send(text);
        if (answers) this.marks.set(id, answers);
        return id;
      },
      remove: async (id) => {
        this.removed.push(id);
        this.sent.splice(this.sent.findIndex((s) => s.id === id), 1);
      },
    };
  }
  /** A post the dead process made for `answers` before it died. */
  postedEarlier(channel: string, text: string, answers: string): void {
    const id = `slack-earlier-${this.sent.length}`;
    this.sent.push({ channel, text, id });
    this.marks.set(id, answers);
  }
  async postedFor(channel: string, _thread: string | null, message: string): Promise<PostedPart[]> {
    return this.sent.filter((s) => s.channel === channel && this.marks.get(s.id) === message).map((s) => ({ id: s.id, text: s.text }));
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachDatabase("turn recovery", (getDb) => {
  let fake: FakeAnthropic;
  const cores: Core[] = [];

  beforeEach(async () => {
    await resetData(getDb());
    fake = await startFakeAnthropic();
    fake.setDefault((req) => {
      const last = req.body.messages.at(-1);
      const text = typeof last?.content === "string" ? last.content : JSON.stringify(last?.content ?? "");
      // The newest question in the request (consecutive questions may share one user message).
      return { text: `answer to ${text.match(/q\d+/g)?.at(-1) ?? "?"}` };
    });
  });

  afterEach(async () => {
    for (const core of cores.splice(0)) await core.stopBackground(100);
    await fake.close();
  });

  /** A live process: a Core with the recording adapter attached, its background (and recovery) not yet started. */
  function live(maxAgeMs = 10 * 60_000, orderWindowMs = 0): { core: Core; adapter: RecordingAdapter } {
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, leases: { leaseMs: LEASE_MS }, recovery: { maxAgeMs, orderWindowMs } });
    const adapter = new RecordingAdapter("slack");
    core.attach(adapter);
    cores.push(core);
    return { core, adapter };
  }

  /** What a process killed mid-turn leaves: the person's message stored under its lease, unanswered. */
  async function lostMessage(db: Database, opts: PlaceOptions, text: string, sentAt = new Date(), lease: Lease = DEAD) {
    const { HistoryStore } = await import("../../src/history/store/store.ts");
    const history = new HistoryStore(db);
    const inbound = inboundFor(opts, text, uniqueId("ts"), sentAt);
    const place = await history.resolve(inbound);
    const session =
      (await db.prisma.chatSession.findFirst({ where: { conversationId: place.conversation.id, endedAt: null } })) ??
      (await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } }));
    const stored = await history.recordInbound(place, inbound, session.id, lease);
    if (!stored) throw new Error("not stored");
    return { history, place, session, stored, inbound };
  }

  const where = (): PlaceOptions => ({ workspace: uniqueId("T"), user: "U1", channel: "C1", isDm: false, thread: uniqueId("th") });

  it("answers a message a dead process left, once, and takes the working mark off it", async () => {
    const db = getDb();
    const { stored, inbound } = await lostMessage(db, where(), "q1 what is the deploy command?");
    const { core, adapter } = live();
    await core.startBackground();
    await until("the lost message's answer and its mark taken off", () => adapter.sent.length === 1 && adapter.cleared.length === 1);
    expect(adapter.sent[0]!.text).toBe("answer to q1");
    expect(adapter.cleared).toEqual([{ channel: "C1", message: inbound.messageId }]);
    const row = await db.prisma.message.findUniqueOrThrow({ where: { id: stored.id } });
    expect(row).toMatchObject({ status: "answered", leaseOwner: null, leaseUntil: null });
    const reply = await db.prisma.message.findFirstOrThrow({ where: { replyToId: stored.id, role: "assistant" } });
    expect(reply).toMatchObject({ status: "sent", platformId: adapter.sent[0]!.id, leaseOwner: null, leaseUntil: null });
    // Later sweeps find nothing more to do.
    await core.recovery.sweep();
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(adapter.sent).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it("takes over at once the turns of a process of this machine that is gone, not a live one's or another machine's", async () => {
    const db = getDb();
    // A pid that ran here and is gone: a kill -9'd cairn before its restart.
    const child = spawn(process.execPath, ["-e", ""]);
    const gonePid = child.pid!;
    await new Promise((r) => child.once("exit", r));
    const later = new Date(Date.now() + 10 * 60_000);
    const gone = await lostMessage(db, where(), "q1 left by a killed process", new Date(), { owner: `${machineKey()}:${gonePid}:0123abcd`, until: later });
    // process.ppid runs: a live process of this machine keeps its turn.
    const alive = await lostMessage(db, where(), "q2 held by a live process", new Date(), { owner: `${machineKey()}:${process.ppid}:0123abce`, until: later });
    const elsewhere = await lostMessage(db, where(), "q3 held on another machine", new Date(), { owner: `other-host/1:${gonePid}:0123abcf`, until: later });
    const { core, adapter } = live();
    await core.startBackground();
    await until("the gone process's message answered", () => adapter.sent.length === 1);
    expect(adapter.sent[0]!.text).toBe("answer to q1");
    expect((await db.prisma.message.findUniqueOrThrow({ where: { id: gone.stored.id } })).status).toBe("answered");
    await core.recovery.sweep();
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(adapter.sent.map((s) => s.text)).toEqual(["answer to q1"]);
    for (const held of [alive, elsewhere]) expect((await db.prisma.message.findUniqueOrThrow({ where: { id: held.stored.id } })).leaseUntil).toEqual(later);
  });

  it("tells the person a message too old to answer late was not answered, without asking the model", async () => {
    const db = getDb();
    const old = new Date(Date.now() - 30 * 60_000);
    const { stored } = await lostMessage(db, where(), "q2 is the build green?", old);
    const { core, adapter } = live(10 * 60_000);
    await core.startBackground();
    await until("the notice", () => adapter.sent.length === 1);
    expect(adapter.sent[0]!.text).toMatch(/restarted before I could answer your message .*"q2 is the build green\?"\)\. Please send it again/);
    expect(fake.requests).toHaveLength(0);
    expect((await db.prisma.message.findUniqueOrThrow({ where: { id: stored.id } })).status).toBe("failed");
  });

  it("points a command typed without its slash to the command after a crash, never asking the model or running it", async () => {
    const db = getDb();
    const { stored, place } = await lostMessage(db, { ...where(), isDm: true, thread: undefined, channel: "D1" }, "forget me confirm");
    const before = await db.prisma.person.findUniqueOrThrow({ where: { id: place.person.id } });
    const { core, adapter } = live();
    await core.startBackground();
    await until("the pointer", () => adapter.sent.length === 1);
    expect(adapter.sent[0]!.text).toMatch(/^Did you mean `\/cairn forget me confirm`\? I did not run it/);
    expect(fake.requests).toHaveLength(0);
    expect((await db.prisma.message.findUniqueOrThrow({ where: { id: stored.id } })).status).toBe("answered");
    // Nothing erased: the person and their message are as they were.
    expect(await db.prisma.person.findUniqueOrThrow({ where: { id: place.person.id } })).toEqual(before);
    expect((await db.prisma.message.findUniqueOrThrow({ where: { id: stored.id } })).text).toBe("forget me confirm");
  });

  it("posts a reply that was stored but never posted as it was stored, once, without asking the model again", async () => {
    const db = getDb();
    const { history, place, session, stored } = await lostMessage(db, where(), "q3 who is on call?");
    // The dead process got as far as storing its reply (the trigger moved the lease to the reply).
    const reply = await history.recordReply(place, session.id, stored.id, "Dana is on call this week.", "sent", DEAD);
    expect(reply).not.toBeNull();
    // The turn's lease stays on the message until the reply is posted.
    expect((await db.prisma.message.findUniqueOrThrow({ where: { id: stored.id } })).leaseOwner).toBe(DEAD.owner);
    // A process that no longer holds the turn stores no reply.
    expect(await history.recordReply(place, session.id, stored.id, "a second answer", "sent", { owner: "someone-else", until: new Date() })).toBeNull();

    const { core, adapter } = live();
    await core.startBackground();
    await until("the stored reply", () => adapter.sent.length === 1);
    expect(adapter.sent[0]!.text).toBe("Dana is on call this week.");
    expect(fake.requests).toHaveLength(0);
    await core.recovery.sweep();
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(adapter.sent).toHaveLength(1);
    expect(await db.prisma.message.count({ where: { replyToId: stored.id, role: "assistant" } })).toBe(1);
  });

  it("records a reply the dead process posted just before dying instead of posting it again", async () => {
    const db = getDb();
    const { history, place, session, stored, inbound } = await lostMessage(db, where(), "q30 where are the runbooks?");
    const reply = await history.recordReply(place, session.id, stored.id, "In the wiki, under Ops.", "sent", DEAD);
    const { core, adapter } = live();
    // Posted, marked with the message it answers; the crash came before its delivery was recorded.
    adapter.postedEarlier("C1", "In the wiki, under Ops.", inbound.messageId);
    await core.startBackground();
    await until("the delivery recorded", async () => (await db.prisma.message.findUniqueOrThrow({ where: { id: reply!.id } })).platformId !== null);
    expect(adapter.sent).toEqual([{ channel: "C1", text: "In the wiki, under Ops.", id: "slack-earlier-0" }]);
    expect(await db.prisma.delivery.count({ where: { messageId: reply!.id, platformId: "slack-earlier-0" } })).toBe(1);
  });

  it("takes down a dead process's draft before posting the answer", async () => {
    const db = getDb();
    const { inbound } = await lostMessage(db, where(), "q31 summarise the incident");
    const { core, adapter } = live();
    adapter.postedEarlier("C1", "The incident began at 09:", inbound.messageId);
    await core.startBackground();
    await until("the answer", () => adapter.sent.some((s) => s.text === "answer to q31"));
    expect(adapter.removed).toEqual(["slack-earlier-0"]);
    expect(adapter.sent.map((s) => s.text)).toEqual(["answer to q31"]);
  });

  it("answers a conversation's lost messages before a new one, in order", async () => {
    const db = getDb();
    const opts = where();
    await lostMessage(db, opts, "q4 first");
    await lostMessage(db, opts, "q5 second");
    const { core, adapter } = live();
    // Recovery is not started: the new message's turn itself finds the work ahead of it.
    const target: ReplyTarget = adapter.target("C1");
    const received = await core.attach(adapter).receive(inboundFor(opts, "q6 third", uniqueId("ts")), target);
    expect(received).toMatchObject({ kind: "replied", status: "ok" });
    expect(adapter.sent.map((s) => s.text)).toEqual(["answer to q4", "answer to q5", "answer to q6"]);
  });

  /**
   * Another live process holds the turn of an earlier message; this process gets `later`: its turn
   * waits, then answers after the other's reply. `between` runs before it arrives (on the session).
   */
  async function waitsForOther(earlier: string, later: string, between?: (sessionId: string) => Promise<unknown>) {
    const db = getDb();
    const opts = where();
    const other = { owner: "other-host:2:11111111", until: new Date(Date.now() + 60_000) };
    const { history, place, session, stored } = await lostMessage(db, opts, earlier);
    await db.prisma.message.update({ where: { id: stored.id }, data: { leaseOwner: other.owner, leaseUntil: other.until } });
    await between?.(session.id);
    const { core, adapter } = live();
    const done = core.attach(adapter).receive(inboundFor(opts, later, uniqueId("ts")), adapter.target("C1"));
    await until("the later message stored", async () => (await db.prisma.message.count({ where: { text: later } })) === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(adapter.sent).toHaveLength(0);
    expect(fake.requests).toHaveLength(0);
    // The other process answers and posts its reply: the waiting turn goes on.
    const theirs = await history.recordReply(place, session.id, stored.id, "their answer", "sent", other);
    await history.recordDeliveries(place.conversation.id, theirs!.id, "C1", [uniqueId("other-post")]);
    await done;
    expect(adapter.sent.map((s) => s.text)).toEqual([`answer to ${later.split(" ")[0]}`]);
    return { db, session, request: JSON.stringify(fake.requests[0]!.body.messages) };
  }

  it("waits for another live process's earlier turn, and answers after it", async () => {
    const { request } = await waitsForOther("q7 earlier", "q8 later");
    // The model saw the earlier exchange before the later question.
    expect(request.indexOf("q7 earlier")).toBeLessThan(request.indexOf("their answer"));
    expect(request.indexOf("their answer")).toBeLessThan(request.indexOf("q8 later"));
  });

  it("waits for another live process's earlier turn when its own message opens a new session", async () => {
    // The session ended (an idle gap, /new): the next message opens one, whose start the intake knows without a read.
    const { db, session } = await waitsForOther("q9 earlier", "q12 later", (id) => getDb().prisma.chatSession.update({ where: { id }, data: { endedAt: new Date() } }));
    expect((await db.prisma.message.findFirst({ where: { text: "q12 later" } }))?.sessionId).not.toBe(session.id);
  });

  it("answers, with an order window, a message that reached another replica late before the one sent after it", async () => {
    const opts = where();
    const a = live(undefined, 600);
    const b = live(undefined, 600);
    // Both renew their leases while their turns wait.
    await Promise.all([a.core.startBackground(), b.core.startBackground()]);
    const posted: string[] = [];
    const target = (adapter: RecordingAdapter) => adapter.target("C1", async (text) => void posted.push(text));
    const sent = Date.now();
    // The later message reaches replica B at once; the earlier one reaches replica A 200 ms late.
    const second = b.core.attach(b.adapter).receive(inboundFor(opts, "q40 second", uniqueId("ts"), new Date(sent + 50)), target(b.adapter));
    await new Promise((r) => setTimeout(r, 200));
    const first = a.core.attach(a.adapter).receive(inboundFor(opts, "q41 first", uniqueId("ts"), new Date(sent)), target(a.adapter));
    await Promise.all([first, second]);
    expect(posted).toEqual(["answer to q41", "answer to q40"]);
    const ids = await getDb().prisma.message.findMany({ where: { role: "user", text: { in: ["q40 second", "q41 first"] } }, orderBy: { id: "asc" }, select: { text: true } });
    // Stored in the other order: the platform's time decided.
    expect(ids.map((m) => m.text)).toEqual(["q40 second", "q41 first"]);
  });

  it("lets exactly one of two live processes take a dead process's turn", async () => {
    const db = getDb();
    const lost = await Promise.all(Array.from({ length: 6 }, (_, i) => lostMessage(db, { ...where(), channel: `C${i}` }, `q${10 + i} lost`)));
    const a = live();
    const b = live();
    await Promise.all([a.core.startBackground(), b.core.startBackground()]);
    await until("every lost message answered", () => a.adapter.sent.length + b.adapter.sent.length >= lost.length);
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    const texts = [...a.adapter.sent, ...b.adapter.sent].map((s) => s.text).sort();
    expect(texts).toEqual(lost.map((_, i) => `answer to q${10 + i}`).sort());
    expect(fake.requests).toHaveLength(lost.length);
  });

  it("hands back a turn in flight when stopping, and the next process answers it once", async () => {
    const db = getDb();
    const opts = where();
    const first = live();
    await first.core.startBackground();
    fake.enqueue({ delayMs: 600, then: { text: "answer to q20 (slow)" } });
    const inflight = first.core.attach(first.adapter).receive(inboundFor(opts, "q20 slow one", uniqueId("ts")), first.adapter.target("C1"));
    await until("the model call", () => fake.requests.length === 1);
    await first.core.drainTurns(50);
    expect(await inflight).toMatchObject({ kind: "dropped" });
    expect(first.adapter.sent).toHaveLength(0);

    const next = live();
    await next.core.startBackground();
    await until("the handed-back answer", () => next.adapter.sent.length === 1);
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(next.adapter.sent.map((s) => s.text)).toHaveLength(1);
    expect(first.adapter.sent).toHaveLength(0);
    const msg = await db.prisma.message.findFirstOrThrow({ where: { role: "user", text: "q20 slow one" } });
    expect(await db.prisma.message.count({ where: { replyToId: msg.id, role: "assistant" } })).toBe(1);
  });
});

describe("notAnsweredText", () => {
  it("quotes the start of the message and its time", async () => {
    const { notAnsweredText } = await import("../../src/turn/recovery.ts");
    const text = notAnsweredText({ text: "x".repeat(200), createdAt: new Date("2026-12-01T10:05:00Z") });
    expect(text).toContain("2026-12-01 10:05 UTC");
    expect(text.length).toBeLessThan(260);
  });
});
