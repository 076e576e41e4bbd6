/**
 * Stored embeddings (MessageVector, EntryVector): what is still to embed in a space, saving vectors,
 * the backlog, and the vectors of entries a turn already holds. Reading messages nearest a query is
 * the search's (history/store/search-vectors.ts), under the search's scope clause.
 *
 * What is embedded: people's messages, cairn's replies and kept channel messages (never a failed
 * one, nor an erased one's tombstone), and memory entries that are active (facts, lessons, rules).
 * Nothing here is a queue: what is missing is read from the tables, so the work survives restarts
 * and outages, backfills what was stored before embeddings were turned on, and two replicas doing
 * the same batch write the same rows (the second's are ignored).
 */
import { createHash } from "node:crypto";
import type { Database } from "../../db/client.ts";
import { sqlTime, type SqlParam } from "../../db/direct.ts";
import { ERASED_TEXT } from "../../history/store/store.ts";
import type { Scope } from "../../ground/types.ts";

export interface PendingMessage {
  id: number;
  workspaceId: string;
  text: string;
}

export interface PendingEntry {
  id: string;
  workspaceId: string;
  text: string;
  textHash: string;
}

export interface Embedded {
  workspaceId: string;
  /** The int8 coding (ground/vector.ts); empty: the endpoint refused the text, not to be asked again. */
  vector: Uint8Array;
}

export interface Backlog {
  messages: number;
  entries: number;
}

/** The short hash an entry's vector records of the text it was made from. */
export const textHash = (text: string): string => createHash("sha1").update(text).digest("hex").slice(0, 16);

const MESSAGE_ROLES = `('user', 'assistant', 'channel')`;
const buf = (v: Uint8Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

export class VectorStore {
  constructor(private readonly db: Database) {}

  /** How this database computes vector distances (for the log line at start). */
  engine(): string {
    return this.db.vectorSearch();
  }

  private rows(sqlite: string, postgres: string, params: SqlParam[]): Promise<unknown[][]> {
    return this.db.direct.scan(this.db.provider === "sqlite" ? sqlite : postgres, params);
  }

  /**
   * Messages with no vector in `space` on one side of an id: `{ after }` the oldest first above it
   * (what arrived since the worker last looked), `{ before }` the newest first below it (the
   * backfill, walking back from the recent past people ask about most). Each walk reads from its
   * cursor on, so a backfill of a million messages reads each of them about once.
   */
  async pendingMessages(space: string, limit: number, from: { after: number } | { before: number }): Promise<PendingMessage[]> {
    const after = "after" in from;
    const rows = await this.rows(
      `SELECT m.id, m.workspaceId, m.text FROM "Message" m
        WHERE m.id ${after ? ">" : "<"} ? AND m.role IN ${MESSAGE_ROLES} AND m.status <> 'failed' AND m.text <> ? AND m.text <> ''
          AND NOT EXISTS (SELECT 1 FROM "MessageVector" v WHERE v.messageId = m.id AND v.space = ?)
        ORDER BY m.id ${after ? "ASC" : "DESC"} LIMIT ?`,
      `SELECT m.id, m."workspaceId", m.text FROM "Message" m
        WHERE m.id ${after ? ">" : "<"} $1 AND m.role IN ${MESSAGE_ROLES} AND m.status <> 'failed' AND m.text <> $2 AND m.text <> ''
          AND NOT EXISTS (SELECT 1 FROM "MessageVector" v WHERE v."messageId" = m.id AND v.space = $3)
        ORDER BY m.id ${after ? "ASC" : "DESC"} LIMIT $4`,
      [after ? from.after : from.before, ERASED_TEXT, space, limit],
    );
    return rows.map((r) => ({ id: Number(r[0]), workspaceId: r[1] as string, text: r[2] as string }));
  }

  /** The highest message id now (0 for none): where the walks start. */
  async lastMessageId(): Promise<number> {
    const rows = await this.rows(`SELECT max(id) FROM "Message"`, `SELECT max(id) FROM "Message"`, []);
    return Number(rows[0]?.[0] ?? 0);
  }

  /** Active memory entries with no vector in `space` for their current text. */
  async pendingEntries(space: string, limit: number): Promise<PendingEntry[]> {
    const rows = await this.rows(
      `SELECT e.id, e.workspaceId, e.text, v.textHash FROM "MemoryEntry" e
         LEFT JOIN "EntryVector" v ON v.entryId = e.id AND v.space = ?
        WHERE e.status = 'active' AND e.text <> '' ORDER BY e.createdAt DESC`,
      `SELECT e.id, e."workspaceId", e.text, v."textHash" FROM "MemoryEntry" e
         LEFT JOIN "EntryVector" v ON v."entryId" = e.id AND v.space = $1
        WHERE e.status = 'active' AND e.text <> '' ORDER BY e."createdAt" DESC`,
      [space],
    );
    const out: PendingEntry[] = [];
    for (const r of rows) {
      const text = r[2] as string;
      const hash = textHash(text);
      if (r[3] !== hash) out.push({ id: r[0] as string, workspaceId: r[1] as string, text, textHash: hash });
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Keeps messages' vectors, one statement a batch; a message deleted or erased meanwhile, or
   * embedded by another replica, is skipped.
   */
  async saveMessages(space: string, items: readonly (Embedded & { id: number })[]): Promise<void> {
    if (items.length === 0) return;
    const now = sqlTime(this.db.provider, new Date());
    const sqlite = items.map(() => "(?, ?, ?)").join(", ");
    const pg = items.map((_, i) => `($${4 + i * 3}::int, $${5 + i * 3}, $${6 + i * 3}::bytea)`).join(", ");
    await this.rows(
      `INSERT INTO "MessageVector" (messageId, space, workspaceId, vector, createdAt)
       SELECT v.column1, ?, v.column2, v.column3, ? FROM (VALUES ${sqlite}) v
         JOIN "Message" m ON m.id = v.column1 AND m.text <> ? WHERE true
       ON CONFLICT DO NOTHING`,
      `INSERT INTO "MessageVector" ("messageId", space, "workspaceId", vector, "createdAt")
       SELECT v.id, $1, v.ws, v.vec, $2::timestamp FROM (VALUES ${pg}) v(id, ws, vec)
         JOIN "Message" m ON m.id = v.id AND m.text <> $3
       ON CONFLICT DO NOTHING`,
      this.db.provider === "sqlite"
        ? [space, now, ...items.flatMap((it) => [it.id, it.workspaceId, buf(it.vector)]), ERASED_TEXT]
        : [space, now, ERASED_TEXT, ...items.flatMap((it) => [it.id, it.workspaceId, buf(it.vector)])],
    );
  }

  /** Keeps entries' vectors (replacing one made from an older text), one statement a batch; a deleted entry is skipped. */
  async saveEntries(space: string, items: readonly (Embedded & { id: string; textHash: string })[]): Promise<void> {
    if (items.length === 0) return;
    const now = sqlTime(this.db.provider, new Date());
    const sqlite = items.map(() => "(?, ?, ?, ?)").join(", ");
    const pg = items.map((_, i) => `($${3 + i * 4}, $${4 + i * 4}, $${5 + i * 4}, $${6 + i * 4}::bytea)`).join(", ");
    await this.rows(
      `INSERT INTO "EntryVector" (entryId, space, workspaceId, textHash, vector, createdAt)
       SELECT v.column1, ?, v.column2, v.column3, v.column4, ? FROM (VALUES ${sqlite}) v
         JOIN "MemoryEntry" e ON e.id = v.column1 WHERE true
       ON CONFLICT (entryId, space) DO UPDATE SET textHash = excluded.textHash, vector = excluded.vector, createdAt = excluded.createdAt`,
      `INSERT INTO "EntryVector" ("entryId", space, "workspaceId", "textHash", vector, "createdAt")
       SELECT v.id, $1, v.ws, v.hash, v.vec, $2::timestamp FROM (VALUES ${pg}) v(id, ws, hash, vec)
         JOIN "MemoryEntry" e ON e.id = v.id
       ON CONFLICT ("entryId", space) DO UPDATE SET "textHash" = excluded."textHash", vector = excluded.vector, "createdAt" = excluded."createdAt"`,
      [space, now, ...items.flatMap((it) => [it.id, it.workspaceId, it.textHash, buf(it.vector)])],
    );
  }

  /** What is still to embed in `space` (messages above `above`, as pendingMessages counts them). */
  async backlog(space: string, above = 0): Promise<Backlog> {
    const rows = await this.rows(
      `SELECT (SELECT count(*) FROM "Message" m WHERE m.id > ? AND m.role IN ${MESSAGE_ROLES} AND m.status <> 'failed' AND m.text <> ? AND m.text <> ''
                 AND NOT EXISTS (SELECT 1 FROM "MessageVector" v WHERE v.messageId = m.id AND v.space = ?)),
              (SELECT count(*) FROM "MemoryEntry" e WHERE e.status = 'active' AND e.text <> ''
                 AND NOT EXISTS (SELECT 1 FROM "EntryVector" v WHERE v.entryId = e.id AND v.space = ?))`,
      `SELECT (SELECT count(*) FROM "Message" m WHERE m.id > $1 AND m.role IN ${MESSAGE_ROLES} AND m.status <> 'failed' AND m.text <> $2 AND m.text <> ''
                 AND NOT EXISTS (SELECT 1 FROM "MessageVector" v WHERE v."messageId" = m.id AND v.space = $3)),
              (SELECT count(*) FROM "MemoryEntry" e WHERE e.status = 'active' AND e.text <> ''
                 AND NOT EXISTS (SELECT 1 FROM "EntryVector" v WHERE v."entryId" = e.id AND v.space = $3))`,
      this.db.provider === "sqlite" ? [above, ERASED_TEXT, space, space] : [above, ERASED_TEXT, space],
    );
    return { messages: Number(rows[0]?.[0] ?? 0), entries: Number(rows[0]?.[1] ?? 0) };
  }

  /** Vectors of other spaces (an earlier model or length), deleted a batch at a time once this one is complete. */
  async dropOtherSpaces(space: string, limit = 5000): Promise<number> {
    let dropped = 0;
    for (const table of ["MessageVector", "EntryVector"] as const) {
      const key = table === "MessageVector" ? "messageId" : "entryId";
      const rows = await this.rows(
        `DELETE FROM "${table}" WHERE rowid IN (SELECT rowid FROM "${table}" WHERE space <> ? LIMIT ?) RETURNING 1`,
        `DELETE FROM "${table}" WHERE ("${key}", space) IN (SELECT "${key}", space FROM "${table}" WHERE space <> $1 LIMIT $2) RETURNING 1`,
        [space, limit],
      );
      dropped += rows.length;
    }
    return dropped;
  }

  /** The vectors of these entries in `space`, among the asker's workspace's (entries a turn already may see). */
  async entryVectors(scope: Scope, space: string, ids: readonly string[]): Promise<Map<string, Uint8Array>> {
    if (ids.length === 0) return new Map();
    const rows = await this.rows(
      `SELECT v.entryId, v.vector, v.textHash, e.text FROM "EntryVector" v JOIN "MemoryEntry" e ON e.id = v.entryId
        WHERE v.entryId IN (SELECT value FROM json_each(?)) AND v.space = ? AND v.workspaceId = ?`,
      `SELECT v."entryId", v.vector, v."textHash", e.text FROM "EntryVector" v JOIN "MemoryEntry" e ON e.id = v."entryId"
        WHERE v."entryId" IN (SELECT json_array_elements_text($1::json)) AND v.space = $2 AND v."workspaceId" = $3`,
      [JSON.stringify(ids), space, scope.workspaceId],
    );
    const out = new Map<string, Uint8Array>();
    // A vector of an older text would match what the entry no longer says.
    for (const r of rows) if (r[2] === textHash(r[3] as string) && (r[1] as Uint8Array).length > 0) out.set(r[0] as string, r[1] as Uint8Array);
    return out;
  }
}
