/**
 * Opens the database named by DATABASE_URL: a SQLite file (better-sqlite3 driver adapter) or
 * PostgreSQL (pg driver adapter), applies migrations, and returns one Prisma client type for both.
 */
import { dirname, resolve } from "node:path";
import type { PrismaClient as SqliteClient } from "./generated/sqlite/client.ts";
import { migratePostgres, migrateSqlite, type MigrateResult, type Provider } from "./migrate.ts";
import { pgDirect, sqliteDirect, type DirectSql } from "./direct.ts";
import { keepConnectionsOnStatementErrors } from "./pg-pool.ts";
import { PgLanes } from "./pg-lanes.ts";
import { makeFolders } from "../ground/paths.ts";

/**
 * Connections the direct path's short statements share, pipelined (pg-lanes.ts), beside the pool's
 * 10 (Prisma, transactions, searches): 4 and 8 measured alike on a 2-core machine (bench/README.md).
 */
const PIPELINED_CONNECTIONS = 4;

/**
 * Both generated clients come from one logical model (prisma/models.prisma), so their model APIs
 * are the same; the SQLite client's type stands for both. Provider-specific SQL lives in raw
 * queries that check `Database.provider`.
 */
export type Db = SqliteClient;

export interface Database {
  prisma: Db;
  /** The hot statements' path below Prisma (direct.ts). */
  direct: DirectSql;
  provider: Provider;
  migrations: MigrateResult;
  /**
   * How vector distances are computed (search-vectors.ts): on SQLite by sqlite-vec or its JavaScript
   * stand-ins (sqlite-vectors.ts), on PostgreSQL by cairn over the scoped vectors.
   */
  vectorSearch(): "sqlite-vec" | "javascript" | "exact scan in cairn";
  /**
   * A round trip (`SELECT 1`); throws when the server cannot be reached or the database was closed
   * (Prisma would quietly reopen a closed SQLite file).
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** `ping` and a `close` that makes it fail from then on. */
function withPing(prisma: Db, close: () => Promise<void>): Pick<Database, "ping" | "close"> {
  let closed = false;
  return {
    async ping() {
      if (closed) throw new Error("the database was closed");
      await prisma.$queryRawUnsafe("SELECT 1");
    },
    close() {
      closed = true;
      return close();
    },
  };
}

export function providerOf(url: string): Provider {
  if (url.startsWith("file:")) return "sqlite";
  if (/^postgres(ql)?:\/\//.test(url)) return "postgresql";
  throw new Error(`DATABASE_URL must start with file: or postgresql://, got ${url}`);
}

/** `file:./data/cairn.db` is relative to the working directory; `file::memory:` stays in memory. */
export function sqlitePath(url: string): string {
  const path = url.slice("file:".length);
  return path === ":memory:" ? path : resolve(path);
}

export interface OpenOptions {
  /**
   * Errors of idle PostgreSQL connections (server restart, failover, a dropped database). pg emits
   * them on the pool; unhandled they would crash the process, handled the pool just reconnects.
   */
  onConnectionError?: (err: Error) => void;
  /** SQLite files: how often the background worker checkpoints the WAL (default 1 s). */
  checkpointIntervalMs?: number;
  /** Wraps the driver adapter factory and the direct path (benchmarks count statements there). */
  instrument?: <T extends object>(adapterFactory: T) => T;
}

/**
 * Only the provider in use is loaded: each generated client brings its own query compiler, and the
 * other one would sit in memory (about 10 MB) for nothing.
 */
export async function openDatabase(url: string, opts: OpenOptions = {}): Promise<Database> {
  const provider = providerOf(url);
  const instrument = opts.instrument ?? (<T extends object>(factory: T): T => factory);
  if (provider === "sqlite") {
    const [{ default: BetterSqlite3 }, { SqliteAdapter }, { PrismaClient: SqliteClient }, { BACKSTOP_PAGES, startCheckpointer }] = await Promise.all([
      import("better-sqlite3"),
      import("./sqlite-adapter.ts"),
      import("./generated/sqlite/client.ts"),
      import("./sqlite-checkpoint.ts"),
    ]);
    const path = sqlitePath(url);
    // Not mkdirSync(recursive): it spins forever on a folder that cannot exist (file:/proc/...).
    if (path !== ":memory:") makeFolders(dirname(path));
    // Migrate with a short-lived direct connection, then hand the file to Prisma's adapter.
    const raw = new BetterSqlite3(path);
    let migrations: MigrateResult;
    try {
      raw.pragma("journal_mode = WAL");
      migrations = migrateSqlite(raw);
    } finally {
      raw.close();
    }
    const sqlite = new SqliteAdapter({ url: path, timeout: 10_000 });
    const prisma = new SqliteClient({ adapter: instrument(sqlite) });
    // Also opens the connection that direct statements share.
    await prisma.$queryRawUnsafe("PRAGMA foreign_keys = ON");
    await prisma.$queryRawUnsafe("PRAGMA synchronous = NORMAL");
    const direct = instrument(sqliteDirect(() => sqlite.connection(), sqlite.gate));
    const vectorSearch = () => sqlite.vectorFunctions ?? "sqlite-vec";
    if (path === ":memory:") return { prisma, direct, provider, migrations, vectorSearch, ...withPing(prisma, () => prisma.$disconnect()) };
    await prisma.$queryRawUnsafe(`PRAGMA wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    const checkpointer = startCheckpointer(path, opts.checkpointIntervalMs ?? 1_000);
    const close = async (): Promise<void> => {
      await checkpointer.stop();
      await prisma.$disconnect();
    };
    return { prisma, direct, provider, migrations, vectorSearch, ...withPing(prisma, close) };
  }
  const [{ default: pg }, { PrismaPg }, { PrismaClient: PostgresClient }] = await Promise.all([
    import("pg"),
    import("@prisma/adapter-pg"),
    import("./generated/postgresql/client.ts"),
  ]);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let migrations: MigrateResult;
  try {
    migrations = await migratePostgres(client);
  } finally {
    await client.end();
  }
  const pool = keepConnectionsOnStatementErrors(new pg.Pool({ connectionString: url, max: 10 }));
  const lanes = new PgLanes(pg.Client, { connectionString: url }, PIPELINED_CONNECTIONS);
  await lanes.openAll();
  pool.on("error", opts.onConnectionError ?? (() => {}));
  const prisma = new PostgresClient({ adapter: instrument(new PrismaPg(pool)) }) as unknown as Db;
  return {
    prisma,
    direct: instrument(pgDirect(pool, lanes)),
    provider,
    migrations,
    vectorSearch: () => "exact scan in cairn",
    ...withPing(prisma, async () => {
      await prisma.$disconnect();
      await lanes.end();
      await pool.end();
    }),
  };
}
