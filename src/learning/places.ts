/**
 * Posting into the place of a reply (its thread, or the DM) and naming people, for work that runs
 * after the turn. The place itself is read by the reply-place store (reply-place-store.ts).
 */
import type { LearningContext } from "./context.ts";
import type { RichPost } from "../ground/adapter.ts";
import type { Person, ReplyPlace } from "./reply-place-store.ts";

export type { ReplyPlace };

/** A person's name as shown to others. */
export const nameOf = (p: Pick<Person, "displayName" | "externalId"> | null | undefined): string => p?.displayName ?? p?.externalId ?? "someone";

/** Posts in the reply's conversation (its thread, or the DM); the stored id of the post, or null when there is nowhere to post. */
export async function postIn(ctx: Pick<LearningContext, "places" | "post">, place: Pick<ReplyPlace, "workspace" | "conversation">, text: string, rich?: RichPost): Promise<number | null> {
  const where = await ctx.places.postTarget(place.workspace, place.conversation);
  if (!where) return null;
  return (await ctx.post(where.platform, where.target, text, rich)).messageId;
}

/** The reply a job (feedback, review) was queued for, with its place; null once the workspace or the reply is gone. */
export async function placeOfJob(ctx: Pick<LearningContext, "places">, job: { workspaceId: string; replyMessageId: number }): Promise<ReplyPlace | null> {
  const workspace = await ctx.places.workspace(job.workspaceId);
  return workspace && ctx.places.replyPlace(workspace, job.replyMessageId);
}
