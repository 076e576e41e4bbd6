/**
 * A scope is made only from stored rows: the type checker (npm run check compiles the tests)
 * refuses a scope written from bare ids, and the maker refuses rows of two workspaces.
 */
import { describe, expect, it } from "vitest";
import type { PersonScope, Scope, WorkspaceScope } from "../../src/ground/scope.ts";
import { personScope, placeScope, workspaceScope } from "../../src/db/scopes.ts";

describe("a scope", () => {
  it("cannot be written from ids an adapter or the model handed in", () => {
    // @ts-expect-error a literal has no brand: only src/db/scopes.ts makes scopes
    const literal: WorkspaceScope = { workspaceId: "T-from-a-payload" };
    // @ts-expect-error a workspace's scope is not a person's
    const wider: PersonScope = workspaceScope({ id: "W1" });
    // @ts-expect-error a raw id is not a row
    const raw = workspaceScope("W1");
    expect([literal, wider, raw]).toHaveLength(3);
  });

  it("is made from rows, and never from a person and a conversation of different workspaces", () => {
    const person = { id: "P1", workspaceId: "W1" };
    const scope: Scope = placeScope(person, { id: "C1", workspaceId: "W1", channelId: "D1", isDm: true });
    expect(scope).toEqual({ workspaceId: "W1", personId: "P1", conversationId: "C1", channelKey: "D1", isDm: true });
    expect(personScope(person)).toEqual({ workspaceId: "W1", personId: "P1" });
    expect(() => placeScope(person, { id: "C2", workspaceId: "W2", channelId: "C2", isDm: false })).toThrow(/different workspaces/);
  });
});
