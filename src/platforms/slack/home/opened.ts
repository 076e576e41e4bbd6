/**
 * `app_home_opened`: someone opened cairn's App Home. On the Home tab, their view is built and
 * published; on the Messages tab, nothing is done (it is their DM with cairn).
 *
 * Opening the tab asks Slack for their channels afresh (a person who left a channel stops seeing
 * its lessons the next time they look), and keeps the pages they were on, which Slack sends back
 * with the view it shows.
 */
import { z } from "zod";
import { EnvelopeSchema } from "../events.ts";
import { publishHome, viewerKey, type HomeDeps } from "./publish.ts";
import { decodeState } from "./state.ts";
import type { HomeViewer } from "./viewer.ts";

export const AppHomeOpenedSchema = z.looseObject({
  type: z.literal("app_home_opened"),
  user: z.string().min(1),
  channel: z.string().min(1).optional(),
  tab: z.string().optional(),
  view: z.looseObject({ type: z.string().optional(), private_metadata: z.string().optional() }).nullish(),
});

export async function onAppHomeOpened(deps: HomeDeps, event: unknown, body: unknown): Promise<void> {
  const e = AppHomeOpenedSchema.safeParse(event);
  const env = EnvelopeSchema.safeParse(body);
  if (!e.success || !env.success) {
    const error = e.error ?? env.error;
    deps.log.warn({ detail: error ? z.prettifyError(error) : "" }, "malformed app_home_opened ignored");
    return;
  }
  // Absent on old payloads; "messages" is the DM tab.
  if (e.data.tab !== undefined && e.data.tab !== "home") return;
  const viewer: HomeViewer = { team: env.data.team_id, user: e.data.user };
  if (e.data.channel) deps.viewers.knownDm(viewer, e.data.channel);
  const state = decodeState(e.data.view?.type === "home" ? e.data.view.private_metadata : undefined, deps.pageSize);
  await deps.order.run(viewerKey(viewer), () => publishHome(deps, viewer, state, { fresh: true }).then(() => undefined));
}
