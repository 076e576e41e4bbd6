/**
 * Where a message comes from (its workspace, person and conversation rows) and the scopes made
 * from rows the history store returned: the only way a service turns a stored row into a scope.
 */
import type { Conversation, Delivery, Person, Workspace } from "../../db/generated/sqlite/client.ts";
import { conversationScope, personScope, placeScope, workspaceScope } from "../../db/scopes.ts";
import type { ConversationScope, Inbound, PersonScope, Scope, WorkspaceScope } from "../../ground/types.ts";

/** The process that works on a stored message (answering it, or posting a reply), and until when (src/core/leases.ts). */
export interface Lease {
  owner: string;
  until: Date;
}

export interface Place {
  workspace: Workspace;
  person: Person;
  conversation: Conversation;
}

/** Stable conversation key: one per DM person, one per channel thread (or channel main line). */
export function conversationKey(inbound: Inbound): string {
  const ws = `${inbound.platform}:${inbound.workspace.externalId}`;
  if (inbound.channel.isDm) return `${ws}:dm:${inbound.author.externalId}`;
  return `${ws}:${inbound.channel.externalId}:${inbound.threadId ?? "main"}`;
}

export function scopeOf(place: Place): Scope {
  return placeScope(place.person, place.conversation);
}

/** The speaker of a place, wherever they are (their pending entries, their messages). */
export function personScopeOf(place: Place): PersonScope {
  return personScope(place.person);
}

export function workspaceScopeOf(place: Place): WorkspaceScope {
  return workspaceScope(place.workspace);
}

/** The scope of a workspace row this store returned (found by its platform id). */
export const scopeOfWorkspace = (workspace: Workspace): WorkspaceScope => workspaceScope(workspace);

/** The conversation a delivery row this store returned belongs to. */
export const scopeOfDelivery = (delivery: Pick<Delivery, "conversationId" | "workspaceId">): ConversationScope => conversationScope({ id: delivery.conversationId, workspaceId: delivery.workspaceId });

/** The scope of a person row this store returned (resolved in their workspace). */
export const scopeOfPerson = (person: Person): PersonScope => personScope(person);
