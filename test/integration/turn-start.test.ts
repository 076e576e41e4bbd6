/**
 * The turn's first read (src/turn/turn-start-store.ts): the session's messages and whether a
 * correction is open, in one statement. The messages must be those `sessionMessages` reads, and the
 * open-correction column must say "open" exactly when `CorrectionStore.claim` would take one.
 */
import { expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf, type Place } from "../../src/history/store/store.ts";
import { CorrectionStore } from "../../src/learning/correction-store.ts";
import { ANY_ID, TurnStartStore, withStored, type LeasedMessage, type TurnStart } from "../../src/turn/turn-start-store.ts";
import { LeaseStore } from "../../src/turn/lease-store.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

const WINDOW_MS = 60_000;

forEachDatabase("a turn's first read", (getDb) => {
  /** A conversation with one answered question and a second question, and a clock to move. */
  async function setUp(user = "U1") {
    const db = getDb();
    const clock = { now: new Date(Date.UTC(2026, 3, 1, 12)) };
    const history = new HistoryStore(db);
    const corrections = new CorrectionStore(db.prisma, () => clock.now, WINDOW_MS);
    const o: PlaceOptions = { workspace: uniqueId("ws"), user, channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "q1"));
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const q1 = await history.recordInbound(place, inboundFor(o, "q1"), session.id);
    const a1 = await history.recordReply(place, session.id, q1!.id, "a1", "sent");
    const q2 = await history.recordInbound(place, inboundFor(o, "q2"), session.id);
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const starts = new TurnStartStore({ provider: db.provider, direct }, history, corrections);
    const read = (lease: LeasedMessage | null = null) => starts.read(scopeOf(place), session.id, null, q2!.id, lease);
    return { db, clock, history, corrections, o, place, session, q1: q1!, a1, q2: q2!, starts, read, statements: () => statements };
  }

  const open = (c: CorrectionStore, place: Place, replyMessageId: number, reactorId: string) =>
    c.open({ workspaceId: place.workspace.id, conversationId: place.conversation.id, replyMessageId, reactorId });

  it("reads the session's messages as sessionMessages does, and none open, in one statement", async () => {
    const t = await setUp();
    const start = await t.read();
    expect(t.statements()).toBe(1);
    expect(start.messages).toEqual(await t.history.sessionMessages(scopeOf(t.place), t.session.id, null, t.q2.id));
    expect(start.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2"]);
    expect(start.correctionOpen).toBe(false);
  });

  it("says open exactly when claim takes the correction: the reactor's, asked, within the window", async () => {
    const t = await setUp();
    const asked = await open(t.corrections, t.place, t.a1.id, t.place.person.id);
    expect((await t.read()).correctionOpen).toBe(true);
    // Past the window: claim would not take it, and the read says so.
    t.clock.now = new Date(asked!.createdAt.getTime() + WINDOW_MS + 1);
    expect((await t.read()).correctionOpen).toBe(false);
    expect(await t.corrections.claim(scopeOf(t.place), t.q2.id)).toBeNull();
    // Within it, claimed: received, no longer open.
    t.clock.now = new Date(asked!.createdAt.getTime() + 1_000);
    expect((await t.corrections.claim(scopeOf(t.place), t.q2.id))?.wrongAnswer).toBe("a1");
    expect((await t.read()).correctionOpen).toBe(false);
  });

  it("answers the check alone (a new session's first message) exactly as the read's column does", async () => {
    const t = await setUp();
    const starts = new TurnStartStore(t.db as Database, t.history, t.corrections);
    const scope = scopeOf(t.place);
    expect(await starts.correctionOpen(scope)).toBe(false);
    const asked = await open(t.corrections, t.place, t.a1.id, t.place.person.id);
    expect(await starts.correctionOpen(scope)).toBe(true);
    expect(await starts.correctionOpen(scopeOf(await t.history.resolve(inboundFor({ ...t.o, user: "U2" }, "hi"))))).toBe(false);
    t.clock.now = new Date(asked!.createdAt.getTime() + WINDOW_MS + 1);
    expect(await starts.correctionOpen(scope)).toBe((await t.read()).correctionOpen);
    t.clock.now = new Date(asked!.createdAt.getTime() + 1_000);
    expect(await starts.correctionOpen(scope)).toBe(true);
    await t.corrections.claim(scope, t.q2.id);
    expect(await starts.correctionOpen(scope)).toBe(false);
  });

  it("does not count another person's correction in the same conversation as open", async () => {
    const t = await setUp();
    const other = await t.history.resolve(inboundFor({ ...t.o, user: "U2" }, "hi"));
    await open(t.corrections, t.place, t.a1.id, other.person.id);
    expect((await t.read()).correctionOpen).toBe(false);
    expect(await t.corrections.claim(scopeOf(t.place), t.q2.id)).toBeNull();
  });

  it("reads a session of another conversation as empty, and then leaves the check to claim", async () => {
    const t = await setUp();
    const elsewhere = await t.history.resolve(inboundFor({ ...t.o, channel: "C2" }, "hi"));
    const starts = new TurnStartStore(t.db as Database, t.history, t.corrections);
    const start = await starts.read(scopeOf(elsewhere), t.session.id, null, t.q2.id);
    expect(start).toEqual({ messages: [], correctionOpen: true });
  });

  it("under a lease, says whether another process holds a turn for an earlier message, in the same statement", async () => {
    const t = await setUp();
    const scope = scopeOf(t.place);
    const mine = { owner: "this-process", message: { id: t.q2.id, createdAt: t.q2.createdAt } };
    const hold = (id: number, owner: string | null) => t.db.prisma.message.update({ where: { id }, data: { leaseOwner: owner, leaseUntil: owner ? new Date(Date.now() + 60_000) : null } });
    const aheadSeen = async (lease = mine) => {
      const before = t.statements();
      const start = await t.read(lease);
      expect(start.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2"]);
      expect(t.statements()).toBe(before + 1);
      return start.aheadSeen;
    };
    // Nothing leased, or the earlier message under this process's own lease: nothing ahead.
    expect(await aheadSeen()).toBe(false);
    await hold(t.q1.id, "this-process");
    expect(await aheadSeen()).toBe(false);
    // Another process's turn for the earlier message: ahead, as `ahead` finds it.
    await hold(t.q1.id, "other-process");
    expect(await aheadSeen()).toBe(true);
    expect((await new LeaseStore(t.db).ahead(scope, "this-process", mine.message)).map((a) => a.id)).toEqual([t.q1.id]);
    // Another process's turn for a later message is not ahead; nor is anything for a turn under no lease.
    await hold(t.q1.id, null);
    const q3 = (await t.history.recordInbound(t.place, inboundFor(t.o, "q3", uniqueId("msg"), new Date(t.q2.createdAt.getTime() + 1_000)), t.session.id))!;
    await hold(q3.id, "other-process");
    expect(await aheadSeen()).toBe(false);
    expect((await t.read()).aheadSeen).toBeUndefined();
    // The same time as this message: the lower id is ahead.
    await hold(q3.id, null);
    await t.db.prisma.message.update({ where: { id: t.q1.id }, data: { createdAt: t.q2.createdAt } });
    await hold(t.q1.id, "other-process");
    expect(await aheadSeen()).toBe(true);
  });

  it("reads beside the message's insert what it reads after it: what was before the message, then the message", async () => {
    const t = await setUp();
    const scope = scopeOf(t.place);
    const withAuthor = async (id: number) => (await t.history.sessionMessages(scope, t.session.id, null, id)).find((m) => m.id === id)!;
    // Read before q2's id is known, for every id; stored meanwhile: a later message and its reply (another process's turn).
    const q3 = (await t.history.recordInbound(t.place, inboundFor(t.o, "q3"), t.session.id))!;
    await t.history.recordReply(t.place, t.session.id, q3.id, "a3", "sent");
    const beside = await t.starts.read(scope, t.session.id, null, ANY_ID);
    expect(beside.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2", "q3", "a3"]);
    // As the intake makes it for q2: what was before q2, then q2; what came after it is left out.
    const made = withStored(beside, await withAuthor(t.q2.id));
    expect(made.messages).toEqual((await t.read()).messages);
    expect(made.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2"]);
    expect(made.correctionOpen).toBe(false);
    // For q3 (the read found it already): everything before it, and q3 once.
    expect(withStored(beside, await withAuthor(q3.id)).messages.map((m) => m.text)).toEqual(["q1", "a1", "q2", "q3"]);
  });

  it("reads a burst of turns' starts at once as each would read alone; on PostgreSQL in fewer statements", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 12; c++) ts.push(await setUp(`U${c}`));
    // One with a correction open, one asking from another conversation (nothing found: left to claim).
    await open(ts[3]!.corrections, ts[3]!.place, ts[3]!.a1.id, ts[3]!.place.person.id);
    const elsewhere = await ts[5]!.history.resolve(inboundFor({ ...ts[5]!.o, channel: "C9" }, "hi"));
    const db = ts[0]!.db;
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const starts = new TurnStartStore({ provider: db.provider, direct }, ts[0]!.history, ts[0]!.corrections);
    // Under a lease: another process holds the turn of ts[4]'s first question.
    await db.prisma.message.update({ where: { id: ts[4]!.q1.id }, data: { leaseOwner: "other-process", leaseUntil: new Date(Date.now() + 60_000) } });
    const leased = (t: (typeof ts)[number]) => ({ owner: "this-process", message: { id: t.q2.id, createdAt: t.q2.createdAt } });
    const asks = [
      ...ts.map((t) => () => starts.read(scopeOf(t.place), t.session.id, null, t.q2.id, leased(t))),
      () => starts.read(scopeOf(elsewhere), ts[5]!.session.id, null, ts[5]!.q2.id),
      // After the first answer: only the second question.
      () => starts.read(scopeOf(ts[7]!.place), ts[7]!.session.id, ts[7]!.q1.id, ts[7]!.q2.id),
    ];
    const alone: TurnStart[] = [];
    for (const ask of asks) alone.push(await ask());
    statements = 0;
    const together = await Promise.all(asks.map((ask) => ask()));
    expect(together).toEqual(alone);
    expect(together.map((s) => s.correctionOpen)).toEqual([...ts.map((_, c) => c === 3), true, false]);
    expect(together.map((s) => s.aheadSeen)).toEqual([...ts.map((_, c) => c === 4), undefined, undefined]);
    expect(together[0]!.messages.map((m) => m.text)).toEqual(["q1", "a1", "q2"]);
    expect(together[12]!.messages).toEqual([]);
    expect(together[13]!.messages.map((m) => m.text)).toEqual(["q2"]);
    if (db.provider === "postgresql") expect(statements).toBeLessThanOrEqual(3);
    else expect(statements).toBe(asks.length);
  });

  it("looks at a burst's turns ahead at once as each would alone (LeaseStore.ahead); on PostgreSQL in fewer statements", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 8; c++) ts.push(await setUp(`U${c}`));
    const db = ts[0]!.db;
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const leases = new LeaseStore({ ...db, direct });
    const until = new Date(Date.now() + 60_000);
    // Another process holds ts[2]'s first question and ts[5]'s; this process holds ts[6]'s (not ahead of its own).
    for (const [i, owner] of [[2, "other-a"], [5, "other-b"], [6, "this-process"]] as const) {
      await db.prisma.message.update({ where: { id: ts[i]!.q1.id }, data: { leaseOwner: owner, leaseUntil: until } });
    }
    const asks = [
      ...ts.map((t) => () => leases.ahead(scopeOf(t.place), "this-process", t.q2)),
      // The first question itself: nothing stands before it.
      () => leases.ahead(scopeOf(ts[2]!.place), "this-process", ts[2]!.q1),
    ];
    const alone = [];
    for (const ask of asks) alone.push(await ask());
    statements = 0;
    const together = await Promise.all(asks.map((ask) => ask()));
    expect(together).toEqual(alone);
    expect(together.map((a) => a.map((x) => [x.id, x.owner]))).toEqual([...ts.map((t, i) => (i === 2 ? [[t.q1.id, "other-a"]] : i === 5 ? [[t.q1.id, "other-b"]] : [])), []]);
    expect(together[2]![0]!.until.getTime()).toBe(until.getTime());
    if (db.provider === "postgresql") expect(statements).toBeLessThanOrEqual(2);
    else expect(statements).toBe(asks.length);
  });
});
