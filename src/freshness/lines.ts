/**
 * Shared items due for confirmation, and those proposed for archiving, as people read them: the
 * monthly post in the report channel (job.ts) and the views' "Due for confirmation" group share
 * these words. Pure.
 */
import type { FreshItem } from "../memory/verify-store.ts";
import { dayOf, lastConfirmed } from "../memory/validity.ts";
import { excerpt } from "../lessons/lesson-case.ts";

/** How long an item's text may be in a list line. */
const TEXT_CHARS = 200;

/** "team fact", "channel lesson in <#C1>", "team skill". */
export function whatItIs(item: Pick<FreshItem, "kind" | "scope" | "channelKey">): string {
  const kind = item.kind === "rule" ? "rule" : item.kind;
  return item.scope === "channel" ? `channel ${kind}${item.channelKey ? ` in <#${item.channelKey}>` : ""}` : `team ${kind}`;
}

/** "team fact, last confirmed 2026-03-01, drawn on by 3 answers lately". */
export function dueNote(item: FreshItem): string {
  const uses = item.uses === 0 ? "" : item.type === "skill" ? `, read ${item.uses} time${item.uses === 1 ? "" : "s"}` : `, drawn on by ${item.uses} answer${item.uses === 1 ? "" : "s"} lately`;
  return `${whatItIs(item)}, last confirmed ${dayOf(lastConfirmed(item))}${uses}`;
}

/** "lesson in <#C1>, unused since 2025-01-02, confidence 0.6". */
export function decayNote(item: FreshItem): string {
  const rested = item.lastUsedAt && item.lastUsedAt > lastConfirmed(item) ? item.lastUsedAt : lastConfirmed(item);
  return `${whatItIs(item)}, unused and unconfirmed since ${dayOf(rested)}, confidence ${item.confidence.toFixed(2)}`;
}

export const itemText = (item: FreshItem): string => excerpt(item.text, TEXT_CHARS);

/**
 * The monthly post: what to confirm (`verify <id>`) and what to archive (`forget <id>`), `shown`
 * of each with the totals; null when there is nothing to say.
 */
export function freshnessPost(due: { items: FreshItem[]; total: number }, decaying: { items: FreshItem[]; total: number }, settings: { verifyDays: number; decayDays: number }): string | null {
  if (due.total === 0 && decaying.total === 0) return null;
  const more = (shown: number, total: number) => (total > shown ? [`…and ${total - shown} more: the Home tab lists them all.`] : []);
  const lines = ["**Memory to check this month**"];
  if (due.total) {
    lines.push(
      `**Unconfirmed for ${settings.verifyDays} days or more** (oldest and most used first): if it still holds, \`/cairn verify <id>\` or *Still true* on the Home tab; if not, correct cairn or \`/cairn forget <id>\`.`,
      ...due.items.map((i) => `- \`${i.id}\` ${itemText(i)}  _(${dueNote(i)})_`),
      ...more(due.items.length, due.total),
    );
  }
  if (decaying.total) {
    lines.push(
      `**Proposed for archiving** (lessons and rules of low confidence, unused for ${settings.decayDays} days or more; nothing is archived until someone does it): \`/cairn forget <id>\` archives one (its author or an admin), \`/cairn verify <id>\` keeps it.`,
      ...decaying.items.map((i) => `- \`${i.id}\` ${itemText(i)}  _(${decayNote(i)})_`),
      ...more(decaying.items.length, decaying.total),
    );
  }
  return lines.join("\n");
}
