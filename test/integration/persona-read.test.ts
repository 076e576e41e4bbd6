/**
 * The persona as a new session reads it (src/persona/store.ts `get`, below Prisma): the row Prisma
 * itself reads, times included, on both databases; none for a workspace without one, and never
 * another workspace's.
 */
import { expect, it } from "vitest";
import { PersonaStore } from "../../src/persona/store.ts";
import { HistoryStore, workspaceScopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";

forEachDatabase("the persona a new session reads", (getDb) => {
  it("reads what was set, as Prisma reads it, for its own workspace only", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const personas = new PersonaStore(db);
    const place = await history.resolve(inboundFor({ workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false }, "hi"));
    const other = await history.resolve(inboundFor({ workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false }, "hi"));
    const scope = workspaceScopeOf(place);
    expect(await personas.get(scope)).toBeNull();
    await personas.set(scope, "You are terse and cite the runbook.", { source: "tool", actorId: place.person.id, sourceMessageId: null });
    const read = await personas.get(scope);
    expect(read).toEqual(await db.prisma.persona.findUnique({ where: { workspaceId: scope.workspaceId } }));
    expect(read).toMatchObject({ text: "You are terse and cite the runbook.", updatedById: place.person.id });
    expect(await personas.get(workspaceScopeOf(other))).toBeNull();
  });
});
