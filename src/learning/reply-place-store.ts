/**
 * Where a reply was made, rebuilt from stored rows for work that runs after the turn (a reaction, a
 * review, a lesson): the scope is the one the turn had, found through the reply's own
 * conversation and the person whose message it answered, never through ids a platform sent.
 * The reads the learning loop makes of conversations, messages, people and sessions are here.
 */
import type { Db } from "../db/client.ts";
import type { ChatSession, Conversation, Message, Person, Workspace } from "../db/generated/sqlite/client.ts";
import { conversationScope, personScope, placeScope, workspaceScope } from "../db/scopes.ts";
import type { PostTarget } from "../ground/adapter.ts";
import type { ConversationScope, PersonScope, Platform, Scope, WorkspaceScope } from "../ground/types.ts";

export type { ChatSession, Conversation, Message, Person, Workspace };

export interface ReplyPlace {
  workspace: Workspace;
  conversation: Conversation;
  /** The reply of cairn's. */
  reply: Message;
  /** The person's message it answered (null for a post cairn started itself). */
  question: Message | null;
  /** Who asked; null for cairn's own posts. */
  asker: Person | null;
}

/** The scope of a person in a stored conversation. */
export function scopeIn(conversation: Conversation, person: Person): Scope {
  return placeScope(person, conversation);
}

/** A place's workspace, as the scope reads in it take. */
export const workspaceOfPlace = (place: Pick<ReplyPlace, "workspace">): WorkspaceScope => workspaceScope(place.workspace);

/** A place's conversation, as the scope reads in it take. */
export const conversationOfPlace = (place: Pick<ReplyPlace, "conversation">): ConversationScope => conversationScope(place.conversation);

/** A stored person in their workspace. */
export const scopeOfPerson = (person: Person): PersonScope => personScope(person);

export class ReplyPlaceStore {
  constructor(private readonly db: Db) {}

  /** The workspace a job was queued for, as a scope; null once it is gone. */
  async workspace(workspaceId: string): Promise<WorkspaceScope | null> {
    const row = await this.db.workspace.findFirst({ where: { id: workspaceId }, select: { id: true } });
    return row && workspaceScope(row);
  }

  /** The reply with its place; null if it is not an assistant message of that workspace. */
  async replyPlace(scope: WorkspaceScope, replyMessageId: number): Promise<ReplyPlace | null> {
    const { workspaceId } = scope;
    const reply = await this.db.message.findFirst({ where: { id: replyMessageId, workspaceId, role: "assistant" } });
    if (!reply) return null;
    const [conversation, workspace, question] = await Promise.all([
      this.db.conversation.findFirst({ where: { id: reply.conversationId, workspaceId } }),
      this.db.workspace.findFirst({ where: { id: workspaceId } }),
      reply.replyToId === null ? null : this.db.message.findFirst({ where: { id: reply.replyToId, conversationId: reply.conversationId } }),
    ]);
    if (!conversation || !workspace) return null;
    const asker = question?.authorId ? await this.db.person.findFirst({ where: { id: question.authorId, workspaceId } }) : null;
    return { workspace, conversation, reply, question, asker };
  }

  /** Where a person's message was said: its workspace and conversation (a place to post an outcome in). */
  async saidIn(scope: WorkspaceScope, messageId: number): Promise<{ workspace: Workspace; conversation: Conversation } | null> {
    const message = await this.db.message.findFirst({ where: { id: messageId, workspaceId: scope.workspaceId } });
    if (!message) return null;
    const [workspace, conversation] = await Promise.all([
      this.db.workspace.findFirst({ where: { id: scope.workspaceId } }),
      this.db.conversation.findFirst({ where: { id: message.conversationId, workspaceId: scope.workspaceId } }),
    ]);
    return workspace && conversation ? { workspace, conversation } : null;
  }

  /** The person messages of a conversation up to (and with) this one: its turns so far. */
  personMessagesThrough(scope: ConversationScope, messageId: number): Promise<number> {
    return this.db.message.count({ where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, role: "user", id: { lte: messageId } } });
  }

  async person(scope: WorkspaceScope, personId: string): Promise<Person | null> {
    return this.db.person.findFirst({ where: { id: personId, workspaceId: scope.workspaceId } });
  }

  async platformOf(scope: WorkspaceScope): Promise<Platform> {
    const ws = await this.db.workspace.findFirstOrThrow({ where: { id: scope.workspaceId } });
    return ws.platform as Platform;
  }

  /** The session a reply was made in. */
  async session(scope: ConversationScope, sessionId: string): Promise<ChatSession | null> {
    return this.db.chatSession.findFirst({ where: { id: sessionId, conversationId: scope.conversationId } });
  }

  /** Where to post into a stored conversation: its thread (or channel), or the DM's owner. */
  async postTarget(workspace: Workspace, conversation: Conversation): Promise<{ platform: Platform; target: PostTarget } | null> {
    const platform = workspace.platform as Platform;
    if (conversation.isDm) {
      const owner = conversation.ownerId ? await this.db.person.findFirst({ where: { id: conversation.ownerId, workspaceId: workspace.id } }) : null;
      if (!owner) return null;
      return { platform, target: { kind: "dm", workspace: workspace.externalId, person: owner.externalId } };
    }
    return { platform, target: { kind: "channel", workspace: workspace.externalId, channel: conversation.channelId, threadId: conversation.threadId } };
  }
}
