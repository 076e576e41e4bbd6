/**
 * cairn on Slack through @slack/bolt: Socket Mode when an app token is set (no public URL needed),
 * else HTTP mode on `port` (Bolt's `/slack/events` for events, commands and interactions, requests
 * verified with the signing secret).
 *
 * Every event is acknowledged at once (Bolt acks Events API requests before listeners run) and
 * handled after: listeners only start the work and return, so a 30-second answer never makes Slack
 * retry. `stop()` stops receiving, then waits (bounded) for answers already in flight.
 *
 * It implements the core's adapter contract: events become `Inbound` and feedback (reactions, and
 * clicks on the feedback buttons under answers), Markdown is rendered as mrkdwn, and the core's
 * delivery path does the rest.
 */
import http from "node:http";
import { App, HTTPReceiver, SocketModeReceiver, webApi, type Receiver } from "@slack/bolt";
import { z } from "zod";
import type { AdapterHost, Capabilities, CorePort, PlatformAdapter, PostTarget, ReplyTarget } from "../../ground/adapter.ts";
import type { Logger } from "../../ground/log.ts";
import type { SlackClient } from "./client.ts";
import { runSlashCommand, SLASH_COMMAND } from "./commands/slash.ts";
import type { ContextLimits } from "./replies/context.ts";
import { slackErrorCode } from "./errors.ts";
import { identify } from "./identify.ts";
import type { BotIdentity } from "./events.ts";
import { onFeedbackAction } from "./feedback/action.ts";
import { FEEDBACK_ACTION_ID } from "./feedback/buttons.ts";
import { boltLogger } from "./transport/logger.ts";
import { toMrkdwn } from "./mrkdwn.ts";
import { NameCache } from "./names.ts";
import { onReactionEvent } from "./feedback/reactions.ts";
import { SLACK_CHUNK_LIMIT } from "./replies/chunk.ts";
import { guardedListener } from "./transport/http-guard.ts";
import { placeTarget, WORKING_REACTION } from "./replies/target.ts";
import { postedFor } from "./replies/posted.ts";
import { guardSocketMessages, MALFORMED_EVENT_TYPE } from "./transport/socket-guard.ts";
import { ackAfterListeners, httpEventErrors, socketEventErrors } from "./transport/ack-once-kept.ts";
import { keepMessage, keptHandler, MESSAGE_EVENTS } from "./transport/kept-messages.ts";
import { KeyedQueue } from "../../ground/keyed-queue.ts";
import { onMessageEvent, type TurnDeps } from "./turn.ts";
import { DEFAULT_SLACK_API_URL } from "./settings.ts";
import type { HttpRoutes } from "../../ops/health.ts";
import { HOME_ACTION_ID } from "./home/blocks.ts";
import { HOME_CALLBACK_ID } from "./home/modals.ts";
import { HOME_PAGE_SIZE, type HomeDeps } from "./home/publish.ts";
import { onHomeAction } from "./home/actions.ts";
import { onHomeSubmission } from "./home/submit.ts";
import { onAppHomeOpened } from "./home/opened.ts";
import { HomeViewers } from "./home/viewer.ts";
import { ChannelMembership, MEMBERSHIP_TTL_MS } from "./home/membership.ts";
import { observeEvent, type ObserveDeps } from "./knowledge/observe.ts";
import { channelHistory } from "./knowledge/history.ts";
import { channelMembers } from "./knowledge/channel-members.ts";
import { channelKind } from "./knowledge/channel-kind.ts";
import { onWhyShortcut, WHY_CALLBACK_ID } from "./commands/why-shortcut.ts";
import { onPostAction, POST_ACTION_ID } from "./replies/post-buttons.ts";

export { DEFAULT_SLACK_API_URL } from "./settings.ts";
/** HTTP mode's one path for events, slash commands and interactions (the manifest's request URLs end in it). */
export const SLACK_EVENTS_PATH = "/slack/events";

export interface SlackSettings {
  botToken: string;
  /** `xapp-...`: Socket Mode. Wins over `signingSecret` when both are set. */
  appToken?: string;
  /** HTTP mode: verifies the `v0` signature of every request. */
  signingSecret?: string;
  /** Web API base (default https://slack.com/api/), for tests and proxies. */
  apiUrl?: string;
  /** HTTP mode's listening port (0 picks a free one). */
  port: number;
  host?: string;
  /** Web API attempts after the first (429s wait Retry-After first). */
  retries?: number;
  /** Least backoff between Web API retries. */
  retryMinMs?: number;
  /**
   * Least time between two edits of the working message (tool status or the answer streaming in),
   * and how long a streamed draft waits before its first post. Default 1 s: Slack allows about one
   * edit per second per channel.
   */
  progressIntervalMs?: number;
  /** How long `stop()` waits for answers in flight. */
  drainMs?: number;
  contextLimits?: ContextLimits;
  /** Replies keep `<!channel>`, `<!here>`, `<!everyone>` and `<!subteam^…>` (CAIRN_ALLOW_MASS_MENTIONS); default: shown as text. */
  allowMassMentions?: boolean;
  /** HTTP mode: other paths served on the same port, ahead of Bolt (health and metrics). */
  routes?: HttpRoutes;
  /** Items per page of a group on the Home tab, before shrinking to Slack's 100 blocks (default 10). */
  homePageSize?: number;
  /** How long a person's channel membership is reused between Home tab clicks (default 60 s; opening the tab asks again). */
  membershipTtlMs?: number;
}

export interface SlackHandle extends PlatformAdapter {
  readonly mode: "socket" | "http";
  /** HTTP mode's bound port; null in Socket Mode. */
  readonly port: number | null;
  readonly bot: BotIdentity;
}

const OpenedSchema = z.looseObject({ channel: z.looseObject({ id: z.string().min(1) }) });

const EnvelopeMetaSchema = z.looseObject({ event_id: z.string().optional() });

/** People joining and leaving channels: who may search a listened channel changes at once (knowledge/observe.ts). */
const MEMBER_EVENTS = ["member_joined_channel", "member_left_channel"] as const;

const HANDLED_EVENTS = new Set(["message", "app_mention", "reaction_added", "reaction_removed", "app_home_opened", ...MEMBER_EVENTS]);

/** Starts Slack and attaches it to the core (replies and the core's own posts). */
export async function startSlack(host: AdapterHost, cfg: SlackSettings, log: Logger): Promise<SlackHandle> {
  const adapter = slackAdapter(cfg, log);
  await adapter.start(host.attach(adapter));
  return adapter;
}

/** What a started Slack adapter holds. */
interface Connected {
  client: SlackClient;
  bot: BotIdentity;
  names: NameCache;
  log: Logger;
  port: number | null;
  /** The socket is open (Socket Mode) or the server listens (HTTP mode), and stop() was not called. */
  connected(): boolean;
  stop(): Promise<void>;
}

/** The Slack adapter for these settings; `start` checks the token and connects. */
export function slackAdapter(cfg: SlackSettings, log: Logger): SlackHandle {
  const mode = cfg.appToken ? "socket" : cfg.signingSecret ? "http" : null;
  if (!mode) {
    throw new Error("Slack needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP mode) next to SLACK_BOT_TOKEN");
  }
  let connected: Connected | null = null;
  const running = (): Connected => {
    if (!connected) throw new Error("the Slack adapter is not started");
    return connected;
  };
  const capabilities: Capabilities = {
    ephemeral: true,
    maxMessageLength: SLACK_CHUNK_LIMIT,
    maxMessageLines: Number.POSITIVE_INFINITY,
    // Slack allows about one edit per second per channel.
    minEditIntervalMs: cfg.progressIntervalMs ?? 1_000,
  };
  return {
    platform: "slack",
    capabilities,
    render: (markdown) => toMrkdwn(markdown, { massMentions: cfg.allowMassMentions === true }),
    mode,
    get port() {
      return connected?.port ?? null;
    },
    get bot() {
      return running().bot;
    },
    async start(core) {
      connected = await connect(core, cfg, mode, log);
    },
    connected: () => connected?.connected() ?? false,
    async open(target: PostTarget): Promise<ReplyTarget> {
      const { client } = running();
      if (target.kind === "channel") return placeTarget(client, target.channel, target.threadId ?? undefined, target.answers);
      const opened = OpenedSchema.parse(await client.conversations.open({ users: target.person }));
      return placeTarget(client, opened.channel.id, undefined);
    },
    postedFor: (channel, threadTs, messageTs) => postedFor(running().client, channel, threadTs, messageTs),
    // Channel knowledge (src/knowledge): the backfill's pages, who is in a channel, and what it is.
    channelHistory: (workspace, channel, page) => {
      const { client, names, bot, log: slog } = running();
      return channelHistory({ client, names, bot, log: slog }, workspace, channel, page);
    },
    channelMembers: (_workspace, channel) => channelMembers(running().client, channel, running().log, running().bot.userId),
    channelKind: (_workspace, channel) => channelKind(running().client, channel),
    async clearWorking(channel: string, ts: string): Promise<void> {
      try {
        await running().client.reactions.remove({ channel, timestamp: ts, name: WORKING_REACTION });
      } catch (err) {
        // Already gone (the crashed process took it off, or someone else did): nothing to do.
        if (slackErrorCode(err) !== "no_reaction") throw err;
      }
    },
    stop: () => connected?.stop() ?? Promise.resolve(),
  };
}

/** Checks the token, wires Bolt's events to the core and starts receiving. */
async function connect(core: CorePort, cfg: SlackSettings, mode: "socket" | "http", log: Logger): Promise<Connected> {
  const slog = log.child({ platform: "slack", mode });
  const sdkLogger = boltLogger(slog);
  const slackApiUrl = cfg.apiUrl ?? DEFAULT_SLACK_API_URL;
  const clientOptions = {
    slackApiUrl,
    logger: sdkLogger,
    // A hung request must not hold a turn forever; a timed-out call is retried like a network error.
    timeout: 30_000,
    retryConfig: { retries: cfg.retries ?? 5, factor: 2, minTimeout: cfg.retryMinMs ?? 1_000, maxTimeout: 30_000, randomize: true },
  };

  const bot = await identify(new webApi.WebClient(cfg.botToken, clientOptions));
  slog.info({ bot: bot.userId, team: bot.teamId }, "slack identity checked");

  const socket =
    mode === "socket"
      ? new SocketModeReceiver({
          appToken: cfg.appToken ?? "",
          logger: sdkLogger,
          // The Socket Mode client makes its own apps.connections.open call; point it at the same API.
          installerOptions: { clientOptions: { slackApiUrl } },
          processEventErrorHandler: socketEventErrors(slog),
        })
      : null;
  if (socket) guardSocketMessages(socket.client, slog);
  const receiver: Receiver = ackAfterListeners(
    socket ??
      guarded(
        new HTTPReceiver({ signingSecret: cfg.signingSecret ?? "", logger: sdkLogger, endpoints: [SLACK_EVENTS_PATH], processEventErrorHandler: httpEventErrors(slog) }),
        slog,
        cfg.routes,
      ),
    slog,
    (seconds) => core.journal.acknowledged("slack", seconds),
  );

  // botId and botUserId are passed so Bolt does not call auth.test again; its ignoreSelf middleware
  // uses them to drop the bot's own messages and reactions (the 👀 it adds).
  const app = new App({ token: cfg.botToken, botId: bot.botId, botUserId: bot.userId, receiver, logger: sdkLogger, clientOptions });
  const client: SlackClient = app.client;
  const names = new NameCache(client, slog);
  const observeDeps: ObserveDeps = { core, names, bot, log: slog, order: new KeyedQueue(Number.MAX_SAFE_INTEGER) };
  const turnDeps: TurnDeps = { core, client, bot, names, log: slog, order: new KeyedQueue(Number.MAX_SAFE_INTEGER), ...(cfg.contextLimits ? { contextLimits: cfg.contextLimits } : {}) };
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  /**
   * Runs an event's work in the background; false when stopping (not run). A person's message is
   * taken on even then (`always`): stored, its turn is handed back through its lease to a replica
   * that is not stopping, at once, where a redelivery by Slack would come seconds later and out of order.
   */
  const track = (what: string, work: () => Promise<void>, always = false): boolean => {
    if (stopping && !always) {
      slog.warn({ what }, "event arrived while stopping; not handled");
      return false;
    }
    const task: Promise<void> = work()
      .catch((err: unknown) => slog.error({ err, what }, "slack event handling failed"))
      .finally(() => inFlight.delete(task));
    inFlight.add(task);
    return true;
  };
  const eventId = (body: unknown): string | undefined => {
    const parsed = EnvelopeMetaSchema.safeParse(body);
    return parsed.success ? parsed.data.event_id : undefined;
  };

  // A person's message: kept in the journal, then acknowledged (ack-once-kept.ts); the journal hands
  // it to the turn at once, or once storage answers again, or after a restart (kept-messages.ts).
  // Taken on even while stopping: stored, its turn is handed back through its lease to a replica
  // that is not stopping, at once, where a redelivery by Slack would come seconds later.
  const handleKept = keptHandler(slog, (kept, settle, held) => {
    const meta = { eventType: kept.type, eventId: eventId(kept.body), retryNum: kept.retryNum, kept: settle, held };
    return new Promise<void>((done) => track(kept.type, () => onMessageEvent(turnDeps, kept.event, kept.body, meta).finally(done), true));
  });
  core.journal.handleWith("slack", handleKept);
  for (const type of MESSAGE_EVENTS) {
    app.event(type, async ({ event, body, context }) => {
      // What channel knowledge keeps of it, beside the turn: its own task, not holding the ack.
      track(`observe ${type}`, () => observeEvent(observeDeps, event, body, { eventType: type, eventId: eventId(body) }));
      await keepMessage(core, slog, { type, event, body, ...(context.retryNum !== undefined ? { retryNum: context.retryNum } : {}) });
    });
  }
  for (const type of MEMBER_EVENTS) {
    app.event(type, async ({ event, body }) => {
      track(type, () => observeEvent(observeDeps, event, body, { eventType: type, eventId: eventId(body) }));
    });
  }
  for (const type of ["reaction_added", "reaction_removed"] as const) {
    app.event(type, async ({ event, body }) => {
      track(type, () => onReactionEvent({ core, names, bot, log: slog }, event, body, { eventType: type, eventId: eventId(body) }));
    });
  }
  // A click on the feedback buttons under an answer: same path as a reaction. Acknowledged first, as
  // every interaction must be within 3 s; the payload is checked after, in onFeedbackAction.
  app.action({ type: "block_actions", action_id: FEEDBACK_ACTION_ID }, async ({ ack, body }) => {
    await ack();
    track("feedback click", () => onFeedbackAction({ core, names, bot, log: slog }, body));
  });
  // The Home tab (home/): built from the core's view when opened, and a click on it runs its
  // button's command as the clicker. Clicks and submissions are acknowledged first, like the
  // feedback buttons; the work runs after, tracked, so stop() waits for it.
  const home: HomeDeps = {
    core,
    client,
    viewers: new HomeViewers(client, names),
    membership: new ChannelMembership(client, slog, { ttlMs: cfg.membershipTtlMs ?? MEMBERSHIP_TTL_MS }),
    log: slog,
    order: new KeyedQueue(Number.MAX_SAFE_INTEGER),
    pageSize: cfg.homePageSize ?? HOME_PAGE_SIZE,
  };
  app.event("app_home_opened", async ({ event, body }) => {
    track("home opened", () => onAppHomeOpened(home, event, body));
  });
  app.action({ type: "block_actions", action_id: HOME_ACTION_ID }, async ({ ack, body }) => {
    await ack();
    track("home click", () => onHomeAction(home, body));
  });
  app.view({ type: "view_submission", callback_id: HOME_CALLBACK_ID }, async ({ ack, body }) => {
    // Acknowledged with nothing: the modal closes, and the answer comes as a new modal or the Home tab.
    await ack();
    track("home submission", () => onHomeSubmission(home, body));
  });
  // A button on one of cairn's posts (a report, a reminder): its command, run as the clicker (replies/post-buttons.ts).
  app.action({ type: "block_actions", action_id: POST_ACTION_ID }, async ({ ack, body }) => {
    await ack();
    track("post button", () => onPostAction({ core, client, names, log: slog }, body));
  });
  // "Why this answer?" on a message (commands/why-shortcut.ts): acknowledged first, answered to the clicker alone.
  app.shortcut({ type: "message_action", callback_id: WHY_CALLBACK_ID }, async ({ ack, body }) => {
    await ack();
    track("why shortcut", () => onWhyShortcut({ core, client, names, log: slog }, body));
  });
  app.event(/.*/, async ({ event, body }) => {
    if (!HANDLED_EVENTS.has(event.type) && (event.type as string) !== MALFORMED_EVENT_TYPE) slog.info({ eventType: event.type, eventId: eventId(body) }, "unhandled event type acknowledged");
  });
  app.command(SLASH_COMMAND, async ({ command, ack, respond }) => {
    // Acknowledge first: Slack shows the person an error after 3 s without it.
    await ack();
    track("command", () => runSlashCommand({ core, client, names, bot, log: slog }, command, respond));
  });
  app.error(async (error) => {
    slog.error({ err: error }, "bolt reported an error");
  });

  let server: http.Server | null = null;
  if (mode === "http") {
    const started: unknown = await app.start({ port: cfg.port, ...(cfg.host ? { host: cfg.host } : {}) });
    if (started instanceof http.Server) server = started;
  } else {
    await app.start();
  }
  const address = server?.address();
  const port = address && typeof address === "object" ? address.port : null;
  slog.info({ port, bot: bot.userId }, mode === "socket" ? "slack connected (Socket Mode)" : `slack listening (HTTP mode, ${SLACK_EVENTS_PATH})`);

  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      const closing = app.stop();
      // Slack keeps connections alive; without this, close() would wait for them to time out.
      server?.closeAllConnections();
      await closing.catch((err: unknown) => slog.warn({ error: slackErrorCode(err) }, "slack receiver did not stop cleanly"));
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        Promise.allSettled([...inFlight]).then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), cfg.drainMs ?? 30_000))),
      ]);
      clearTimeout(timer);
      if (!drained) slog.warn({ pending: inFlight.size }, "stopped with answers still in flight");
      slog.info("slack stopped");
    })();
    return stopped;
  };
  const connected = (): boolean => {
    if (stopping) return false;
    // WebSocket.OPEN: the client reconnects on its own; while it does, cairn hears nothing.
    if (socket) return socket.client.websocket?.readyState === 1;
    return server?.listening === true;
  };
  return { client, bot, names, log: slog, port, connected, stop };
}

/**
 * Bolt's HTTP receiver behind the guard (see transport/http-guard.ts), with `routes` (health, metrics) ahead
 * of both; the receiver calls its listener per request.
 */
function guarded(receiver: HTTPReceiver, log: Logger, routes?: HttpRoutes): HTTPReceiver {
  const slack = guardedListener(receiver.requestListener, (refusal) => log.warn(refusal, "slack request refused"));
  receiver.requestListener = routes
    ? (req, res) => {
        if (!routes(req, res)) slack(req, res);
      }
    : slack;
  return receiver;
}
