/**
 * Tests only: a scope forged from bare ids, to probe that a store's queries enforce the scope
 * (a person's id in another workspace, a tool run without a database). Product code cannot do
 * this: scopes come from src/db/scopes.ts, which only stores import.
 */
import type { ConversationScope, PersonScope, Scope, WorkspaceScope } from "../../src/ground/scope.ts";

export const forgeScope = (fields: { workspaceId: string; personId: string; conversationId: string; channelKey: string; isDm: boolean }): Scope => fields as Scope;
export const forgePersonScope = (fields: { workspaceId: string; personId: string }): PersonScope => fields as PersonScope;
export const forgeWorkspaceScope = (fields: { workspaceId: string }): WorkspaceScope => fields as WorkspaceScope;
export const forgeConversationScope = (fields: { workspaceId: string; conversationId: string }): ConversationScope => fields as ConversationScope;
