/**
 * Tombstones: what was forgotten at a person's request, so that forgetting sticks. `forget <id>`
 * (an entry: a hash of its normalised text), `forget me` (the person, and a hash of each entry
 * erased with them), `listen exclude-me` (the person, as channel knowledge) and a channel's
 * `listen off` each leave one, with who asked and when. Never the text itself.
 *
 * Who reads them: every store writing an entry's text (memory writes and confirmations, curator
 * merges, rollbacks) checks src/db/tombstones.ts inside its transaction; a channel's backfill
 * asks this store which authors' older messages it must skip, and whether the channel's listening
 * was turned off before (then it reads new messages only).
 */
import type { Database, Db } from "../db/client.ts";
import type { Tx } from "../db/revisions.ts";
import { forgottenHash, type TombstoneKind } from "../db/tombstones.ts";
import type { WorkspaceScope } from "../ground/types.ts";

export { TOMBSTONE_KINDS, type TombstoneKind } from "../db/tombstones.ts";

/** One thing forgotten: `text` (an entry's) is hashed here and never stored. */
export interface Burial {
  kind: TombstoneKind;
  personId?: string | null;
  channelKey?: string | null;
  text?: string;
  forgottenById: string | null;
}

/** Writes tombstones inside the caller's transaction (the forgetting and its record commit together). */
export async function bury(tx: Tx, workspaceId: string, burials: readonly Burial[]): Promise<void> {
  if (burials.length === 0) return;
  await tx.tombstone.createMany({
    data: burials.map((b) => ({
      workspaceId,
      kind: b.kind,
      personId: b.personId ?? null,
      channelKey: b.channelKey ?? null,
      contentHash: b.text === undefined ? null : forgottenHash(b.text),
      forgottenById: b.forgottenById,
    })),
  });
}

export class TombstoneStore {
  private readonly db: Db;

  constructor(database: Database) {
    this.db = database.prisma;
  }

  /**
   * People of the workspace who asked to be forgotten (`forget me`) or left out (`exclude-me`), by
   * platform user id, with the latest time they asked: what they said before it is not read back.
   */
  async forgottenAuthors(scope: WorkspaceScope): Promise<Map<string, Date>> {
    const { workspaceId } = scope;
    const rows = await this.db.tombstone.findMany({ where: { workspaceId, kind: { in: ["person", "listen_person"] }, personId: { not: null } }, select: { personId: true, createdAt: true } });
    if (rows.length === 0) return new Map();
    const people = await this.db.person.findMany({ where: { workspaceId, id: { in: [...new Set(rows.map((r) => r.personId!))] } }, select: { id: true, externalId: true } });
    const external = new Map(people.map((p) => [p.id, p.externalId]));
    const out = new Map<string, Date>();
    for (const r of rows) {
      const user = external.get(r.personId!);
      const seen = user === undefined ? undefined : out.get(user);
      if (user !== undefined && (seen === undefined || seen < r.createdAt)) out.set(user, r.createdAt);
    }
    return out;
  }

  /** When the channel's listening was last turned off; null if never. */
  async channelTurnedOff(scope: WorkspaceScope, channelId: string): Promise<Date | null> {
    const row = await this.db.tombstone.findFirst({ where: { workspaceId: scope.workspaceId, kind: "listen_channel", channelKey: channelId }, orderBy: { createdAt: "desc" }, select: { createdAt: true } });
    return row?.createdAt ?? null;
  }
}
