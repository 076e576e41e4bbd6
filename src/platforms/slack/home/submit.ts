/**
 * The submission of a Home tab modal (`view_submission`), acknowledged by the adapter at once (which
 * closes the modal) and handled here after. The modal's private_metadata says what to run:
 * - a next step (Erase everything): its command runs as the submitter; the answer is shown in a
 *   modal (the last step of something as weighty as an erasure says what it did), and the Home tab
 *   is published again;
 * - a text field (Edit persona): the command runs with the typed text as its last argument; done,
 *   the Home tab is published again with the answer on top; refused, the answer is shown in a modal.
 */
import { z } from "zod";
import { toMrkdwn } from "../mrkdwn.ts";
import { answerModal, HOME_CALLBACKS, INPUT_ACTION_ID, INPUT_BLOCK_ID } from "./modals.ts";
import { changedNothing, openModal, run } from "./actions.ts";
import { publishHome, viewerKey, type HomeDeps } from "./publish.ts";
import { decodeModal } from "./state.ts";
import type { HomeViewer } from "./viewer.ts";

export const SubmissionSchema = z.looseObject({
  type: z.literal("view_submission"),
  user: z.looseObject({ id: z.string().min(1), team_id: z.string().optional() }),
  team: z.looseObject({ id: z.string().min(1) }).nullish(),
  trigger_id: z.string().min(1).optional(),
  view: z.looseObject({
    type: z.literal("modal"),
    callback_id: z.enum([HOME_CALLBACKS.next, HOME_CALLBACKS.input]),
    private_metadata: z.string().optional(),
    title: z.looseObject({ text: z.string() }).optional(),
    state: z.looseObject({ values: z.record(z.string(), z.record(z.string(), z.looseObject({ value: z.string().nullish() }))) }).optional(),
  }),
});

export async function onHomeSubmission(deps: HomeDeps, body: unknown): Promise<void> {
  const parsed = SubmissionSchema.safeParse(body);
  if (!parsed.success) {
    deps.log.warn({ detail: z.prettifyError(parsed.error) }, "malformed home submission ignored");
    return;
  }
  const b = parsed.data;
  const team = b.team?.id ?? b.user.team_id;
  const meta = decodeModal(b.view.private_metadata);
  if (!team || !meta) {
    deps.log.warn({ user: b.user.id, callback: b.view.callback_id }, "home submission without a team or a command to run ignored");
    return;
  }
  const viewer: HomeViewer = { team, user: b.user.id };
  const title = b.view.title?.text ?? "cairn";
  // Opening a modal needs a trigger; a submission without one (Slack always sends it) gets the Home tab only.
  const tell = async (text: string): Promise<void> => {
    if (b.trigger_id) await openModal(deps, { viewer, trigger: b.trigger_id }, answerModal(title, text));
  };
  await deps.order.run(viewerKey(viewer), async () => {
    if (b.view.callback_id === HOME_CALLBACKS.next) {
      const reply = await run(deps, viewer, meta.run, [], b.trigger_id);
      await tell(reply.text);
      if (!changedNothing(reply)) await publishHome(deps, viewer, meta.state);
      return;
    }
    const text = b.view.state?.values[INPUT_BLOCK_ID]?.[INPUT_ACTION_ID]?.value ?? "";
    const reply = await run(deps, viewer, meta.run, [text], b.trigger_id);
    if (changedNothing(reply)) await tell(reply.text);
    else await publishHome(deps, viewer, meta.state, { notice: toMrkdwn(reply.text) });
  });
}
