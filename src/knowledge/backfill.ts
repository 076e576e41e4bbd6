/**
 * The backfill of a listened channel: its history, newest first, back to `backfillDays` before
 * listening started, a page at a time through the platform adapter (which keeps within the
 * platform's rate limits). After each page its cursor and counts are stored, so a backfill cut
 * short (a restart, a crash: the job is durable and runs again after its lease) goes on from the
 * last page kept, and a message kept twice is not stored twice. The admin who asked is told in a
 * DM as it goes (every PROGRESS_EVERY messages) and when it is done.
 *
 * Forgetting sticks (erasure/tombstone-store.ts): a person's messages from before their `forget me`
 * or `listen exclude-me` are skipped, and a channel whose listening was turned off before is read
 * from the new `listen on` only, so nothing said before the off comes back.
 */
import { z } from "zod";
import { defineJob, type JobHandler } from "../jobs/worker.ts";
import type { Platform } from "../ground/types.ts";
import type { ChannelMessage } from "../ground/channel-events.ts";
import { BACKFILL_JOB, type ChannelKnowledge } from "./knowledge.ts";

/** Messages asked for per page (Slack's conversations.history takes up to 999; Discord's up to 100). */
export const PAGE_SIZE = 200;
const PROGRESS_EVERY = 2_000;
/** Messages kept by one backfill past which PostgreSQL's statistics are refreshed at its end. */
const ANALYZE_AFTER = 10_000;

const Payload = z.object({ listenId: z.string().min(1) });

const day = (d: Date | null): string => (d ? d.toISOString().slice(0, 10) : "the start");

/** Sent by someone before they asked to be forgotten (`forget me`) or left out (`listen exclude-me`). */
const isForgotten = (forgotten: ReadonlyMap<string, Date>, m: ChannelMessage): boolean => {
  const at = forgotten.get(m.author.externalId);
  return at !== undefined && m.sentAt <= at;
};

export function backfillJob(knowledge: ChannelKnowledge): JobHandler<unknown> {
  const { listens, tombstones, history, adapterFor, post, log, now } = knowledge.deps;
  return defineJob({
    kind: BACKFILL_JOB,
    payload: Payload,
    async run({ listenId }, signal) {
      const found = await listens.ofBackfill(listenId);
      if (!found || found.listen.status !== "on" || found.listen.backfill === "done") return "nothing to read";
      const { scope } = found;
      let { listen } = found;
      const workspace = await history.workspace(scope);
      if (!workspace) throw new Error(`no workspace ${scope.workspaceId}`);
      const platform = workspace.platform as Platform;
      const adapter = adapterFor(platform);
      // Another process with the platform attached takes the job up when this one gives it back.
      if (!adapter?.channelHistory) throw new Error(`${platform} is not attached to this process, or cannot read a channel's history`);
      // Turned off before: on again means new messages only (commands/listen.ts), nothing from before.
      const off = await tombstones.channelTurnedOff(scope, listen.channelId);
      const oldest = off ? listen.enabledAt : new Date(listen.enabledAt.getTime() - knowledge.settings.backfillDays * 24 * 60 * 60_000);
      const tell = async (text: string): Promise<void> => {
        if (!listen.requestedBy) return;
        await post(platform, { kind: "dm", workspace: workspace.externalId, person: listen.requestedBy }, text).catch((err: unknown) => log.warn({ err }, "could not tell the backfill's progress"));
      };
      let told = Math.floor(listen.backfilled / PROGRESS_EVERY);
      for (;;) {
        // Stopping, or the lease lost: what was read is stored; the job runs again from the cursor.
        if (signal.aborted) throw new Error("backfill interrupted; it goes on from its last page");
        const page = await adapter.channelHistory(workspace.externalId, listen.channelId, { cursor: listen.cursor, oldest, limit: PAGE_SIZE });
        // Someone who asked to be forgotten or left out: nothing they said before asking is read back.
        const forgotten = await tombstones.forgottenAuthors(scope);
        const kept = await knowledge.store.keep(workspace, listen.channelId, page.messages.filter((m) => !isForgotten(forgotten, m)));
        const reached: Date | null = page.messages.reduce<Date | null>((min, m) => (!min || m.sentAt < min ? m.sentAt : min), listen.reachedAt);
        const done = page.next === null || !(await listens.isOn(scope, listenId));
        listen = await listens.recordPage(scope, listenId, { cursor: page.next, kept, reachedAt: reached, done });
        if (done) break;
        const nowTold = Math.floor(listen.backfilled / PROGRESS_EVERY);
        if (nowTold > told) {
          told = nowTold;
          await tell(`Reading <#${listen.channelId}>: ${listen.backfilled.toLocaleString("en-US")} messages kept so far, back to ${day(listen.reachedAt)}.`);
        }
      }
      log.info({ channel: listen.channelId, kept: listen.backfilled, at: now().toISOString() }, "channel backfill done");
      // Statistics describing the table without a big backfill made a search over the channel read
      // every match, hundreds of times slower (store.ts's refreshStatistics).
      if (listen.backfilled >= ANALYZE_AFTER) {
        await knowledge.store.refreshStatistics().catch((err: unknown) => log.warn({ err }, "could not refresh the message statistics"));
      }
      await tell(`Done reading <#${listen.channelId}>: ${listen.backfilled.toLocaleString("en-US")} messages kept, back to ${day(listen.reachedAt)}. People who can read the channel can now ask me about them.`);
      return `${listen.backfilled} messages kept`;
    },
  });
}
