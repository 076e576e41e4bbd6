/**
 * "forget me" takes two steps: the request, then `forget me confirm` within a window. The request
 * is a database row, not process memory, so the confirmation may reach another replica than the
 * request did (Slack and Discord hand each event to any of them), or the same one after a restart.
 */
import type { Db } from "../db/client.ts";
import type { PersonScope } from "../ground/types.ts";

export const ERASURE_CONFIRM_WINDOW_MS = 10 * 60 * 1000;

/** Records (or restarts) the person's request at `now`; requests of anyone left to expire are dropped. */
export async function requestErasure(db: Db, person: PersonScope, now: Date): Promise<void> {
  await db.erasureRequest.upsert({
    where: { personId: person.personId },
    create: { personId: person.personId, workspaceId: person.workspaceId, requestedAt: now },
    update: { workspaceId: person.workspaceId, requestedAt: now },
  });
  await db.erasureRequest.deleteMany({ where: { requestedAt: { lt: new Date(now.getTime() - ERASURE_CONFIRM_WINDOW_MS) } } });
}

/**
 * Takes the person's request if it is still within the window: the deletion is the claim, so of two
 * replicas confirming at once exactly one erases.
 */
export async function claimErasure(db: Db, person: PersonScope, now: Date): Promise<boolean> {
  const { count } = await db.erasureRequest.deleteMany({
    where: { personId: person.personId, workspaceId: person.workspaceId, requestedAt: { gte: new Date(now.getTime() - ERASURE_CONFIRM_WINDOW_MS) } },
  });
  return count > 0;
}
