/**
 * Where a reply was made, rebuilt from stored rows for work that runs after the turn (a reaction, a
 * review, a lesson): the scope is the one the turn had, found through the reply's own
 * conversation and the person whose message it answered, never through ids a platform sent.
 */
import type { Db } from "../db/client.ts";
import type { Conversation, Message, Person, Workspace } from "../db/generated/sqlite/client.ts";
import type { PostTarget } from "../ground/adapter.ts";
import type { Platform, Scope } from "../ground/types.ts";
import type { LearningContext } from "./context.ts";
import { placeScope } from "../db/scopes.ts";

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

/** The reply with its place; null if it is not an assistant message of that workspace. */
export async function replyPlace(db: Db, workspaceId: string, replyMessageId: number): Promise<ReplyPlace | null> {
  const reply = await db.message.findFirst({ where: { id: replyMessageId, workspaceId, role: "assistant" } });
  if (!reply) return null;
  const [conversation, workspace, question] = await Promise.all([
    db.conversation.findFirst({ where: { id: reply.conversationId, workspaceId } }),
    db.workspace.findFirst({ where: { id: workspaceId } }),
    reply.replyToId === null ? null : db.message.findFirst({ where: { id: reply.replyToId, conversationId: reply.conversationId } }),
  ]);
  if (!conversation || !workspace) return null;
  const asker = question?.authorId ? await db.person.findFirst({ where: { id: question.authorId, workspaceId } }) : null;
  return { workspace, conversation, reply, question, asker };
}

/** The scope of a person in a stored conversation. */
export function scopeIn(conversation: Conversation, person: Person): Scope {
  return placeScope(person, conversation);
}

/** Where to post into a stored conversation: its thread (or channel), or the DM's owner. */
export async function postTargetOf(db: Db, workspace: Workspace, conversation: Conversation): Promise<{ platform: Platform; target: PostTarget } | null> {
  const platform = workspace.platform as Platform;
  if (conversation.isDm) {
    const owner = conversation.ownerId ? await db.person.findFirst({ where: { id: conversation.ownerId, workspaceId: workspace.id } }) : null;
    if (!owner) return null;
    return { platform, target: { kind: "dm", workspace: workspace.externalId, person: owner.externalId } };
  }
  return { platform, target: { kind: "channel", workspace: workspace.externalId, channel: conversation.channelId, threadId: conversation.threadId } };
}

/** A person's name as shown to others. */
export const nameOf = (p: Pick<Person, "displayName" | "externalId"> | null | undefined): string => p?.displayName ?? p?.externalId ?? "someone";

/** Posts in the reply's conversation (its thread, or the DM); the stored id of the post, or null when there is nowhere to post. */
export async function postIn(ctx: Pick<LearningContext, "db" | "post">, place: Pick<ReplyPlace, "workspace" | "conversation">, text: string): Promise<number | null> {
  const where = await postTargetOf(ctx.db, place.workspace, place.conversation);
  if (!where) return null;
  return (await ctx.post(where.platform, where.target, text)).messageId;
}
