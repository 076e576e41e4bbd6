/**
 * The only maker of scopes (ground/scope.ts): each from rows read from the database, never from
 * ids handed in. Only stores import this module (a dependency rule), so a scope in a service's
 * hands was made by a store from what it read.
 */
import type { ConversationScope, PersonScope, Scope, StoredRows, WorkspaceScope } from "../ground/scope.ts";

/** The fields of the stored rows a scope is made from. */
export interface WorkspaceRow {
  id: string;
}
export interface PersonRow {
  id: string;
  workspaceId: string;
}
export interface ConversationRow {
  id: string;
  workspaceId: string;
  channelId: string;
  isDm: boolean;
}

// The brand exists only in the types: a scope is a plain object at run time.
const branded = <T extends StoredRows>(fields: Omit<T, keyof StoredRows>): T => fields as T;

export function workspaceScope(workspace: WorkspaceRow): WorkspaceScope {
  return branded<WorkspaceScope>({ workspaceId: workspace.id });
}

export function personScope(person: PersonRow): PersonScope {
  return branded<PersonScope>({ workspaceId: person.workspaceId, personId: person.id });
}

export function conversationScope(conversation: Pick<ConversationRow, "id" | "workspaceId">): ConversationScope {
  return branded<ConversationScope>({ workspaceId: conversation.workspaceId, conversationId: conversation.id });
}

/** The person speaking in a conversation; both rows must belong to one workspace. */
export function placeScope(person: PersonRow, conversation: ConversationRow): Scope {
  if (person.workspaceId !== conversation.workspaceId) throw new Error("a person and a conversation of different workspaces make no scope");
  return branded<Scope>({
    workspaceId: conversation.workspaceId,
    personId: person.id,
    conversationId: conversation.id,
    channelKey: conversation.channelId,
    isDm: conversation.isDm,
  });
}
