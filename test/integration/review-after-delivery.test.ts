/**
 * What a posted reply triggers, read in one statement (ReviewStore.afterDelivered): the person
 * messages since the memory review's mark, the tool calls since the skill review's, and the
 * correction the reply's message was taken as. Each state is checked against the numbers it must
 * give and against the store's separate reads (lastReviewed, personMessages, toolCalls,
 * CorrectionStore.receivedFor), which the conversation-end trigger still uses.
 */
import { expect, it } from "vitest";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf, type Message } from "../../src/history/store/store.ts";
import { CorrectionStore } from "../../src/learning/correction-store.ts";
import { afterDeliveredSql, ReviewStore, type ReviewedReply } from "../../src/learning/review-store.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

forEachDatabase("what a posted reply triggers, read at once", (getDb) => {
  async function setUp() {
    const db = getDb();
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const reviews = new ReviewStore(db.prisma, { provider: db.provider, direct });
    const corrections = new CorrectionStore(db.prisma, () => new Date(), 60_000);
    const history = new HistoryStore(db);
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "q"));
    const scope = scopeOf(place);
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    // Three turns; their traces made 2, 0 and 3 tool calls.
    const turns: { q: Message; a: Message }[] = [];
    for (const [i, calls] of [2, 0, 3].entries()) {
      const q = (await history.recordInbound(place, inboundFor(o, `q${i}`), session.id))!;
      const a = await history.recordReply(place, session.id, q.id, `a${i}`, "sent");
      await db.prisma.replyTrace.create({ data: { messageId: a.id, workspaceId: scope.workspaceId, conversationId: scope.conversationId, toolCalls: calls } });
      turns.push({ q, a });
    }
    const asReply = (t: { q: Message; a: Message }): ReviewedReply => ({ id: t.a.id, replyToId: t.q.id });
    const setMarks = (memory: number | null, skills: number | null) =>
      db.prisma.conversation.update({ where: { id: scope.conversationId }, data: { reviewedMemoryThrough: memory, reviewedSkillsThrough: skills } });
    /** The same counts read the separate way (review-triggers.ts dueReview). */
    const separately = async (reply: ReviewedReply) => {
      const last = await reviews.lastReviewed(scope);
      const fresh = (r: ReviewedReply | null) => r === null || r.id < reply.id;
      return {
        turns: fresh(last.memory) ? await reviews.personMessages(scope, last.memory?.replyToId ?? null, reply.replyToId) : 0,
        calls: fresh(last.skills) ? await reviews.toolCalls(scope, last.skills?.id ?? null, reply.id) : 0,
      };
    };
    return { db, reviews, corrections, history, place, scope, session, turns, asReply, setMarks, separately, statements: () => statements };
  }

  it("counts what was said and done since each review's mark, as the separate reads do, in one statement", async () => {
    const t = await setUp();
    const last = t.turns[2]!;
    const cases: { marks: [number | null, number | null]; since: { turns: number; calls: number } }[] = [
      { marks: [null, null], since: { turns: 3, calls: 5 } },
      { marks: [t.turns[0]!.a.id, null], since: { turns: 2, calls: 5 } },
      { marks: [null, t.turns[1]!.a.id], since: { turns: 3, calls: 3 } },
      { marks: [t.turns[1]!.a.id, t.turns[0]!.a.id], since: { turns: 1, calls: 3 } },
      // A review that read through this very reply, or past it: nothing is counted again.
      { marks: [last.a.id, last.a.id], since: { turns: 0, calls: 0 } },
    ];
    for (const c of cases) {
      await t.setMarks(...c.marks);
      const before = t.statements();
      const after = await t.reviews.afterDelivered(t.scope.conversationId, last.a.id, true);
      expect(t.statements() - before).toBe(1);
      expect(after).toEqual({ reply: t.asReply(last), scope: { workspaceId: t.scope.workspaceId, conversationId: t.scope.conversationId }, since: c.since, correctionId: null });
      expect(after!.since).toEqual(await t.separately(t.asReply(last)));
    }
    // An earlier reply, with marks after it: counted as nothing new.
    await t.setMarks(t.turns[1]!.a.id, t.turns[1]!.a.id);
    expect((await t.reviews.afterDelivered(t.scope.conversationId, t.turns[0]!.a.id, true))?.since).toEqual({ turns: 0, calls: 0 });
  });

  it("reads a mark on a message that answered nothing, or of another conversation, as no mark", async () => {
    const t = await setUp();
    const last = t.turns[2]!;
    const post = await t.history.recordPost(t.place.conversation, "cairn's own post");
    const elsewhere = await t.history.resolve(inboundFor({ workspace: t.place.workspace.externalId, user: "U1", channel: "C2", isDm: false }, "x"));
    const theirs = (await t.history.recordInbound(elsewhere, inboundFor({ workspace: t.place.workspace.externalId, user: "U1", channel: "C2", isDm: false }, "x")))!;
    for (const mark of [post.id, theirs.id]) {
      await t.setMarks(mark, mark);
      const after = await t.reviews.afterDelivered(t.scope.conversationId, last.a.id, true);
      expect(after?.since).toEqual({ turns: 3, calls: 5 });
      expect(after!.since).toEqual(await t.separately(t.asReply(last)));
    }
  });

  it("counts no tool calls when skill reviews are off", async () => {
    const t = await setUp();
    expect((await t.reviews.afterDelivered(t.scope.conversationId, t.turns[2]!.a.id, false))?.since).toEqual({ turns: 3, calls: 0 });
  });

  it("names the correction the reply's message was taken as, and only a received one", async () => {
    const t = await setUp();
    const [first, second] = [t.turns[0]!, t.turns[1]!];
    const received = await t.db.prisma.correction.create({
      data: { workspaceId: t.scope.workspaceId, conversationId: t.scope.conversationId, replyMessageId: first.a.id, reactorId: t.place.person.id, status: "received", correctionMessageId: second.q.id },
    });
    expect((await t.reviews.afterDelivered(t.scope.conversationId, second.a.id, true))?.correctionId).toBe(received.id);
    expect((await t.corrections.receivedFor(t.scope, second.q.id))?.id).toBe(received.id);
    await t.db.prisma.correction.update({ where: { id: received.id }, data: { status: "learned" } });
    expect((await t.reviews.afterDelivered(t.scope.conversationId, second.a.id, true))?.correctionId).toBeNull();
    expect(await t.corrections.receivedFor(t.scope, second.q.id)).toBeNull();
  });

  it("sums the tool calls from the conversation's own traces, not every conversation's in the id range", async () => {
    const t = await setUp();
    const pg = t.db.provider === "postgresql";
    // Other conversations' traces below the reply's id: a busy workspace's history.
    const others = pg
      ? `INSERT INTO "ReplyTrace" ("messageId", "workspaceId", "conversationId", "toolCalls") SELECT 1000000 + g, 'ws-other', 'conv-' || (g % 300), 1 FROM generate_series(1, 3000) g`
      : `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000) INSERT INTO ReplyTrace (messageId, workspaceId, conversationId, toolCalls, createdAt) SELECT 1000000 + n, 'ws-other', 'conv-' || (n % 300), 1, '2026-01-01T00:00:00.000+00:00' FROM g`;
    await t.db.prisma.$executeRawUnsafe(others);
    await t.db.prisma.$executeRawUnsafe(pg ? `ANALYZE "ReplyTrace"` : `ANALYZE`);
    const sql = afterDeliveredSql(t.db.provider);
    const values = [1, 2_000_000, t.scope.conversationId] as const;
    let plan: string;
    if (pg) {
      plan = await t.db.prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`SET LOCAL plan_cache_mode = force_generic_plan`);
        await tx.$executeRawUnsafe(`PREPARE after_delivered(integer, integer, text) AS ${sql}`);
        try {
          const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN EXECUTE after_delivered(${values[0]}, ${values[1]}, '${values[2]}')`);
          return rows.map((r) => r["QUERY PLAN"]).join("\n");
        } finally {
          await tx.$executeRawUnsafe(`DEALLOCATE after_delivered`);
        }
      });
    } else {
      const rows = await t.db.prisma.$queryRawUnsafe<{ detail: string }[]>(`EXPLAIN QUERY PLAN ${sql}`, ...values);
      plan = rows.map((r) => r.detail).join("\n");
    }
    expect(plan).toContain("ReplyTrace_conversationId_messageId_idx");
    expect((await t.reviews.afterDelivered(t.scope.conversationId, t.turns[2]!.a.id, true))?.since.calls).toBe(5);
  });

  it("is null for anything but a sent answer of that conversation", async () => {
    const t = await setUp();
    const last = t.turns[2]!;
    const failed = await t.history.recordReply(t.place, t.session.id, last.q.id, "sorry", "failed");
    const other = await t.history.resolve(inboundFor({ workspace: t.place.workspace.externalId, user: "U1", channel: "C3", isDm: false }, "y"));
    expect(await t.reviews.afterDelivered(other.conversation.id, last.a.id, true)).toBeNull();
    expect(await t.reviews.afterDelivered(t.scope.conversationId, last.q.id, true)).toBeNull();
    expect(await t.reviews.afterDelivered(t.scope.conversationId, failed.id, true)).toBeNull();
    expect(await t.reviews.afterDelivered(t.scope.conversationId, 987_654_321, true)).toBeNull();
  });

  it("reads the replies of a burst, posted at once, as each alone; on PostgreSQL in fewer statements", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 6; c++) ts.push(await setUp());
    // Each conversation with its own marks; one asks for a reply of another conversation (null).
    await ts[1]!.setMarks(ts[1]!.turns[0]!.a.id, null);
    await ts[2]!.setMarks(null, ts[2]!.turns[1]!.a.id);
    await ts[3]!.setMarks(ts[3]!.turns[2]!.a.id, ts[3]!.turns[2]!.a.id);
    const reviews = ts[0]!.reviews;
    const asks = [
      ...ts.map((t) => () => reviews.afterDelivered(t.scope.conversationId, t.turns[2]!.a.id, true)),
      () => reviews.afterDelivered(ts[4]!.scope.conversationId, ts[5]!.turns[2]!.a.id, true),
      () => reviews.afterDelivered(ts[5]!.scope.conversationId, ts[5]!.turns[1]!.a.id, false),
    ];
    const alone = [];
    for (const ask of asks) alone.push(await ask());
    const before = ts[0]!.statements();
    const together = await Promise.all(asks.map((ask) => ask()));
    expect(together).toEqual(alone);
    expect(together.map((a) => a?.since ?? null)).toEqual([
      { turns: 3, calls: 5 },
      { turns: 2, calls: 5 },
      { turns: 3, calls: 3 },
      { turns: 0, calls: 0 },
      { turns: 3, calls: 5 },
      { turns: 3, calls: 5 },
      null,
      { turns: 2, calls: 0 },
    ]);
    expect(together.map((a) => a?.scope.conversationId ?? null)).toEqual([...ts.map((t) => t.scope.conversationId), null, ts[5]!.scope.conversationId]);
    if (ts[0]!.db.provider === "postgresql") expect(ts[0]!.statements() - before).toBeLessThanOrEqual(2);
    else expect(ts[0]!.statements() - before).toBe(asks.length);
  });
});
