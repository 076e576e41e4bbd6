/**
 * What memory said before (issue 27): the superseded rows a place may read, found by the words of
 * a topic, each with its interval and what holds now. Read through the same WHERE clauses as every
 * memory read (where.ts): a person's old profile text reaches only them, a channel's only that
 * channel; the entry now in force is named only when the reader may see it too.
 */
import type { Db } from "../db/client.ts";
import type { MemoryEntry } from "../db/generated/sqlite/client.ts";
import type { Scope, WorkspaceScope } from "../ground/types.ts";
import { docKeys } from "../history/text.ts";
import { sinceOf } from "./validity.ts";
import { supersededWhere, visibleWhere } from "./where.ts";

export interface EarlierText {
  id: string;
  text: string;
  kind: string;
  target: string;
  from: Date;
  until: Date;
  /** What holds now in its place, when the reader may see it: the end of the chain of replacements. */
  now: { id: string; text: string; since: Date } | null;
}

/** Superseded rows read per question: the newest this many, ranked by the topic's words. */
const SCAN = 500;

export class MemoryHistoryStore {
  constructor(private readonly db: Db) {}

  /** Earlier texts this place may read whose words meet the topic's (all, newest first, when it has none), at most `limit`. */
  async earlier(scope: Scope, topic: string, limit = 10): Promise<EarlierText[]> {
    const rows = await this.db.memoryEntry.findMany({ where: supersededWhere(scope), orderBy: [{ validUntil: "desc" }, { id: "desc" }], take: SCAN });
    const wanted = new Set(docKeys(topic));
    const ranked = wanted.size === 0 ? rows : rows.map((r) => ({ r, n: docKeys(r.text).filter((k) => wanted.has(k)).length })).filter((x) => x.n > 0).sort((a, b) => b.n - a.n).map((x) => x.r);
    const picked = ranked.slice(0, limit);
    const visible = await this.inForce(scope, picked);
    return picked.map((r) => ({ id: r.id, text: r.text, kind: r.kind, target: r.scope, from: sinceOf(r), until: r.validUntil ?? r.updatedAt, now: visible.get(r.id) ?? null }));
  }

  /** For each row, the active entry at the end of its chain of replacements that this place may see. */
  private async inForce(scope: Scope, rows: readonly MemoryEntry[]): Promise<Map<string, { id: string; text: string; since: Date }>> {
    const out = new Map<string, { id: string; text: string; since: Date }>();
    const next = new Map(rows.flatMap((r) => (r.supersededById ? [[r.id, r.supersededById] as const] : [])));
    // A chain is short (each step a person's change): a few rounds find its end.
    for (let round = 0; round < 5 && next.size > 0; round++) {
      const ids = [...new Set(next.values())];
      const found = await this.db.memoryEntry.findMany({ where: { id: { in: ids }, workspaceId: scope.workspaceId } });
      const byId = new Map(found.map((f) => [f.id, f]));
      const active = new Set((await this.db.memoryEntry.findMany({ where: { AND: [visibleWhere(scope), { id: { in: ids } }] }, select: { id: true } })).map((a) => a.id));
      for (const [from, to] of [...next]) {
        const row = byId.get(to);
        next.delete(from);
        if (!row) continue;
        if (active.has(row.id)) out.set(from, { id: row.id, text: row.text, since: sinceOf(row) });
        else if (row.status === "superseded" && row.supersededById) next.set(from, row.supersededById);
      }
    }
    return out;
  }

  /**
   * The text each of these entries replaced most recently, and until when it held: "since <date>
   * (was: …)". Only a text of the entry's own scope: whoever sees the entry saw that text too.
   */
  async previousOf(scope: WorkspaceScope, entries: readonly Pick<MemoryEntry, "id" | "scope" | "channelKey" | "ownerId">[]): Promise<Map<string, { text: string; until: Date }>> {
    if (entries.length === 0) return new Map();
    const byId = new Map(entries.map((e) => [e.id, e]));
    const rows = await this.db.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, status: "superseded", supersededById: { in: [...byId.keys()] } }, orderBy: [{ validUntil: "desc" }, { id: "desc" }] });
    const out = new Map<string, { text: string; until: Date }>();
    for (const r of rows) {
      const e = r.supersededById ? byId.get(r.supersededById) : undefined;
      if (!e || out.has(e.id) || r.scope !== e.scope || r.channelKey !== e.channelKey || r.ownerId !== e.ownerId) continue;
      out.set(e.id, { text: r.text, until: r.validUntil ?? r.updatedAt });
    }
    return out;
  }
}
