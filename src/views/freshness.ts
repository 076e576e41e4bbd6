/**
 * The views' part of memory that stays true (issue 27): a shared item nobody confirmed for
 * CAIRN_VERIFY_DAYS shows when it last was, with *Still true* (`verify <id>`); the Team section
 * gains "Due for confirmation" (oldest and most used first) and "Proposed for archiving" (lessons
 * and rules whose confidence decayed unused, with Archive where `forget` would let the viewer).
 * What is listed is read with the viewer's channels in the query; the buttons are offered where the
 * command would act from the place the view was asked in, and the command checks again.
 */
import type { WorkspaceScope } from "../ground/types.ts";
import type { FreshItem, VerifyStore } from "../memory/verify-store.ts";
import { dayOf, isDue, lastConfirmed, type Dated } from "../memory/validity.ts";
import type { ViewButton, ViewGroup, ViewItem } from "../ground/view-model.ts";
import { decayNote, dueNote, itemText } from "../freshness/lines.ts";
import { excerpt } from "../lessons/lesson-case.ts";

/** What the views read freshness with: the store, the windows and the clock (Learning.freshness). */
export interface FreshnessDeps {
  store: VerifyStore;
  settings: { verifyDays: number; decayDays: number };
  now: () => Date;
}

/** Items read for each group at most (the group pages them). */
const LISTED = 50;

interface Viewer {
  /** The channels the viewer reads: whose items are listed. */
  channels: ReadonlySet<string>;
  /** Where the view was asked for: a click runs its command from there. */
  here: { channelId: string; isDm: boolean };
  admin: boolean;
  me: string;
  group(id: string, title: string, items: ViewItem[]): ViewGroup;
}

type Shared = Dated & { id: string; scope: string; channelKey: string | null };

export interface FreshView {
  /** "; last confirmed 2025-01-01" after a shared entry due for confirmation; "" otherwise. */
  dated(e: Dated): string;
  /** *Still true* on a due item the viewer can confirm from here. */
  buttons(e: Shared): ViewButton[];
  /** "Due for confirmation" and "Proposed for archiving", each only when it has items. */
  groups: ViewGroup[];
}

export async function freshnessGroups(deps: FreshnessDeps, scope: WorkspaceScope, viewer: Viewer): Promise<FreshView> {
  const now = deps.now();
  const { verifyDays, decayDays } = deps.settings;
  const [due, decaying] = await Promise.all([
    deps.store.due(scope, { now, days: verifyDays, limit: LISTED, channels: viewer.channels, decayDays }),
    deps.store.decaying(scope, { now, days: decayDays, limit: LISTED, channels: viewer.channels }),
  ]);
  // `verify` confirms the team's items and those of the channel it runs in (verify-store.ts).
  const confirmable = (e: Shared) => e.scope === "team" || (!viewer.here.isDm && e.channelKey === viewer.here.channelId);
  const still = (e: Shared): ViewButton[] => (confirmable(e) ? [{ label: "Still true", command: "verify", args: [e.id], style: "primary" }] : []);
  // As `forget` decides (commands/lessons.ts): a team rule by an admin, a channel lesson by its author or an admin.
  const mayArchive = (i: FreshItem) => (i.kind === "rule" && i.scope === "team" ? viewer.admin : i.kind === "lesson" && i.scope === "channel" && (viewer.admin || i.createdById === viewer.me));
  const archive = (i: FreshItem): ViewButton => ({ label: "Archive", command: "forget", args: [i.id], style: "danger", confirm: { title: "Archive this?", text: excerpt(i.text, 250), yes: "Archive", no: "Cancel" } });
  const dueItems = due.items.map((i): ViewItem => ({ id: i.id, markdown: `${itemText(i)}  _(${dueNote(i)})_`, buttons: still(i) }));
  const decayItems = decaying.items.map((i): ViewItem => ({ id: i.id, markdown: `${itemText(i)}  _(${decayNote(i)})_`, buttons: [...still(i), ...(mayArchive(i) ? [archive(i)] : [])] }));
  return {
    dated: (e) => (isDue(e, now, verifyDays) ? `; last confirmed ${dayOf(lastConfirmed(e))}` : ""),
    buttons: (e) => (isDue(e, now, verifyDays) ? still(e) : []),
    groups: [
      ...(dueItems.length ? [viewer.group("due", `Due for confirmation (unconfirmed for ${verifyDays} days)`, dueItems)] : []),
      ...(decayItems.length ? [viewer.group("decaying", "Proposed for archiving (low confidence, unused)", decayItems)] : []),
    ],
  };
}
