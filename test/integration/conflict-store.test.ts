/**
 * Disputes between entries in force (memory/conflict-store.ts), on both databases: the newest claim
 * heads one dispute with every older entry it contradicts; an older entry that headed a dispute
 * brings its members along; an entry moved out of another dispute leaves that one consistent;
 * keep new supersedes every older, keep old closes the head and leaves the olders disputed under
 * the newest of them; `disputedIds` marks exactly the olders. Dated entries make "older" plain.
 */
import { expect, it } from "vitest";
import { forEachDatabase, place, uniqueId } from "../support/db.ts";
import { MemoryStore } from "../../src/memory/store.ts";
import { ConflictStore, type MemoryEntry } from "../../src/memory/conflict-store.ts";
import { disputedIds } from "../../src/memory/validity.ts";
import type { Scope } from "../../src/ground/types.ts";

forEachDatabase("ConflictStore", (getDb) => {
  const db = () => getDb().prisma;
  const stores = () => {
    const memory = new MemoryStore(db(), { user: 10_000, channel: 10_000, team: 10_000 });
    return { memory, conflicts: new ConflictStore(db(), memory) };
  };
  async function setup() {
    const ws = uniqueId("ws");
    const { scope } = await place(getDb(), { workspace: ws, user: "UANA", channel: "C1", isDm: false });
    let day = 0;
    const entry = (text: string): Promise<MemoryEntry> => db().memoryEntry.create({ data: { workspaceId: scope.workspaceId, scope: "team", text, source: "tool", createdAt: new Date(Date.UTC(2026, 0, 1 + day++)) } });
    return { scope, entry };
  }
  const prov = (scope: Scope) => ({ source: "tool" as const, actorId: scope.personId, sourceMessageId: null });
  const marks = async (ids: string[]) => (await db().memoryEntry.findMany({ where: { id: { in: ids } }, orderBy: { createdAt: "asc" } })).map((e) => [e.text, e.conflictWithId, e.status]);

  it("the newest claim heads one dispute: a disputed older brings its members; keep new supersedes every older", async () => {
    const { scope, entry } = await setup();
    const { conflicts } = stores();
    const [v1, v2, v3] = [await entry("v1 Thursdays"), await entry("v2 Fridays"), await entry("v3 Mondays")];
    expect(await conflicts.mark([v1], v2, prov(scope))).toBe(true);
    expect(await marks([v1.id, v2.id])).toEqual([["v1 Thursdays", v2.id, "active"], ["v2 Fridays", v1.id, "active"]]);
    // v3 contradicts v2 only: v1, v2's member, joins the new dispute.
    expect(await conflicts.mark([v2], v3, prov(scope))).toBe(true);
    expect(await marks([v1.id, v2.id, v3.id])).toEqual([["v1 Thursdays", v3.id, "active"], ["v2 Fridays", v3.id, "active"], ["v3 Mondays", v2.id, "active"]]);
    const rows = await db().memoryEntry.findMany({ where: { workspaceId: scope.workspaceId } });
    expect([...disputedIds(rows)].sort()).toEqual([v1.id, v2.id].sort());
    // Any id of the dispute finds all of it; a head already in a dispute is not marked again.
    const pair = (await conflicts.pair(scope, v1.id))!;
    expect([pair.newer.id, pair.olders.map((o) => o.id).sort()]).toEqual([v3.id, [v1.id, v2.id].sort()]);
    expect(await conflicts.mark([v1], v3, prov(scope))).toBe(false);
    expect(await conflicts.resolve(pair, "new", prov(scope))).toBe(true);
    expect(await marks([v1.id, v2.id, v3.id])).toEqual([["v1 Thursdays", null, "superseded"], ["v2 Fridays", null, "superseded"], ["v3 Mondays", null, "active"]]);
    expect((await db().memoryEntry.findMany({ where: { id: { in: [v1.id, v2.id] } } })).map((e) => e.supersededById)).toEqual([v3.id, v3.id]);
    expect(await conflicts.resolve(pair, "new", prov(scope))).toBe(false);
  });

  it("keep old closes the head and leaves olders that disagree disputed under the newest of them; keep both clears every mark", async () => {
    const { scope, entry } = await setup();
    const { conflicts } = stores();
    const [a, b, c] = [await entry("a Tuesdays"), await entry("b Wednesdays"), await entry("c Thursdays")];
    await conflicts.mark([a, b], c, prov(scope));
    expect(await conflicts.resolve((await conflicts.pair(scope, c.id))!, "old", prov(scope))).toBe(true);
    expect(await marks([a.id, b.id, c.id])).toEqual([["a Tuesdays", b.id, "active"], ["b Wednesdays", a.id, "active"], ["c Thursdays", null, "superseded"]]);
    const left = (await conflicts.pair(scope, a.id))!;
    expect([left.newer.id, left.olders.map((o) => o.id)]).toEqual([b.id, [a.id]]);
    expect(await conflicts.resolve(left, "both", prov(scope))).toBe(true);
    expect(await marks([a.id, b.id])).toEqual([["a Tuesdays", null, "active"], ["b Wednesdays", null, "active"]]);
    expect(await conflicts.open(scope)).toEqual([]);
  });

  it("an entry contradicted again moves to the new dispute; the one it left still names a member of its own", async () => {
    const { scope, entry } = await setup();
    const { conflicts } = stores();
    const [x, y, head, fresh] = [await entry("x Mondays"), await entry("y Tuesdays"), await entry("h Fridays"), await entry("n Sundays")];
    await conflicts.mark([x, y], head, prov(scope));
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: head.id } })).conflictWithId).toBe(x.id);
    await conflicts.mark([x], fresh, prov(scope));
    expect(await marks([x.id, y.id, head.id, fresh.id])).toEqual([["x Mondays", fresh.id, "active"], ["y Tuesdays", head.id, "active"], ["h Fridays", y.id, "active"], ["n Sundays", x.id, "active"]]);
    const open = await conflicts.open(scope);
    expect(open.map((p) => [p.newer.id, p.olders.map((o) => o.id)]).sort()).toEqual([[fresh.id, [x.id]], [head.id, [y.id]]].sort());
  });
});
