/**
 * Builds a person's Home tab from the core's view and publishes it (`views.publish`): on
 * `app_home_opened`, and again after every click that may have changed something, or turned a page.
 *
 * The view is asked as the viewer (viewer.ts), with the channels they are in now
 * (membership.ts), so a channel lesson of a channel they are not in is never in it: the core leaves
 * it out of the query. A view over Slack's 100 blocks is built again with smaller pages (the first
 * item of each page kept where it was), so everything stays reachable by paging.
 */
import type { CorePort } from "../../../ground/adapter.ts";
import type { KeyedQueue } from "../../../ground/keyed-queue.ts";
import type { Logger } from "../../../ground/log.ts";
import type { TeamView, ViewRequest } from "../../../ground/view-model.ts";
import type { SlackClient } from "../client.ts";
import { HOME_LIMITS, homeView, type RenderedHome } from "./blocks.ts";
import { resize, type HomeState } from "./state.ts";
import type { HomeViewer, HomeViewers } from "./viewer.ts";
import type { ChannelMembership } from "./membership.ts";

/** Items per page of a group on the Home tab, before shrinking to fit. */
export const HOME_PAGE_SIZE = 10;

export interface HomeDeps {
  core: CorePort;
  client: SlackClient;
  viewers: HomeViewers;
  membership: ChannelMembership;
  log: Logger;
  /**
   * One viewer's Home work (a click's command, then the republish) runs in arrival order, so a
   * quick second click's republish never shows the state from before the first one's.
   */
  order: KeyedQueue;
  /** Preferred items per page (HOME_PAGE_SIZE). */
  pageSize: number;
}

export const viewerKey = (v: HomeViewer): string => `${v.team}:${v.user}`;

export interface PublishOptions {
  /** mrkdwn shown on top: the answer to the click that led here. */
  notice?: string;
  /** Ask Slack for the viewer's channels even if a recent answer is cached (opening the tab). */
  fresh?: boolean;
  trigger?: string;
}

/** Builds and publishes the viewer's Home tab at `state`'s pages. Throws what views.publish throws. */
export async function publishHome(deps: HomeDeps, viewer: HomeViewer, state: HomeState, opts: PublishOptions = {}): Promise<RenderedHome> {
  const [inbound, channels] = await Promise.all([
    deps.viewers.inbound(viewer, "home", opts.trigger, { named: false }),
    deps.membership.channels(viewer.team, viewer.user, { fresh: opts.fresh === true }),
  ]);
  const rendered = await renderHome((req) => deps.core.view(inbound, { ...req, channels }), state, deps.pageSize, opts.notice);
  await deps.client.views.publish({ user_id: viewer.user, view: rendered.view });
  deps.log.info({ user: viewer.user, team: viewer.team, blocks: rendered.blocks, pageSize: rendered.pageSize, channels: channels.length }, "home published");
  return rendered;
}

/**
 * The Home view at `state`'s pages, `pageSize` items a page or fewer: built again with smaller
 * pages while over Slack's 100 blocks (each group's first item kept where it was).
 */
export async function renderHome(
  view: (req: Omit<ViewRequest, "channels">) => Promise<TeamView>,
  state: HomeState,
  pageSize: number,
  notice?: string,
): Promise<RenderedHome & { pageSize: number }> {
  let size = Math.max(1, pageSize);
  for (;;) {
    const at = resize(state, size);
    const rendered = homeView(await view({ pane: "home", pages: at.pages, pageSize: size }), size, notice, { cut: size === 1 });
    if (rendered.fits || size === 1) return { ...rendered, pageSize: size };
    // Blocks grow with items per page: aim under the limit at once rather than one size at a time.
    size = Math.max(1, Math.min(size - 1, Math.floor((size * HOME_LIMITS.blocks) / rendered.blocks)));
  }
}
