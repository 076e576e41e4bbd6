/**
 * SQLite's history index written in batches (src/history/store/history-index-sqlite.ts): a search
 * finds every message stored before it, whoever stored it; edits and deletions of rows indexed or
 * not leave the index true; stored messages are indexed soon without a search; and a database
 * migrated with messages in it indexes none of them twice. "True" is FTS5's own integrity check
 * against the Message table (rank 1): it fails on a row missing from the index, a row indexed
 * twice, and words left behind by an edit or a deletion.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { loadMigrations, migrateSqlite } from "../../src/db/migrate.ts";
import { INDEX_AFTER_MS } from "../../src/history/store/history-index-sqlite.ts";
import { HistoryStore } from "../../src/history/store/store.ts";
import { scopeOf } from "../../src/history/store/place.ts";
import { inboundFor, sameDatabase, uniqueId, type PlaceOptions } from "../support/db.ts";

const OPTS = { limit: 50 };

describe("[sqlite] history's full-text index, written in batches", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-history-index-"));
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase(`file:${join(dir, "cairn.db")}`);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const indexedThrough = async (d: Database): Promise<number> => Number((await d.direct.rows(`SELECT "through" FROM "HistoryIndexed"`, []))[0]![0]);
  /** FTS5's check of message_fts against every row of Message (no channel knowledge here). */
  const integrityCheck = (d: Database) => d.direct.rows(`INSERT INTO "message_fts"("message_fts", rank) VALUES ('integrity-check', 1)`, []);

  async function conversation(d: Database = db) {
    const history = new HistoryStore(d);
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "hello"));
    const say = (text: string) => history.recordInbound(place, inboundFor(o, text)).then((m) => m!);
    const found = async (word: string) => (await history.search(scopeOf(place), word, OPTS)).map((h) => h.messageId).sort((a, b) => a - b);
    return { history, place, o, say, found };
  }

  it("finds every message stored before a search, however soon the search comes", async () => {
    const c = await conversation();
    const stored = await Promise.all(Array.from({ length: 30 }, (_, i) => c.say(`the quokka census, count ${i}`)));
    // Not indexed yet: the catch-up waits INDEX_AFTER_MS, and no search has come.
    expect(await indexedThrough(db)).toBeLessThan(Math.max(...stored.map((m) => m.id)));
    expect(await c.found("quokka")).toEqual(stored.map((m) => m.id).sort((a, b) => a - b));
    expect(await indexedThrough(db)).toBeGreaterThanOrEqual(Math.max(...stored.map((m) => m.id)));
    await expect(integrityCheck(db)).resolves.toBeDefined();
  });

  it("keeps the index true through edits and deletions of rows indexed and not", async () => {
    const c = await conversation();
    const editedIndexed = await c.say("the pangolin roadmap");
    const deletedIndexed = await c.say("the pangolin budget");
    expect(await c.found("pangolin")).toEqual([editedIndexed.id, deletedIndexed.id]);
    const editedLater = await c.say("the pangolin offsite");
    const deletedLater = await c.say("the pangolin headcount");
    expect(await indexedThrough(db)).toBeLessThan(editedLater.id);

    const edit = (id: number, text: string) => db.prisma.message.update({ where: { id }, data: { text } });
    await edit(editedIndexed.id, "the armadillo roadmap");
    await edit(editedLater.id, "the armadillo offsite");
    await db.prisma.message.deleteMany({ where: { id: { in: [deletedIndexed.id, deletedLater.id] } } });

    expect(await c.found("pangolin")).toEqual([]);
    expect(await c.found("armadillo")).toEqual([editedIndexed.id, editedLater.id]);
    expect(await c.found("budget")).toEqual([]);
    expect(await c.found("headcount")).toEqual([]);
    await expect(integrityCheck(db)).resolves.toBeDefined();
  });

  it("indexes stored messages soon after, with no search to ask", async () => {
    const c = await conversation();
    const m = await c.say("the capybara rota");
    const session = await db.prisma.chatSession.create({ data: { conversationId: c.place.conversation.id } });
    const reply = await c.history.recordReply(c.place, session.id, m.id, "the capybara rota is on the wiki", "sent");
    await vi.waitFor(async () => expect(await indexedThrough(db)).toBeGreaterThanOrEqual(reply.id), { timeout: 20 * INDEX_AFTER_MS, interval: INDEX_AFTER_MS / 5 });
    const rows = await db.direct.rows(`SELECT rowid FROM "message_fts" WHERE "message_fts" MATCH 'capybara' ORDER BY rowid`, []);
    expect(rows.map((r) => Number(r[0]))).toEqual([m.id, reply.id]);
  });

  it("finds what another process stored and has not indexed", async () => {
    const other = await sameDatabase(db);
    try {
      const there = await conversation(other);
      const m = await there.say("the okapi migration plan");
      const here = new HistoryStore(db);
      const hits = await here.search(scopeOf(there.place), "okapi", OPTS);
      expect(hits.map((h) => h.messageId)).toEqual([m.id]);
    } finally {
      await other.close();
    }
  });
});

describe("[sqlite] migrating a database with history to the batched index", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-history-index-migrate-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("starts its mark after the messages already indexed, and indexes none twice", async () => {
    const file = join(dir, "old.db");
    const all = loadMigrations("sqlite");
    const at = all.findIndex((m) => m.name.endsWith("_history_index_later"));
    expect(at).toBeGreaterThan(0);
    const raw = new BetterSqlite3(file);
    try {
      migrateSqlite(raw, all.slice(0, at));
      raw.exec(`INSERT INTO "Workspace" (id, platform, "externalId", name) VALUES ('w1', 'slack', 'T1', 'T')`);
      raw.exec(`INSERT INTO "Conversation" (id, "workspaceId", key, "channelId", "isDm") VALUES ('c1', 'w1', 'slack:T1:C1:main', 'C1', 0)`);
      const insert = raw.prepare(`INSERT INTO "Message" ("workspaceId", "conversationId", role, text, "createdAt") VALUES ('w1', 'c1', 'user', ?, ?)`);
      for (const text of ["the wombat retro", "the wombat launch"]) insert.run(text, new Date().toISOString().replace("Z", "+00:00"));
      migrateSqlite(raw, all);
      expect(raw.prepare(`SELECT "through" FROM "HistoryIndexed"`).pluck().get()).toBe(raw.prepare(`SELECT MAX(id) FROM "Message"`).pluck().get());
    } finally {
      raw.close();
    }
    const db = await openDatabase(`file:${file}`);
    try {
      const history = new HistoryStore(db);
      const place = await history.resolve(inboundFor({ workspace: "T1", user: "U1", channel: "C1", isDm: false }, "hi"));
      const later = (await history.recordInbound(place, inboundFor({ workspace: "T1", user: "U1", channel: "C1", isDm: false }, "the wombat budget")))!;
      const hits = await history.search(scopeOf(place), "wombat", OPTS);
      expect(hits.map((h) => h.messageId).sort((a, b) => a - b)).toEqual([1, 2, later.id]);
      await expect(db.direct.rows(`INSERT INTO "message_fts"("message_fts", rank) VALUES ('integrity-check', 1)`, [])).resolves.toBeDefined();
    } finally {
      await db.close();
    }
  });
});
