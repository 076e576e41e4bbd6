/**
 * The database harness every DB test uses: `forEachDatabase` runs a suite once on SQLite (always)
 * and once on PostgreSQL (when reachable, or failing loudly when CAIRN_REQUIRE_POSTGRES=1).
 *
 * Isolation: each suite (one `forEachDatabase` call, per provider) gets its own fresh database,
 * created in `beforeAll` and destroyed in `afterAll`. Inside a suite, tests isolate themselves by
 * using unique workspace ids (`uniqueId("ws")`): every store query is scoped by workspace, so tests
 * never see each other's rows and can run in any order. `resetData` is there for a suite that wants
 * a truly empty database between tests (it is slower and global: bundled skills go too).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe } from "vitest";
import { openDatabase, type Database } from "../../src/db/client.ts";
import { redact } from "../../bench/lib/db.ts";
import type { Provider } from "../../src/db/migrate.ts";
import type { Inbound, Platform, Scope } from "../../src/ground/types.ts";
import { HistoryStore, scopeOf, type Place } from "../../src/history/store/store.ts";

export type { Database };

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
export const REQUIRE_POSTGRES = process.env.CAIRN_REQUIRE_POSTGRES === "1";


async function probePostgres(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  // An unreachable server can also surface as an 'error' event; never let it crash the worker.
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Checked once when this module loads (once per test process / worker). */
const pgProblem = await probePostgres(ADMIN_URL);

export const databases: { name: Provider; available: boolean }[] = [
  { name: "sqlite", available: true },
  { name: "postgresql", available: pgProblem === null },
];

const NOTICE_FLAG = "__CAIRN_PG_SKIP_NOTICE_PRINTED";

function noticeOnce(): void {
  const g = globalThis as Record<string, unknown>;
  if (g[NOTICE_FLAG] || process.env[NOTICE_FLAG] === "1") return;
  g[NOTICE_FLAG] = true;
  process.env[NOTICE_FLAG] = "1";
  process.stderr.write(
    `\nPostgreSQL not reachable at ${redact(ADMIN_URL)}: PostgreSQL tests skipped (set CAIRN_REQUIRE_POSTGRES=1 to make them mandatory)\n` +
      `  (${pgProblem ?? "unknown error"})\n\n`,
  );
}

export function uniqueId(prefix: string): string {
  return `${prefix}-${randomBytes(6).toString("hex")}`;
}

interface Harness {
  open(): Promise<Database>;
  destroy(db: Database | null): Promise<void>;
}

function sqliteHarness(): Harness {
  let dir: string | null = null;
  return {
    async open() {
      dir = mkdtempSync(join(tmpdir(), "cairn-test-"));
      return openDatabase(`file:${join(dir, "test.db")}`);
    },
    async destroy(db) {
      try {
        await db?.close();
      } finally {
        if (dir) rmSync(dir, { recursive: true, force: true });
        dir = null;
      }
    },
  };
}

/** Runs `fn` on a connection to the server's admin database. */
async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * A fresh, empty PostgreSQL database: its URL (for another process, too) and how to drop it.
 * Throws when PostgreSQL is not reachable.
 */
export async function freshPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  if (pgProblem !== null) {
    throw new Error(
      `PostgreSQL is required (CAIRN_REQUIRE_POSTGRES=1) but not reachable at ${redact(ADMIN_URL)}: ${pgProblem}. ` +
        "Start PostgreSQL or point TEST_DATABASE_URL at a server where this user may CREATE DATABASE.",
    );
  }
  const name = `cairn_test_${randomBytes(8).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined) };
}

function postgresHarness(): Harness {
  let created: Awaited<ReturnType<typeof freshPostgres>> | null = null;
  return {
    async open() {
      created = await freshPostgres();
      return openDatabase(created.url);
    },
    async destroy(db) {
      try {
        await db?.close();
      } finally {
        const drop = created?.drop;
        created = null;
        if (drop) await drop();
      }
    },
  };
}

/** Whether suites that need PostgreSQL run here (reachable, or required and then failing loudly). */
export function postgresSuite(): typeof describe | typeof describe.skip {
  const skip = pgProblem !== null && !REQUIRE_POSTGRES;
  if (skip) noticeOnce();
  return skip ? describe.skip : describe;
}

/**
 * Declares `suiteName` once per provider: `[sqlite] suiteName` and `[postgresql] suiteName`. `fn`
 * registers tests as inside a `describe`; `getDb()` returns the suite's database (valid inside
 * hooks and tests, not at collection time).
 */
export function forEachDatabase(suiteName: string, fn: (getDb: () => Database) => void): void {
  for (const { name, available } of databases) {
    const skip = !available && !REQUIRE_POSTGRES;
    if (skip) noticeOnce();
    const declare = skip ? describe.skip : describe;
    declare(`[${name}] ${suiteName}`, () => {
      const harness = name === "sqlite" ? sqliteHarness() : postgresHarness();
      let db: Database | null = null;
      beforeAll(async () => {
        db = await harness.open();
      });
      afterAll(async () => {
        const d = db;
        db = null;
        await harness.destroy(d);
      });
      fn(() => {
        if (!db) throw new Error(`[${name}] ${suiteName}: the database is not open (call getDb() inside a hook or test)`);
        return db;
      });
    });
  }
}

/**
 * Another handle on `db`'s database, with connections of its own, as another cairn process sharing
 * the database would open: the SQLite file, or the PostgreSQL database, `db` is on. Close it before
 * the suite ends.
 */
export async function sameDatabase(db: Database): Promise<Database> {
  if (db.provider === "sqlite") {
    const rows = await db.prisma.$queryRawUnsafe<{ name: string; file: string }[]>("PRAGMA database_list");
    const file = rows.find((r) => r.name === "main")?.file;
    if (!file) throw new Error("the SQLite database has no file: another process could not open it");
    return openDatabase(`file:${file}`);
  }
  const [row] = await db.prisma.$queryRawUnsafe<{ name: string }[]>("SELECT current_database() AS name");
  const url = new URL(ADMIN_URL);
  url.pathname = `/${row!.name}`;
  return openDatabase(url.toString());
}

/** Deletes every row of every table, children first. Bundled skills are deleted too. */
export async function resetData(db: Database): Promise<void> {
  const p = db.prisma;
  await p.$transaction([
    p.revision.deleteMany(),
    p.skillFile.deleteMany(),
    p.skill.deleteMany(),
    p.memoryEntry.deleteMany(),
    p.message.deleteMany(),
    p.chatSession.deleteMany(),
    p.conversation.deleteMany(),
    p.person.deleteMany(),
    p.workspace.deleteMany(),
    p.job.deleteMany(),
  ]);
}

export interface PlaceOptions {
  platform?: Platform;
  workspace: string;
  user: string;
  channel: string;
  isDm: boolean;
  thread?: string | null;
  /** The person's display name. */
  name?: string;
}

/** A synthetic inbound message for `opts`; `text` and `messageId` default to placeholders. */
export function inboundFor(opts: PlaceOptions, text = "", messageId = uniqueId("msg"), sentAt = new Date()): Inbound {
  const author: Inbound["author"] = { externalId: opts.user };
  if (opts.name !== undefined) author.displayName = opts.name;
  return {
    platform: opts.platform ?? "slack",
    workspace: { externalId: opts.workspace },
    author,
    channel: { externalId: opts.channel, isDm: opts.isDm },
    threadId: opts.isDm ? null : (opts.thread ?? null),
    messageId,
    text,
    sentAt,
  };
}

/** Resolves (find-or-creates) the workspace, person and conversation and returns them with their Scope. */
export async function place(db: Database, opts: PlaceOptions): Promise<{ place: Place; scope: Scope }> {
  const resolved = await new HistoryStore(db).resolve(inboundFor(opts));
  return { place: resolved, scope: scopeOf(resolved) };
}
