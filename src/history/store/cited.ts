/**
 * The stored messages a reply's searches returned, as someone asking why it answered so may see
 * them now. The asker need not be the person who searched (anyone in the channel may ask), so the
 * search's own rule (search-queries.ts) is applied again, for them: their workspace, of its DMs
 * only their own, of listened channels' knowledge only the channels they can read now.
 */
import type { Db } from "../../db/client.ts";
import type { PersonScope } from "../../ground/types.ts";

export interface CitedMessage {
  id: number;
  text: string;
  /** Where it is on its platform (the adapter's permalink, stored with it), when known. */
  link: string | null;
  createdAt: Date;
  /** Its author's name; null for cairn's own messages. */
  author: string | null;
}

export async function citedMessages(db: Db, scope: PersonScope, ids: readonly number[], readable: readonly string[]): Promise<CitedMessage[]> {
  if (ids.length === 0) return [];
  const rows = await db.message.findMany({
    where: {
      id: { in: [...new Set(ids)] },
      workspaceId: scope.workspaceId,
      status: { not: "failed" },
      conversation: {
        OR: [
          { kind: { not: "channel" }, isDm: false },
          { kind: { not: "channel" }, ownerId: scope.personId },
          { kind: "channel", channelId: { in: [...readable] } },
        ],
      },
    },
    select: { id: true, text: true, link: true, createdAt: true, role: true, author: { select: { displayName: true, externalId: true } } },
  });
  return rows.map((r) => ({ id: r.id, text: r.text, link: r.link, createdAt: r.createdAt, author: r.role === "assistant" ? null : (r.author?.displayName ?? r.author?.externalId ?? null) }));
}
