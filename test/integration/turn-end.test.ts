/**
 * The turn's last writes (src/turn/turn-end-store.ts): the reply and what the turn drew on. On
 * PostgreSQL one statement stores both; on SQLite the reply alone, the trace after it
 * (TraceStore.record). Either way the stored trace must be the same, a turn taken over must store
 * neither, and a reaction counted before the trace is written keeps its count.
 */
import { expect, it } from "vitest";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { TraceStore, type TurnDrew } from "../../src/learning/trace-store.ts";
import { TurnEndStore } from "../../src/turn/turn-end-store.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

const DREW: TurnDrew = {
  toolCalls: [{ name: "skill_view", input: { name: "deploys" } }, { name: "session_search", input: { query: "freeze" } }],
  lessonIds: ["lesson-1"],
  ruleIds: ["rule-1", "rule-2"],
  factIds: ["fact-1"],
  searches: [{ query: "freeze", messageIds: [7, 3] }],
};

forEachDatabase("a turn's last writes", (getDb) => {
  async function setUp() {
    const db = getDb();
    const history = new HistoryStore(db);
    const traces = new TraceStore(db.prisma, db);
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "q1"));
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const q1 = (await history.recordInbound(place, inboundFor(o, "q1"), session.id))!;
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    // The reply's statements counted, whichever store sends them.
    const ends = new TurnEndStore({ provider: db.provider, direct }, new HistoryStore({ ...db, direct }));
    /** The reply stored as a turn stores it: its trace after it when the statement did not carry it. */
    const end = async (drew: TurnDrew | null, lease: { owner: string; until: Date } | null = null) => {
      const r = await ends.record(place, session.id, q1.id, "a1", drew ? "sent" : "failed", lease, drew);
      if (r.reply && drew && !r.traced) await traces.record({ ...drew, replyMessageId: r.reply.id, workspaceId: place.workspace.id, conversationId: place.conversation.id });
      return r;
    };
    return { db, history, traces, place, session, q1, end, statements: () => statements };
  }

  it("stores the reply and what the turn drew on; on PostgreSQL both in the reply's one statement", async () => {
    const t = await setUp();
    const { reply, traced } = await t.end(DREW);
    expect(reply?.text).toBe("a1");
    expect(reply?.replyToId).toBe(t.q1.id);
    expect(traced).toBe(t.db.provider === "postgresql");
    expect(t.statements()).toBe(1);
    const stored = await t.db.prisma.message.findUnique({ where: { id: reply!.id } });
    expect(stored).toMatchObject({ role: "assistant", text: "a1", status: "sent", sessionId: t.session.id, replyToId: t.q1.id });
    expect(await t.traces.get(scopeOf(t.place), reply!.id)).toEqual({
      toolCalls: 2,
      skills: ["deploys"],
      lessons: ["lesson-1"],
      rules: ["rule-1", "rule-2"],
      facts: ["fact-1"],
      searches: [{ query: "freeze", messageIds: [7, 3] }],
      positive: 0,
      negative: 0,
    });
    const row = await t.db.prisma.replyTrace.findUnique({ where: { messageId: reply!.id } });
    expect(row?.conversationId).toBe(t.place.conversation.id);
    expect(Math.abs(row!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it("leaves no trace for a turn that drew on nothing, or failed", async () => {
    const t = await setUp();
    const plain = await t.end({ toolCalls: [], lessonIds: [], ruleIds: [], factIds: [], searches: [] });
    const failed = await t.end(null);
    expect(failed.reply?.status).toBe("failed");
    for (const r of [plain, failed]) expect(await t.db.prisma.replyTrace.findUnique({ where: { messageId: r.reply!.id } })).toBeNull();
  });

  it("stores neither reply nor trace when another process holds the turn's lease", async () => {
    const t = await setUp();
    await t.db.prisma.message.update({ where: { id: t.q1.id }, data: { leaseOwner: "other-process", leaseUntil: new Date(Date.now() + 60_000) } });
    const lost = await t.end(DREW, { owner: "this-process", until: new Date(Date.now() + 60_000) });
    expect(lost).toEqual({ reply: null, traced: false });
    expect(await t.db.prisma.message.count({ where: { replyToId: t.q1.id } })).toBe(0);
    expect(await t.db.prisma.replyTrace.count({ where: { workspaceId: t.place.workspace.id } })).toBe(0);
    // Held by this process: stored, with its trace.
    const held = await t.end(DREW, { owner: "other-process", until: new Date(Date.now() + 60_000) });
    expect(held.reply).not.toBeNull();
    expect((await t.traces.get(scopeOf(t.place), held.reply!.id))?.rules).toEqual(["rule-1", "rule-2"]);
  });

  it("keeps a reaction's count when the trace is written over the row it started", async () => {
    const t = await setUp();
    const { reply } = await t.end({ toolCalls: [], lessonIds: [], ruleIds: [], factIds: [] });
    await t.traces.count(scopeOf(t.place), reply!.id, "positive", 1);
    await t.traces.record({ ...DREW, replyMessageId: reply!.id, workspaceId: t.place.workspace.id, conversationId: t.place.conversation.id });
    expect(await t.traces.get(scopeOf(t.place), reply!.id)).toMatchObject({ positive: 1, negative: 0, lessons: ["lesson-1"], skills: ["deploys"] });
  });

  it("stores a burst's replies and traces as each alone; on PostgreSQL a batch per lease owner; a turn taken over stores nothing", async () => {
    const ts: Awaited<ReturnType<typeof setUp>>[] = [];
    for (let c = 0; c < 8; c++) ts.push(await setUp());
    const db = ts[0]!.db;
    let statements = 0;
    const direct = { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)) };
    const ends = new TurnEndStore({ provider: db.provider, direct }, new HistoryStore({ ...db, direct }));
    const until = new Date(Date.now() + 60_000);
    // The last four under this process's lease, but ts[6]'s turn was taken over by another process.
    for (const [i, t] of ts.entries()) if (i >= 4) await db.prisma.message.update({ where: { id: t.q1.id }, data: { leaseOwner: i === 6 ? "other-process" : "this-process", leaseUntil: until } });
    const drew = (i: number): TurnDrew => ({ ...DREW, lessonIds: [`lesson-${i}`], factIds: [`fact-${i}`] });
    const ended = await Promise.all(ts.map((t, i) => ends.record(t.place, t.session.id, t.q1.id, `a${i}`, "sent", i >= 4 ? { owner: "this-process", until } : null, drew(i))));
    for (const [i, t] of ts.entries()) {
      if (i === 6) {
        expect(ended[i]).toEqual({ reply: null, traced: false });
        expect(await db.prisma.message.count({ where: { replyToId: t.q1.id } })).toBe(0);
        continue;
      }
      const { reply, traced } = ended[i]!;
      if (!reply?.id) throw new Error(`no reply for ${i}`);
      expect(traced).toBe(db.provider === "postgresql");
      if (!traced) await t.traces.record({ ...drew(i), replyMessageId: reply.id, workspaceId: t.place.workspace.id, conversationId: t.place.conversation.id });
      expect(await db.prisma.message.findUnique({ where: { id: reply.id } })).toMatchObject({ text: `a${i}`, replyToId: t.q1.id, sessionId: t.session.id, conversationId: t.place.conversation.id, role: "assistant" });
      expect(await t.traces.get(scopeOf(t.place), reply.id)).toMatchObject({ lessons: [`lesson-${i}`], facts: [`fact-${i}`], rules: ["rule-1", "rule-2"], skills: ["deploys"], searches: [{ query: "freeze", messageIds: [7, 3] }] });
    }
    // PostgreSQL: per kind (no lease, this process's lease), the first alone and the rest as one.
    if (db.provider === "postgresql") expect(statements).toBeLessThanOrEqual(4);
  });
});
