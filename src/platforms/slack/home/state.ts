/**
 * What a published Home tab remembers about itself, in the view's `private_metadata` (Slack hands it
 * back with every click on the view): the page of each group and the page size it was built with.
 * Slack keeps no other state for us, and none is kept in the process: a click may reach another
 * replica, and a republish after it must show the viewer the pages they were on.
 *
 * A modal opened from the Home tab carries the same, plus the command line its submission runs
 * (`run`): the second step of a two-step button (Forget me -> Erase everything), or the command a
 * typed text is added to (Edit persona). Both are read back through a schema: Slack sends them back
 * as given, but anything that does not parse is treated as "first pages", never trusted further.
 */
import { z } from "zod";

/** Slack refuses a view whose private_metadata is longer. */
export const PRIVATE_METADATA_LIMIT = 3000;

export interface HomeState {
  /** Page (0-based) per group id; absent: the first. */
  pages: Record<string, number>;
  /** The page size those pages count in. */
  size: number;
}

const Pages = z.record(z.string().max(100), z.number().int().min(0).max(1_000_000));
const StateSchema = z.object({ p: Pages.default({}), s: z.number().int().min(1).max(100) });
const ModalSchema = StateSchema.extend({ run: z.string().min(1).max(2000) });

export function initialState(size: number): HomeState {
  return { pages: {}, size };
}

/** The state as private_metadata; first pages are left out, and pages are dropped rather than overflow. */
export function encodeState(state: HomeState, extra: Record<string, string> = {}): string {
  const pages = Object.entries(state.pages).filter(([, p]) => p > 0);
  for (;;) {
    const text = JSON.stringify({ ...extra, p: Object.fromEntries(pages), s: state.size });
    if (text.length <= PRIVATE_METADATA_LIMIT || pages.length === 0) return text;
    pages.pop();
  }
}

/** The state a view was published with; first pages of `fallbackSize` when absent or unreadable. */
export function decodeState(metadata: string | undefined | null, fallbackSize: number): HomeState {
  const parsed = StateSchema.safeParse(parseJson(metadata));
  return parsed.success ? { pages: parsed.data.p, size: parsed.data.s } : initialState(fallbackSize);
}

/** A modal's metadata: the command line its submission runs, and the Home state to republish with. */
export function encodeModal(run: string, state: HomeState): string {
  return encodeState(state, { run });
}

export function decodeModal(metadata: string | undefined | null): { run: string; state: HomeState } | null {
  const parsed = ModalSchema.safeParse(parseJson(metadata));
  return parsed.success ? { run: parsed.data.run, state: { pages: parsed.data.p, size: parsed.data.s } } : null;
}

/**
 * The same first item of each group, counted in another page size: a republish that has to shrink
 * (or may grow) its pages keeps the viewer where they were.
 */
export function resize(state: HomeState, size: number): HomeState {
  if (size === state.size) return state;
  const pages = Object.fromEntries(Object.entries(state.pages).map(([g, p]) => [g, Math.floor((p * state.size) / size)]));
  return { pages, size };
}

function parseJson(text: string | undefined | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
