/**
 * Buttons on the core's own posts (a report, a reminder, the admins' digest: RichSection.buttons)
 * as message components: rows of five, at most Discord's 25 in all, in the order the sections give
 * them (the first sections' first). A button whose custom id would be too long, and those past the
 * 25th, are not drawn: the post's text lists every command typed. A click (`cairn:p:<command line>`,
 * ids.ts) runs the command as the person who clicked and answers them alone (interactions.ts).
 */
import { ComponentType, type APIButtonComponentWithCustomId } from "discord.js";
import type { RichPost } from "../../../ground/adapter.ts";
import { COMPONENT_LIMITS } from "../limits.ts";
import { callOf, postId } from "./ids.ts";
import { button, type ButtonRow } from "./message.ts";

export function postComponents(post: RichPost): ButtonRow[] {
  const seen = new Set<string>();
  const drawn = post.sections.flatMap((s) => s.buttons ?? []).flatMap((b): APIButtonComponentWithCustomId[] => {
    const id = postId(callOf(b));
    // Discord refuses two components with one custom id in a message: the same command twice is drawn once.
    if (!id || seen.has(id)) return [];
    seen.add(id);
    return [button(b.label, id, b.style)];
  });
  const max = COMPONENT_LIMITS.rows * COMPONENT_LIMITS.buttonsPerRow;
  const rows: ButtonRow[] = [];
  for (let i = 0; i < Math.min(drawn.length, max); i += COMPONENT_LIMITS.buttonsPerRow) {
    rows.push({ type: ComponentType.ActionRow, components: drawn.slice(i, Math.min(i + COMPONENT_LIMITS.buttonsPerRow, max)) });
  }
  return rows;
}
