/**
 * Whether this process can do its work now: the database answers, every migration this build
 * knows is applied, and every platform adapter is connected. `/readyz` says 200 or 503 from this.
 */
import type { PlatformAdapter } from "../ground/adapter.ts";
import { errText } from "../ground/log.ts";

export interface ReadinessDeps {
  /** The database's answers (migration-store.ts). */
  database: { ping(): Promise<void>; applied(): Promise<string[]>; known(): readonly string[] };
  /** The platform adapters this process runs (read at each check: they are created during start-up). */
  adapters: () => readonly PlatformAdapter[];
  /** The migrations this build expects (default: its own migrations folder). */
  migrations?: readonly string[];
  /** How long one check may take before it counts as failed (default 2 s). */
  timeoutMs?: number;
  /** The inbound journal: reported beside the checks, not one of them (a database outage fails `database`). */
  journal?: () => { depth: number; oldestAt: number | null; waitingForStorage: boolean };
}

/** What the inbound journal holds: messages kept and not yet stored, and since when. */
export interface JournalReport {
  depth: number;
  /** When the oldest was kept (ISO 8601), or null when the journal is empty. */
  oldest: string | null;
  /** Storage failed and the journal waits for it to answer before handing messages on. */
  waitingForStorage: boolean;
}

/** Each check's name, with "ok" or what is wrong. */
export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
  journal?: JournalReport;
}

export const OK = "ok";

/** One line, short: Prisma's messages run over several lines and the body is read by people and probes. */
function short(err: unknown): string {
  const line = errText(err).replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** Fails after `ms` when `work` has not settled: a database that hangs must not hang the probe. */
export async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Checks readiness; concurrent probes share one check under way. */
export function readinessCheck(deps: ReadinessDeps): () => Promise<Readiness> {
  const timeoutMs = deps.timeoutMs ?? 2_000;
  let running: Promise<Readiness> | null = null;

  const database = async (): Promise<string> => {
    try {
      await within(timeoutMs, deps.database.ping());
      return OK;
    } catch (err) {
      return `unreachable: ${short(err)}`;
    }
  };

  const migrations = async (): Promise<string> => {
    try {
      const expected = deps.migrations ?? deps.database.known();
      const applied = new Set(await within(timeoutMs, deps.database.applied()));
      // Migrations a newer build applied are fine (a rolling deploy); missing ones are not.
      const missing = expected.filter((name) => !applied.has(name));
      return missing.length === 0 ? OK : `not applied: ${missing.join(", ")}`;
    } catch (err) {
      return `could not be read: ${short(err)}`;
    }
  };

  const check = async (): Promise<Readiness> => {
    const checks: Record<string, string> = {};
    checks.database = await database();
    checks.migrations = checks.database === OK ? await migrations() : "not checked: the database is unreachable";
    for (const adapter of deps.adapters()) {
      let name: string = adapter.platform;
      for (let n = 2; name in checks; n++) name = `${adapter.platform}#${n}`;
      checks[name] = (adapter.connected?.() ?? true) ? OK : "not connected";
    }
    const kept = deps.journal?.();
    const journal = kept && { depth: kept.depth, oldest: kept.oldestAt === null ? null : new Date(kept.oldestAt).toISOString(), waitingForStorage: kept.waitingForStorage };
    return { ready: Object.values(checks).every((v) => v === OK), checks, ...(journal ? { journal } : {}) };
  };

  return () => (running ??= check().finally(() => (running = null)));
}
