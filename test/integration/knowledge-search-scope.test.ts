/**
 * Channel knowledge through search, on both databases: the candidates a search reads are the newest
 * matches of the channels the asker can read (in order, up to the limit), their counts are of those
 * channels alone, and a search whose words match more than its candidates (counted first, then
 * kept: it skips the unranked look) returns the same again. Nothing comes from a channel the asker
 * cannot read, nor from the same channel kept in another workspace, though those are newer and more
 * numerous (the knowledge scan walks past them).
 */
import { expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { postgresQueries } from "../../src/history/store/search-postgres.ts";
import { DF_CAP, type Ctx } from "../../src/history/store/search-queries.ts";
import { sqliteQueries } from "../../src/history/store/search-sqlite.ts";
import { knowledgeKey } from "../../src/knowledge/store.ts";
import { forEachDatabase, place, uniqueId, type Database } from "../support/db.ts";

/**
 * Messages kept per channel: two readable channels hold more than DF_CAP of "deploy", so a search's
 * second look at it knows it common (and far more than a search's 400 candidates).
 */
const PER_CHANNEL = Math.ceil(DF_CAP / 2) + 100;

interface Kept {
  scope: Scope;
  /** Message ids by channel, oldest first. */
  ids: Map<string, number[]>;
  /** Ids of the same channels kept in another workspace. */
  elsewhere: number[];
}

/** A channel's kept messages; every message says "deploy", every seventh "rollback" too. */
async function keep(db: Database, workspaceId: string, channel: string, start: number): Promise<number[]> {
  const conversation = await db.prisma.conversation.create({
    data: { workspaceId, key: knowledgeKey("slack", workspaceId, channel), channelId: channel, threadId: null, isDm: false, ownerId: null, kind: "channel" },
  });
  const base = Date.UTC(2026, 0, 1) + start * 60_000;
  await db.prisma.message.createMany({
    data: Array.from({ length: PER_CHANNEL }, (_, i) => ({
      workspaceId,
      conversationId: conversation.id,
      role: "channel",
      status: "kept",
      platformId: `${channel}-${i}`,
      text: `${channel.toLowerCase()} deploy staging ${i % 7 === 0 ? "rollback" : "pipeline"} number ${i}`,
      createdAt: new Date(base + i * 1000),
    })),
  });
  const rows = await db.prisma.message.findMany({ where: { conversationId: conversation.id }, select: { id: true }, orderBy: { id: "asc" } });
  return rows.map((r) => r.id);
}

forEachDatabase("channel knowledge search", (getDb) => {
  /** Channels A and B (readable) kept first, then C (not readable) and A in another workspace, newer. */
  async function seed(): Promise<Kept> {
    const db = getDb();
    const ws = uniqueId("ws");
    const { scope } = await place(db, { workspace: ws, user: "U1", channel: "D1", isDm: true });
    const other = await place(db, { workspace: uniqueId("ws"), user: "U1", channel: "D1", isDm: true });
    const ids = new Map<string, number[]>();
    for (const [i, channel] of ["CA", "CB", "CC"].entries()) ids.set(channel, await keep(db, scope.workspaceId, channel, i * PER_CHANNEL));
    const elsewhere = await keep(db, other.scope.workspaceId, "CA", 0);
    return { scope, ids, elsewhere };
  }

  const queries = () => (getDb().provider === "sqlite" ? sqliteQueries : postgresQueries);
  const ctx = (scope: Scope, readable: string[]): Ctx => ({ database: getDb(), scope, exclude: "", readable: JSON.stringify(readable), filter: {} });

  it("reads the newest matches of the readable channels, in order, and counts only them", async () => {
    const { scope, ids, elsewhere } = await seed();
    const readable = [...ids.get("CA")!, ...ids.get("CB")!];
    const newest = [...readable].sort((a, b) => b - a);

    const unranked = await queries().lexical(ctx(scope, ["CA", "CB"]), ["deploy"], 50, false, false);
    expect(unranked.map((r) => r[0])).toEqual(newest.slice(0, 50));

    // Ranked among the newest matches: only readable channels' messages, each holding a word asked.
    for (const common of [false, true]) {
      const ranked = await queries().lexical(ctx(scope, ["CA", "CB"]), ["rollback", "deploy"], 40, true, common);
      expect(ranked.length).toBe(40);
      for (const r of ranked) expect(readable).toContain(r[0]);
    }

    const [deploy, rollback] = await queries().df(ctx(scope, ["CA", "CB"]), ["deploy", "rollback"]);
    expect(deploy).toBe(Math.min(DF_CAP, readable.length));
    expect(rollback).toBe(2 * Math.ceil(PER_CHANNEL / 7));

    // A reader of none reads no channel at all; a reader of C alone, C alone.
    expect(await queries().lexical(ctx(scope, []), ["deploy"], 50, false, false)).toEqual([]);
    const onlyC = await queries().lexical(ctx(scope, ["CC"]), ["deploy"], PER_CHANNEL + 10, false, false);
    expect(onlyC.map((r) => r[0]).sort((a, b) => a - b)).toEqual(ids.get("CC"));
    expect(onlyC.some((r) => elsewhere.includes(r[0]))).toBe(false);
  });

  it("session_search's filters narrow the channels' candidates in every path", async () => {
    const { scope, ids } = await seed();
    const first = ids.get("CA")!.slice(0, 100);
    // Channel A's first hundred messages were kept before this moment; every other message after it.
    const before = new Date(Date.UTC(2026, 0, 1) + 100 * 1000);
    const c: Ctx = { ...ctx(scope, ["CA", "CB"]), filter: { before } };
    for (const [ranked, common] of [[false, false], [true, false], [true, true]] as const) {
      const rows = await queries().lexical(c, ["deploy"], 400, ranked, common);
      expect(rows.map((r) => r[0]).sort((a, b) => a - b), `ranked ${ranked}, common ${common}`).toEqual(first);
    }
    const inB = await queries().lexical({ ...ctx(scope, ["CA", "CB"]), filter: { channel: "CB" } }, ["rollback"], 400, false, false);
    expect(inB.length).toBeGreaterThan(0);
    for (const r of inB) expect(ids.get("CB")).toContain(r[0]);
    // By the channel's conversation ids (session_search resolves them), ranked or not: the same messages.
    const cb = await getDb().prisma.conversation.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, channelId: "CB" } });
    for (const ranked of [false, true]) {
      const byIds = await queries().lexical({ ...ctx(scope, ["CA", "CB"]), filter: { channel: "CB", conversationIds: [cb.id] } }, ["rollback"], 400, ranked, false);
      expect(byIds.map((r) => r[0]).sort((a, b) => a - b), `ranked ${ranked}`).toEqual(inB.map((r) => r[0]).sort((a, b) => a - b));
    }
  });

  it("a search of common words finds the same twice, all in scope", async () => {
    const { scope, ids, elsewhere } = await seed();
    const readable = new Set([...ids.get("CA")!, ...ids.get("CB")!]);
    // All words common (ranked among the newest matches), and one rarer word (ranked by it).
    for (const query of ["deploy staging", "deploy rollback staging"]) {
      const search = () => searchMessages(getDb(), scope, query, { limit: 10, readable: ["CA", "CB"] });
      const first = await search();
      const again = await search();
      expect(first.length).toBe(10);
      expect(again.map((h) => h.messageId)).toEqual(first.map((h) => h.messageId));
      for (const hit of first) {
        expect(readable.has(hit.messageId)).toBe(true);
        expect(elsewhere).not.toContain(hit.messageId);
        expect(hit.role).toBe("channel");
      }
      if (query.includes("rollback")) for (const hit of first) expect(hit.snippet).toContain("rollback");
      // The reader of none gets nothing from any channel.
      expect(await searchMessages(getDb(), scope, query, { limit: 10, readable: [] })).toEqual([]);
    }
  });
});

