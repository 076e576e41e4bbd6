/**
 * The statements a turn starts with read the session's rows through the session's index and the
 * conversation's leased rows through theirs, with the scope's columns checked on the rows found
 * (db/checked-on-rows.ts), before and after the database has statistics. Without statistics
 * PostgreSQL planned both by the workspace's index (two equalities looked more selective than one)
 * and read every message of the workspace per turn: in a burst, hundreds of rows for each of hundreds
 * of turns. The statements are the store's own, taken as it sends them, and explained with their values.
 */
import { expect, it } from "vitest";
import type { Database } from "../../src/db/client.ts";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf, type Place } from "../../src/history/store/store.ts";
import { CorrectionStore } from "../../src/learning/correction-store.ts";
import { TurnStartStore } from "../../src/turn/turn-start-store.ts";
import { LeaseStore } from "../../src/turn/lease-store.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

const CONVERSATIONS = 30;
const QUESTIONS = 8;
/** Indexes that hold the whole workspace: reading a turn's rows through them reads every conversation's. */
const WORKSPACE_WIDE = ["Message_workspaceId_role_idx", "Message_workspaceId_createdAt_idx"];

type Sent = { sql: string; params: readonly SqlParam[] };

/** `db`'s direct path, recording each statement it is sent (the store's own text and values). */
function recording(db: Database): { direct: Database["direct"]; sent: Sent[] } {
  const sent: Sent[] = [];
  return { sent, direct: { ...db.direct, rows: (sql: string, params: readonly SqlParam[]) => (sent.push({ sql, params }), db.direct.rows(sql, params)) } };
}

forEachDatabase("a turn's first read, planned", (getDb) => {
  /** One workspace of many conversations, some turns under way (leased), and the statements a few turns start with. */
  async function burst(db: Database) {
    const history = new HistoryStore(db);
    const workspace = uniqueId("ws");
    const places: { place: Place; session: { id: string } }[] = [];
    for (let c = 0; c < CONVERSATIONS; c++) {
      const o = { workspace, user: `U${c}`, channel: `C${c}`, isDm: false };
      const place = await history.resolve(inboundFor(o, "hi"));
      const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
      const base = { workspaceId: place.workspace.id, conversationId: place.conversation.id, sessionId: session.id, authorId: place.person.id };
      await db.prisma.message.createMany({ data: Array.from({ length: QUESTIONS }, (_, k) => ({ ...base, role: "user", text: `question ${k}`, platformId: uniqueId("m") })) });
      places.push({ place, session });
    }
    // Other processes' turns under way in a third of the conversations.
    const leased = await db.prisma.message.findMany({ where: { workspaceId: places[0]!.place.workspace.id, text: "question 0" }, select: { id: true }, orderBy: { id: "asc" }, take: CONVERSATIONS / 3 });
    await db.prisma.message.updateMany({ where: { id: { in: leased.map((m) => m.id) } }, data: { leaseOwner: "other-process", leaseUntil: new Date(Date.now() + 60_000) } });

    const { direct, sent } = recording(db);
    const starts = new TurnStartStore({ provider: db.provider, direct }, history, new CorrectionStore(db.prisma, () => new Date(), 60_000));
    // Turns at once, each under a lease: on PostgreSQL the first goes alone, the others together.
    const lasts = await Promise.all(places.slice(0, 4).map(({ session }) => db.prisma.message.findFirstOrThrow({ where: { sessionId: session.id }, orderBy: { id: "desc" } })));
    const read = await Promise.all(
      lasts.map((last, i) => starts.read(scopeOf(places[i]!.place), places[i]!.session.id, null, last.id, { owner: "this-process", message: { id: last.id, createdAt: last.createdAt } })),
    );
    expect(read.map((r) => r.messages.length)).toEqual([QUESTIONS, QUESTIONS, QUESTIONS, QUESTIONS]);
    expect(read.map((r) => r.aheadSeen)).toEqual([true, true, true, true]);
    return { sent, places };
  }

  async function plan(db: Database, { sql, params }: Sent): Promise<string> {
    const rows = await db.direct.rows(`${db.provider === "sqlite" ? "EXPLAIN QUERY PLAN" : "EXPLAIN"} ${sql}`, params);
    return rows.map((r) => String(r[r.length - 1])).join("\n");
  }

  it("reads the session and the conversation's leases by their own indexes, with statistics or none", async () => {
    const db = getDb();
    const { sent } = await burst(db);
    if (db.provider === "postgresql") expect(sent.some((s) => s.sql.includes("unnest("))).toBe(true);
    for (const analyzed of [false, true]) {
      if (analyzed) await db.direct.rows(`ANALYZE ${db.provider === "sqlite" ? "" : '"Message"'}`, []);
      for (const statement of sent) {
        const text = await plan(db, statement);
        expect(text, `analyzed: ${analyzed}\n${text}`).toContain("Message_sessionId_id_idx");
        expect(text, `analyzed: ${analyzed}\n${text}`).toContain("Message_leaseConversation_idx");
        for (const wide of WORKSPACE_WIDE) expect(text, `analyzed: ${analyzed}\n${text}`).not.toContain(wide);
      }
    }
  });

  it("looks for a conversation's expired leases and turns ahead through the conversation's leased rows", async () => {
    const db = getDb();
    const { places } = await burst(db);
    const { direct, sent } = recording(db);
    const leases = new LeaseStore({ ...db, direct });
    const scope = scopeOf(places[0]!.place);
    const leased = await db.prisma.message.findFirstOrThrow({ where: { conversationId: scope.conversationId, leaseOwner: "other-process" } });
    const later = await db.prisma.message.findFirstOrThrow({ where: { conversationId: leased.conversationId, id: { gt: leased.id } } });
    expect((await leases.ahead(scope, "this-process", later)).map((a) => a.id)).toEqual([leased.id]);
    expect(await leases.expired(scope, new Date(Date.now() + 120_000))).toEqual([leased.id]);
    expect(sent).toHaveLength(2);
    for (const statement of sent) {
      const text = await plan(db, statement);
      expect(text, text).toContain("Message_leaseConversation_idx");
      for (const wide of WORKSPACE_WIDE) expect(text, text).not.toContain(wide);
    }
  });
});
