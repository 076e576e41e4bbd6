/**
 * Memory entries read below Prisma (db/direct.ts): a session's first turn reads every entry its place
 * may see, and Prisma's client spent more CPU mapping those rows than SQLite spent finding them. The
 * columns and their types are listed once here; `entryOf` makes the row Prisma would have returned.
 */
import type { Provider } from "../db/migrate.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";

type Kind = "text" | "int" | "float" | "time";

/** Every MemoryEntry column and how it is read; the compiler checks the list against the model. */
const COLUMNS = {
  id: "text",
  workspaceId: "text",
  scope: "text",
  ownerId: "text",
  channelKey: "text",
  text: "text",
  status: "text",
  confidence: "float",
  source: "text",
  createdById: "text",
  sourceMessageId: "int",
  createdAt: "time",
  updatedAt: "time",
  lastUsedAt: "time",
  kind: "text",
  quote: "text",
  origin: "text",
  replacesId: "text",
  proposalMessageId: "int",
  proposedScope: "text",
  flag: "text",
  scannedWith: "text",
  validFrom: "time",
  validUntil: "time",
  supersededById: "text",
  verifiedAt: "time",
  verifiedById: "text",
  conflictWithId: "text",
  conflictPostId: "int",
  remindedAt: "time",
} as const satisfies Record<keyof MemoryEntry, Kind>;

const NAMES = Object.keys(COLUMNS) as (keyof MemoryEntry)[];

/** The select list, in `entryOf`'s order; PostgreSQL's times as epoch milliseconds (as history's rows.ts reads them). */
export function entryColumns(provider: Provider, table = "e"): string {
  const pg = provider === "postgresql";
  return NAMES.map((c) => (pg && COLUMNS[c] === "time" ? `(extract(epoch FROM ${table}."${c}") * 1000)::float8` : `${table}."${c}"`)).join(", ");
}

/** A MemoryEntry from a row selected with `entryColumns`. */
export function entryOf(row: readonly unknown[]): MemoryEntry {
  const out: Record<string, unknown> = {};
  NAMES.forEach((c, i) => {
    const v = row[i];
    const kind: Kind = COLUMNS[c];
    out[c] = v === null || v === undefined ? null : kind === "time" ? new Date(v as string | number) : kind === "int" || kind === "float" ? Number(v) : v;
  });
  return out as unknown as MemoryEntry;
}
