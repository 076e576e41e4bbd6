/**
 * The agent core: one Inbound in, one Outbound out, whatever the platform.
 *
 * Invariants kept here:
 * - The person's message is stored before anything else happens; a failure later loses nothing.
 * - Messages of one conversation are handled strictly in order; conversations run concurrently,
 *   bounded by `maxConcurrency`.
 * - The scope of every read is built once, from the stored place of the inbound message.
 * - A model failure never surfaces as an exception to the adapter: the person gets a polite reply.
 */
import type { Database } from "../db/client.ts";
import type { Logger } from "../ground/log.ts";
import type { FeedbackEvent, FeedbackResult, HandleResult, Inbound, Outbound, PersonScope, Scope, TurnHooks } from "../ground/types.ts";
import { JobQueue } from "../jobs/job-store.ts";
import { ErasureStore } from "../erasure/erasure-store.ts";
import { conversationKey, HistoryStore, personScopeOf, scopeOf, scopeOfDelivery, scopeOfPerson, scopeOfWorkspace, turnOf, type HistoryMessage, type Lease, type Message, type Place } from "../history/store/store.ts";
import { MemoryStore, usedChars, type MemoryBudgets, type MemoryEntry } from "../memory/store.ts";
import { scanStored } from "../safety/scanner.ts";
import { SkillStore } from "../skills/store.ts";
import { isPrivateSkill } from "../skills/visibility.ts";
import { loadBundledSkills } from "../skills/bundled.ts";
import { KeyedQueue } from "../ground/keyed-queue.ts";
import { DEFAULT_LEASES, TurnLeases, type LeaseSettings } from "./leases.ts";
import { LeaseStore } from "./lease-store.ts";
import { DEFAULT_RECOVERY, Recovery, type RecoverySettings } from "./recovery.ts";
import { checkAccess, type AccessPolicy } from "../admission/access.ts";
import { limitText, RateLimiter } from "../admission/rate-limit.ts";
import { RateStore } from "../admission/rate-store.ts";
import { ClaimStore } from "./claim-store.ts";
import { ToolRegistry, type Tool } from "../tools/registry.ts";
import { memoryTool } from "../tools/memory.ts";
import { skillTools } from "../tools/skills.ts";
import { sessionSearchTool } from "../tools/search.ts";
import { ModelUnavailableError, type ModelClient } from "../agent/model.ts";
import { INTERNAL_ERROR_REPLY, MODEL_INTERRUPTED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../ground/replies.ts";
import { cutNote, DEFAULT_MAX_MESSAGE_CHARS, storable, storableStrings, withinLimit } from "../ground/text.ts";
import { DeliveryPath, notATurn } from "./delivery.ts";
import { runCommandSafely } from "./command-answer.ts";
import type { Answered, CommandTarget, CorePort, PlatformAdapter, Posted, PostTarget, Received, ReplyTarget, RichPost, ReceiveOptions } from "../ground/adapter.ts";
import type { Platform } from "../ground/types.ts";
import { SessionManager, readSnapshot, type Snapshot } from "../agent/sessions.ts";
import { SessionStore } from "../agent/session-store.ts";
import { buildRequest, historyToMessages, renderProfile, renderShared, withLessons } from "../agent/prompt.ts";
import { relevantLessons } from "../lessons/recall.ts";
import { runToolLoop, type LoopResult } from "../agent/loop.ts";
import { errText } from "../ground/log.ts";
import { droppedNote, summarize } from "../agent/compress.ts";
import type { CommandCall, CommandName, CommandReply } from "../ground/commands.ts";
import { runCommand } from "../commands/dispatch.ts";
import { Learning } from "../learning/learning.ts";
import { CorrectionStore } from "../learning/correction-store.ts";
import { TraceStore } from "../learning/trace-store.ts";
import { ReplyPlaceStore } from "../learning/reply-place-store.ts";
import { LessonStore } from "../lessons/lesson-store.ts";
import { DEFAULT_LEARNING, type LearningSettings } from "../learning/settings.ts";
import { withCorrection } from "../learning/correction-frame.ts";
import type { JobHandler } from "../jobs/worker.ts";
import { Scheduler } from "../jobs/scheduler.ts";
import { DEFAULT_SCHEDULES, type ScheduleSettings } from "../jobs/schedules.ts";
import { Metrics } from "../ops/metrics.ts";
import { DEFAULT_PERSONA_CHARS, PersonaStore } from "../persona/store.ts";
import { buildView } from "../views/build.ts";
import { ViewStore } from "../views/view-store.ts";
import { RevisionStore } from "../revisions/revision-store.ts";
import { CurationStore } from "../curator/curation-store.ts";
import { ReportStore } from "../report/report-store.ts";
import { ChannelKnowledge, DEFAULT_KNOWLEDGE, type KnowledgeSettings } from "../knowledge/knowledge.ts";
import { backfillJob } from "../knowledge/backfill.ts";
import { KnowledgeStore } from "../knowledge/store.ts";
import { ListenStore } from "../knowledge/listen-store.ts";
import type { ChannelEvent } from "../ground/channel-events.ts";
import type { TeamView, ViewRequest } from "../ground/view-model.ts";
import { instrumentModel } from "../ops/model-metrics.ts";
import { countDelivery, countTurn } from "../ops/core-metrics.ts";

export interface AgentSettings {
  model: string;
  summaryModel: string;
  maxTokens: number;
  budgets: MemoryBudgets;
  sessionIdleMs: number;
  toolIterations: number;
  historyCharLimit: number;
  historyKeepMessages: number;
  maxConcurrency: number;
  /** Who may talk to cairn, where, and who is an admin. */
  access: AccessPolicy;
  /** Messages per person per hour; 0 = unlimited. */
  rateLimitPerHour: number;
  /** The team persona's budget in characters (default DEFAULT_PERSONA_CHARS). */
  personaChars?: number;
  /** The longest message read whole; longer ones are cut with a note to the person (default 20,000). */
  maxMessageChars?: number;
  /** Where bundled skills are read from; null skips the import (tests that want an empty library). */
  bundledSkillsDir: string | null;
  /** The learning loop: reviews, corrections, rules, the job worker (default DEFAULT_LEARNING). */
  learning?: Partial<LearningSettings>;
  /** Channel knowledge: backfill depth, retention, channels listened in from start-up (default DEFAULT_KNOWLEDGE). */
  knowledge?: Partial<KnowledgeSettings>;
  /** When the curator and the report run, and the zone their expressions are read in (default DEFAULT_SCHEDULES). */
  schedules?: Partial<ScheduleSettings>;
  /** Turn leases: how long a dead process's turns wait for another (default DEFAULT_LEASES). */
  leases?: Partial<LeaseSettings>;
  /** Lost turns: how old one may be and still be answered (default DEFAULT_RECOVERY). */
  recovery?: Partial<RecoverySettings>;
}

export interface HandleOptions {
  leased?: boolean;
  context?: Promise<string>;
}

export interface CoreDeps {
  database: Database;
  model: ModelClient;
  settings: AgentSettings;
  log: Logger;
  now?: () => Date;
  /** More job handlers for the worker (a kind already handled is taken over by the one given here). */
  handlers?: readonly JobHandler<unknown>[];
  /** Where turns, model and tool calls, jobs and errors are counted (default: a new one, without process metrics). */
  metrics?: Metrics;
}

/** Reactions that mean "yes, share it": Slack names and Discord's unicode characters. */
const CONFIRM_EMOJI = new Set(["white_check_mark", "heavy_check_mark", "✅", "✔️"]);

export { MODEL_INTERRUPTED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../ground/replies.ts";

export class Core implements CorePort {
  readonly history: HistoryStore;
  readonly memory: MemoryStore;
  readonly skills: SkillStore;
  readonly persona: PersonaStore;
  readonly revisions: RevisionStore;
  readonly curation: CurationStore;
  readonly reports: ReportStore;
  readonly views: ViewStore;
  readonly knowledge: ChannelKnowledge;
  readonly sessions: SessionManager;
  readonly tools: ToolRegistry;
  readonly jobs: JobQueue;
  /** Real deletion: one entry, or everything of a person, and the two-step request of it. */
  readonly erasure: ErasureStore;
  /** The one path from a platform's message to the answer on that platform, and the core's own posts. */
  readonly delivery: DeliveryPath;
  /** Reviews, corrections, lessons and rules, run by the job worker after replies. */
  readonly learning: Learning;
  /** The curator's and the report's slots, queued as jobs for the worker. */
  readonly scheduler: Scheduler;
  /** What this core counts (GET /metrics). */
  readonly metrics: Metrics;
  /** The model, measured under what each call is for. */
  private readonly models: { turn: ModelClient; summary: ModelClient };
  private readonly queue: KeyedQueue;
  /** Which process answers which stored message; renewed while turns run (leases.ts). */
  readonly leases: TurnLeases;
  /** The turns a dead or stopped process left, finished here (recovery.ts). */
  readonly recovery: Recovery;
  private readonly intake = new KeyedQueue(Number.MAX_SAFE_INTEGER);
  private readonly limiter: RateLimiter;
  /** Which replica acts on a platform event every replica receives (claim-store.ts). */
  private readonly claims: ClaimStore;
  private readonly now: () => Date;

  constructor(private readonly deps: CoreDeps) {
    const db = deps.database.prisma;
    const s = deps.settings;
    this.metrics = deps.metrics ?? new Metrics({ processMetrics: false });
    this.models = { turn: instrumentModel(deps.model, this.metrics, "turn"), summary: instrumentModel(deps.model, this.metrics, "summary") };
    this.sessions = new SessionManager(new SessionStore(deps.database), s.sessionIdleMs);
    // A conversation just created has no session: its first message skips looking for one.
    this.history = new HistoryStore(deps.database, (id) => this.sessions.noneOpen(id));
    this.memory = new MemoryStore(db, s.budgets);
    this.persona = new PersonaStore(db, s.personaChars ?? DEFAULT_PERSONA_CHARS);
    this.skills = new SkillStore(db);
    // Channel knowledge needs the delivery path (its adapters) and the job queue, made below.
    const readable = (scope: Scope): Promise<string[]> => this.knowledge.readers.readable(scope);
    const tools: Tool[] = [memoryTool(this.memory) as Tool, ...skillTools(this.skills), sessionSearchTool(this.history, readable) as Tool];
    this.tools = new ToolRegistry(tools, (err, tool) => deps.log.error({ err, tool }, "tool failed unexpectedly"), (tool, result) => this.metrics.toolCall(tool, result));
    this.queue = new KeyedQueue(s.maxConcurrency);
    this.now = deps.now ?? (() => new Date());
    this.revisions = new RevisionStore(db, [this.skills, this.memory], this.now);
    this.curation = new CurationStore(db, [this.skills, this.memory]);
    this.reports = new ReportStore(db);
    this.views = new ViewStore(db);
    this.jobs = new JobQueue(db, this.now);
    this.limiter = new RateLimiter(new RateStore(deps.database), s.rateLimitPerHour);
    this.claims = new ClaimStore(deps.database, this.now, deps.log);
    this.erasure = new ErasureStore(db, { memory: this.memory, skills: this.skills, sessions: this.sessions, history: this.history });
    this.delivery = new DeliveryPath({
      // Made storable at the port already (receive): not walked again.
      handle: (inbound, hooks, context) => this.handleStorable(inbound, hooks, { leased: true, ...(context ? { context } : {}) }),
      recordDelivery: (reply, channelId, ids) => this.recordDelivery(reply, channelId, ids),
      delivered: (reply) => this.delivered(reply),
      undelivered: (reply) => this.undelivered(reply),
      claim: (key) => this.claims.claim(key),
      history: this.history,
      log: deps.log,
    });
    const listens = new ListenStore(deps.database);
    this.knowledge = new ChannelKnowledge({
      store: new KnowledgeStore(deps.database, this.history, listens, s.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS),
      listens,
      history: this.history,
      jobs: this.jobs,
      adapterFor: (platform) => this.delivery.adapterOf(platform),
      post: (platform, target, markdown) => this.post(platform, target, markdown),
      kick: () => this.learning.worker.kick(),
      settings: { ...DEFAULT_KNOWLEDGE, ...s.knowledge },
      log: deps.log,
      now: this.now,
    });
    const leaseStore = new LeaseStore(deps.database);
    this.leases = new TurnLeases(leaseStore, { ...DEFAULT_LEASES, ...s.leases }, () => this.queue.activeKeys > 0 || this.delivery.inFlight > 0, deps.log, this.now);
    this.recovery = new Recovery({
      store: leaseStore,
      leases: this.leases,
      settings: { ...DEFAULT_RECOVERY, ...s.recovery },
      platforms: () => this.delivery.platforms(),
      inQueue: (key, work) => this.queue.run(key, work),
      answer: async (place, sessionId, messageId) => {
        const reply = await this.turn(place, await this.sessionFor(place, sessionId), messageId, {}, null, this.leases.next());
        // A recovered turn is a turn like any other in the metrics.
        this.metrics.turn(reply ? reply.status : "dropped_taken_over");
        return reply;
      },
      giveUp: async (place, sessionId, messageId, text) => {
        const reply = await this.history.recordReply(place, await this.sessionFor(place, sessionId), messageId, text, "failed", this.leases.next());
        return reply && { status: "failed", text, conversationId: place.conversation.id, replyMessageId: reply.id };
      },
      post: (reply, workspace, conversation, answers) => this.delivery.resume(reply, workspace, conversation, answers),
      clearWorking: (platform, channelId, messageId) => this.delivery.clearWorking(platform, channelId, messageId),
      log: deps.log,
      now: this.now,
    });
    const learning = { ...DEFAULT_LEARNING, ...s.learning };
    this.learning = new Learning({
      jobs: this.jobs,
      model: deps.model,
      memory: this.memory,
      skills: this.skills,
      history: this.history,
      places: new ReplyPlaceStore(db),
      corrections: new CorrectionStore(db, this.now, learning.correctionWindowMs),
      traces: new TraceStore(db),
      lessons: new LessonStore(db, this.memory),
      post: (platform, target, markdown, rich) => this.post(platform, target, markdown, rich),
      settings: { model: s.model, maxTokens: s.maxTokens, budgets: s.budgets, access: s.access, learning },
      log: deps.log,
      now: this.now,
      metrics: this.metrics,
    }, [backfillJob(this.knowledge), ...(deps.handlers ?? [])], { curation: this.curation, reports: this.reports });
    this.scheduler = new Scheduler({
      queue: this.jobs,
      kick: () => this.learning.worker.kick(),
      settings: { ...DEFAULT_SCHEDULES, ...s.schedules },
      log: deps.log,
      now: this.now,
      // In use: some workspace had talked to cairn before the slot.
      inUseBefore: (at) => this.history.workspaceCreatedBefore(at),
    });
    this.metrics.watch({ jobQueue: () => this.jobs.depth(), openConversations: () => this.queue.activeKeys });
  }

  /**
   * Starts the job worker (reviews, feedback, lessons, scheduled jobs), then the schedules, which
   * queue the slots missed while no process ran: call once the adapters are started.
   */
  async startBackground(): Promise<void> {
    this.delivery.setOpen(true);
    this.leases.start();
    this.learning.start();
    await this.scheduler.start();
    await this.knowledge.start();
    // The turns a process left when it died (this one before a restart, or another replica).
    await this.recovery.start();
  }

  /**
   * Stops the schedules first (no new slot is queued), then claiming jobs; jobs under way finish
   * within `graceMs` or are handed back through their leases.
   */
  async stopBackground(graceMs?: number): Promise<void> {
    await this.handBack();
    this.knowledge.stop();
    await this.scheduler.stop();
    await this.learning.stop(graceMs);
  }

  /**
   * Stopping: waits up to `timeoutMs` for the answers in flight to reach the platform, then hands
   * back the rest (`handBack`). Call once the adapters no longer take events, before they disconnect.
   */
  async drainTurns(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.delivery.inFlight > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    if (this.delivery.inFlight > 0) this.deps.log.warn({ inFlight: this.delivery.inFlight }, "stop timeout reached: handing back the turns still in flight");
    await this.handBack();
  }

  /** No more answers are posted from here; the turns still under way go to whichever process takes their leases. */
  private async handBack(): Promise<void> {
    await this.recovery.stop();
    this.delivery.setOpen(false);
    await this.leases.release().catch((err: unknown) => this.deps.log.error({ err }, "could not hand back the turns in flight; they are taken over when their leases run out"));
  }

  /** A reply none of whose parts reached the platform: recorded as failed, no longer in flight. */
  private async undelivered(reply: Outbound): Promise<void> {
    if (reply.replyMessageId === null) return;
    await this.history.recordUndelivered(reply.replyMessageId);
  }

  /** A reply reached the platform: queue what it triggers (reviews, the lesson of a correction). Never throws. */
  private async delivered(reply: Outbound): Promise<void> {
    if (reply.status !== "ok" || reply.replyMessageId === null || reply.conversationId === null) return;
    try {
      await this.learning.afterDelivered(reply.replyMessageId, reply.conversationId);
    } catch (err) {
      this.deps.log.error({ err, reply: reply.replyMessageId }, "could not queue the learning jobs of a reply");
    }
  }

  /** Makes a platform reachable for the core's own posts; the port it returns renders replies with that adapter. */
  attach(adapter: PlatformAdapter): CorePort {
    this.delivery.attach(adapter);
    return {
      // What a platform delivers is made storable once, here (text.ts): names and ids included.
      receive: (inbound, target, opts) => countDelivery(this.metrics, this.delivery.receive(storableStrings(inbound), target, adapter, opts?.onStored)),
      feedback: (event) => this.feedback(storableStrings(event)),
      endSession: (inbound, reason) => this.endSession(storableStrings(inbound), reason),
      answer: (inbound, call, target) => this.answer(storableStrings(inbound), { name: call.name, args: storableStrings(call.args) }, target, adapter),
      command: (inbound, name, args) => this.command(storableStrings(inbound), name, args && storableStrings(args)),
      view: (inbound, request) => this.view(storableStrings(inbound), storableStrings(request)),
      observe: (event) => this.observe(storableStrings(event)),
      claim: (key, windowMs) => this.claim(key, windowMs),
      log: this.log,
    };
  }

  /** A message through the adapter attached last for its platform. */
  receive(inbound: Inbound, target: ReplyTarget, opts?: ReceiveOptions): Promise<Received> {
    return countDelivery(this.metrics, this.delivery.receive(storableStrings(inbound), target, undefined, opts?.onStored));
  }

  /** A message cairn starts itself, recorded as a delivery so reactions on it reach the core. */
  post(platform: Platform, target: PostTarget, markdown: string, rich?: RichPost): Promise<Posted> {
    return countDelivery(this.metrics, this.delivery.post(platform, target, markdown, rich));
  }

  /** Imports the bundled skills (idempotent by content hash). Call once at start-up. */
  async start(): Promise<void> {
    const dir = this.deps.settings.bundledSkillsDir;
    if (!dir) return;
    const bundled = await loadBundledSkills(dir);
    // Every session's prompt shows these descriptions, checked by scanStored (remembered by text).
    // Checked here, the first sessions after a start do not compile the scanner's expressions
    // (about 165 ms, and again whenever V8 has dropped their code after a few idle collections).
    for (const skill of bundled) scanStored(skill.description);
    const counts = await this.skills.importBundled(bundled);
    this.deps.log.info(counts, "bundled skills imported");
  }

  /**
   * One message's turn; the caller posts the answer. `leased` (the delivery path): the message and
   * its reply are held under this process's lease until the answer is posted, so another process
   * finishes the turn if this one dies. Callers that post nothing themselves (tests) leave it off.
   * `context`: earlier messages still being read (a thread cairn enters): the message is stored
   * first, the context beside it once read, before the turn reads its history.
   */
  handle(received: Inbound, hooks: TurnHooks = {}, opts: HandleOptions = {}): Promise<HandleResult> {
    // Not through the delivery path, which otherwise decides this (delivery.ts): the same rule.
    const not = notATurn(received);
    if (not) return countTurn(this.metrics, Promise.resolve({ kind: "dropped", reason: not }));
    return this.handleStorable(storableStrings(received), hooks, opts);
  }

  /** `handle` for a message whose strings are storable already (text.ts). */
  private handleStorable(received: Inbound, hooks: TurnHooks, opts: HandleOptions): Promise<HandleResult> {
    return countTurn(this.metrics, this.handleMessage(received, hooks, opts));
  }

  private async handleMessage(received: Inbound, hooks: TurnHooks, opts: HandleOptions): Promise<HandleResult> {
    const lease = () => (opts.leased ? this.leases.next() : null);
    // Bots and messages with nothing visible never get here (`notATurn`, decided once before).
    const limit = this.deps.settings.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
    const fitted = withinLimit(received.text, limit);
    const inbound: Inbound = { ...received, text: fitted.text };
    const access = checkAccess(this.deps.settings.access, inbound);
    if (!access.ok) {
      // Refused people's messages are not stored: cairn keeps nothing of someone it may not serve.
      this.deps.log.info({ platform: inbound.platform, user: inbound.author.externalId, channel: inbound.channel.externalId, reason: access.reason }, "access refused");
      return { kind: "reply", reply: { status: "refused", text: access.text, conversationId: null, replyMessageId: null } };
    }
    // Messages are stored one at a time per conversation (keyed before any database work, so a slow
    // look-up cannot let a later message overtake an earlier one), and each turn is queued the
    // moment its message is stored: turn order equals id order, and history is read by id range.
    // The session is picked as the message arrives, so the message is stored once, already filed.
    const key = conversationKey(inbound);
    const accepted = await this.intake.run(key, async () => {
      // A message for a conversation whose turn is under way cannot be answered before that turn
      // ends, a model call away: storing it waits for the event loop's next turn, so work that can
      // start a reply sooner (other conversations' turns) goes first. In a burst, the follow-ups
      // are then stored while the model calls are out instead of delaying them.
      if (this.queue.busy(key)) await new Promise((resolve) => setImmediate(resolve));
      const place = await this.history.resolve(inbound);
      const { session, isNew } = await this.sessions.current(scopeOf(place), this.now());
      const stored = await this.history.recordInbound(place, inbound, session.id, lease());
      if (!stored) return null;
      hooks.onAccepted?.();
      const rate = await this.limiter.take(personScopeOf(place), stored.id, this.now());
      if (!rate.ok) return { turn: this.limited(place, session.id, stored.id, rate.retryAfterMs, lease()) };
      // A new session's first message (without a context block) is all of its history so far.
      const history = isNew && !inbound.context?.trim() && !opts.context ? [{ ...stored, author: place.person }] : null;
      return {
        turn: this.queue.run(key, async () => {
          // Stopping: the message is stored under a lease already handed back; another replica answers it.
          if (opts.leased && this.leases.released) return null;
          // Other replicas' turns for earlier messages of this conversation come first.
          if (opts.leased) await this.recovery.before(scopeOf(place), stored);
          const context = storable((await opts.context) ?? "");
          if (context.trim()) await this.history.recordContext(place, session.id, stored.id, context, stored.createdAt);
          return this.turn(place, session.id, stored.id, hooks, history, lease());
        }),
      };
    });
    hooks.onStored?.();
    if (!accepted) return { kind: "dropped", reason: "duplicate" };
    const reply = await accepted.turn;
    // Another process took the turn over (this one stalled past its lease, or is stopping): it answers.
    if (!reply) return { kind: "dropped", reason: "taken_over" };
    // The person is told what was left out of an over-long message, with the answer to the rest.
    return { kind: "reply", reply: fitted.cut ? { ...reply, text: `${cutNote(fitted.cut, limit)}\n\n${reply.text}` } : reply };
  }

  /** Over the rate limit: the message stays stored (and in history); the reply says when to return. */
  private async limited(place: Place, sessionId: string, messageId: number, retryAfterMs: number, lease: Lease | null): Promise<Outbound | null> {
    const text = limitText(this.deps.settings.rateLimitPerHour, retryAfterMs);
    const reply = await this.recordReply(place, sessionId, messageId, text, "failed", lease);
    this.deps.log.info({ person: place.person.id }, "rate limited");
    return reply && { status: "limited", text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }

  /** Adapters call this once a reply is posted: one platform id per part of a split reply. */
  async recordDelivery(reply: Outbound, channelId: string, platformIds: readonly string[]): Promise<void> {
    if (reply.replyMessageId === null || reply.conversationId === null) return;
    await this.history.recordDeliveries(reply.conversationId, reply.replyMessageId, channelId, platformIds);
  }

  /**
   * A reaction on a message cairn posted. Only reactions on cairn's own replies count; they are
   * queued durably (job kind "feedback") for the learning loop, once per distinct event.
   */
  async feedback(event: FeedbackEvent): Promise<FeedbackResult> {
    if (event.reactor.isBot) return { kind: "ignored", reason: "bot" };
    const workspace = await this.history.findWorkspace(event.platform, event.workspace.externalId);
    const inWorkspace = workspace && scopeOfWorkspace(workspace);
    const delivery = inWorkspace && (await this.history.findDelivery(inWorkspace, event.channel.externalId, event.targetMessageId));
    if (!workspace || !inWorkspace || !delivery) return { kind: "ignored", reason: "not_a_reply" };
    // Someone cairn may not serve teaches it nothing.
    if (!checkAccess(this.deps.settings.access, { platform: event.platform, author: event.reactor, channel: event.channel }).ok) return { kind: "ignored", reason: "refused" };
    const reactor = await this.history.person(inWorkspace, event.reactor);
    const payload = {
      replyMessageId: delivery.messageId,
      conversationId: delivery.conversationId,
      workspaceId: workspace.id,
      reactorId: reactor.id,
      emoji: event.emoji,
      action: event.action,
      at: event.at.toISOString(),
    };
    const uniqueKey = `feedback:${delivery.id}:${reactor.id}:${event.emoji}:${event.action}:${payload.at}`;
    const { job, created } = await this.jobs.enqueue("feedback", payload, { uniqueKey });
    if (!created) return { kind: "ignored", reason: "duplicate" };
    this.learning.worker.kick();
    this.deps.log.info({ reply: delivery.messageId, emoji: event.emoji, action: event.action }, "feedback recorded");
    if (event.action === "added" && CONFIRM_EMOJI.has(event.emoji)) await this.confirmByReaction(scopeOfPerson(reactor), delivery);
    return { kind: "recorded", replyMessageId: delivery.messageId, jobId: job.id };
  }

  /**
   * ✅ on a reply confirms the team entries that the reactor proposed in the message it answers; on
   * a post of cairn's (a review's notice), the entries waiting for them that it announced.
   * The delivery, found in the reactor's workspace, names the reply's conversation.
   */
  private async confirmByReaction(reactor: PersonScope, delivery: { conversationId: string; workspaceId: string; messageId: number }): Promise<void> {
    const reply = await this.history.findMessage(scopeOfDelivery(delivery), delivery.messageId);
    if (!reply) return;
    const pending = reply.replyToId ? await this.memory.pendingBy(reactor, reply.replyToId) : await this.memory.pendingAnnounced(reactor, reply.id);
    if (pending.length === 0) return;
    try {
      await this.memory.confirm(reactor, pending.map((e) => e.id), { source: "reaction", actorId: reactor.personId, sourceMessageId: reply.replyToId ?? reply.id, reason: "confirmed with a reaction" });
    } catch (err) {
      this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, "confirmation by reaction refused");
    }
  }

  async endSession(inbound: Inbound, reason: "request" | "restart"): Promise<void> {
    const place = await this.history.resolve(inbound);
    await this.sessions.end(scopeOf(place), reason);
  }

  /** `/cairn <name> <args>` on every platform; access rules apply as for messages. */
  async command(inbound: Inbound, name: CommandName, args: readonly string[] = []): Promise<CommandReply> {
    const access = checkAccess(this.deps.settings.access, inbound);
    if (!access.ok && name !== "help") return { text: access.text, ephemeral: true };
    return runCommand(this, inbound, name, args);
  }

  /**
   * A command asked on `via`'s platform, its answer shown through the delivery path (command-answer.ts):
   * rendered and chunked by that adapter, public answers recorded as deliveries. A command that
   * throws is answered with the one apology, privately.
   */
  async answer(inbound: Inbound, call: CommandCall, target: CommandTarget, via?: PlatformAdapter): Promise<Answered> {
    const adapter = via ?? this.delivery.adapterOf(inbound.platform);
    if (!adapter) throw new Error(`no ${inbound.platform} adapter is attached`);
    const reply = await runCommandSafely(() => this.command(inbound, call.name, call.args), this.deps.log.child({ platform: inbound.platform, command: call.name }));
    return this.delivery.answer(adapter, inbound, reply.text, reply.ephemeral, target);
  }

  /**
   * What `inbound`'s author may see of cairn's memory, as a view with buttons (views/model.ts); the
   * same access rules as commands: someone refused gets an empty view.
   */
  async view(inbound: Inbound, request: ViewRequest): Promise<TeamView> {
    if (!checkAccess(this.deps.settings.access, inbound).ok) return { pane: request.pane, admin: false, sections: [] };
    return buildView(this, inbound, request);
  }

  /** A channel event (message, edit, deletion, member): kept if cairn listens in that channel. */
  observe(event: ChannelEvent): Promise<void> {
    return this.knowledge.observe(event);
  }

  claim(key: string, windowMs?: number): Promise<boolean> {
    return this.claims.claim(key, windowMs);
  }

  get settings(): AgentSettings {
    return this.deps.settings;
  }

  get log(): Logger {
    return this.deps.log;
  }

  /** `known`: the session's messages through this one, when the intake already holds them. */
  private async turn(place: Place, sessionId: string, messageId: number, hooks: TurnHooks, known: HistoryMessage[] | null, lease: Lease | null): Promise<Outbound | null> {
    const log = this.deps.log.child({ conversation: place.conversation.key, message: messageId });
    const s = this.deps.settings;
    const scope = scopeOf(place);
    // Read now, not at intake: turns queued ahead of this one may have frozen its snapshot since.
    const session = await this.sessions.get(scope, sessionId);

    let text: string;
    let status: Outbound["status"] = "ok";
    let toolCalls: LoopResult["toolCalls"] = [];
    let shownLessons: string[] = [];
    try {
      const snapshot = await this.ensureSnapshot(session.id, readSnapshot(session), scope, place);
      let summary = session.summary;
      let messages = known ?? (await this.history.sessionMessages(scope, session.id, session.summaryThroughId, messageId));
      const compressed = await this.compressIfNeeded(session.id, summary, messages, scope, place);
      if (compressed) ({ summary, messages } = compressed);
      // Lessons go with the message they fit, not into the frozen snapshot: they differ message to message.
      const asked = messages.find((m) => m.id === messageId)?.text ?? "";
      const lessons = relevantLessons(await this.memory.lessons(scope), asked);
      // The person's message after cairn asked them what it should have done: the correction.
      const correction = await this.learning.claimCorrection(scope, messageId);
      shownLessons = lessons.map((l) => l.id);
      const request = buildRequest({
        model: s.model,
        maxTokens: s.maxTokens,
        snapshot: compressed?.snapshot ?? snapshot,
        speakerId: place.person.id,
        summary,
        history: withCorrection(withLessons(historyToMessages(messages, !place.conversation.isDm), lessons), correction),
        tools: this.tools.definitions(),
      });
      const result = await runToolLoop({
        model: this.models.turn,
        request,
        tools: this.tools,
        ctx: { scope, sourceMessageId: messageId, sessionId: session.id, speakerName: this.speakerName(place) },
        maxIterations: s.toolIterations,
        ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {}),
        ...(hooks.onText ? { onText: hooks.onText } : {}),
        ...(hooks.onTextReset ? { onTextReset: hooks.onTextReset } : {}),
      });
      log.info({ iterations: result.iterations, tools: result.toolCalls.map((c) => c.name), stop: result.stopReason, correction: correction?.id }, "turn answered");
      text = storable(result.text) || "(I have nothing to add.)";
      toolCalls = result.toolCalls;
    } catch (err) {
      status = "failed";
      if (err instanceof ModelUnavailableError) {
        log.warn({ err: err.message, attempts: err.attempts, status: err.lastStatus, reason: err.reason }, "model unavailable");
        text = err.reason === "interrupted" ? MODEL_INTERRUPTED_REPLY : MODEL_UNAVAILABLE_REPLY;
      } else {
        log.error({ err }, "turn failed");
        this.metrics.error("turn");
        text = INTERNAL_ERROR_REPLY;
      }
    }
    // The lease is taken now, not when the turn began: renewals have kept it alive meanwhile.
    const reply = await this.recordReply(place, session.id, messageId, text, status === "ok" ? "sent" : "failed", lease && this.leases.next());
    if (!reply) {
      log.warn("the turn was taken over by another process; its answer is not stored");
      return null;
    }
    if (status === "ok") {
      await this.learning.recordTurn(scope, reply.id, { toolCalls }, shownLessons).catch((err: unknown) => log.warn({ err: errText(err) }, "could not record what the turn drew on"));
    }
    return { status, text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }

  /** Stores a reply; under a lease, only while the turn is still this process's (null otherwise). */
  private recordReply(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease | null): Promise<Message | null> {
    return lease ? this.history.recordReply(place, sessionId, replyToId, text, status, lease) : this.history.recordReply(place, sessionId, replyToId, text, status);
  }

  /** The session a recovered message was filed in, or the conversation's current one. */
  private async sessionFor(place: Place, sessionId: string | null): Promise<string> {
    return sessionId ?? (await this.sessions.current(scopeOf(place), this.now())).session.id;
  }

  private speakerName(place: Place): string {
    return place.person.displayName ?? place.person.externalId;
  }

  private placeLabel(place: Place): string {
    const c = place.conversation;
    const platform = place.workspace.platform;
    if (c.isDm) return `direct messages with ${this.speakerName(place)} (${platform})`;
    return `channel ${c.channelId}${c.threadId ? `, thread ${c.threadId}` : ""} (${platform}; several people may take part)`;
  }

  /**
   * The shared part is shown to everyone who speaks in the session, so its skills index holds only
   * what everyone here may see (bundled, team and this channel's skills); a speaker's private
   * skills go in their own profile part.
   */
  private async renderSnapshotShared(scope: Scope, place: Place, facts: readonly MemoryEntry[]): Promise<string> {
    const skills = (await this.skills.index(scope)).filter((s) => !isPrivateSkill(s));
    const rules = facts.filter((e) => e.scope === "team" && e.kind === "rule");
    const persona = await this.persona.get(scope);
    return renderShared({
      now: this.now(),
      place: this.placeLabel(place),
      blocks: this.memory.blocksOf(scope, facts),
      rules,
      skills,
      persona: persona && { text: persona.text, limit: this.persona.limit },
    });
  }

  private async renderSpeakerProfile(scope: Scope, place: Place, facts: readonly MemoryEntry[]): Promise<string> {
    const entries = facts.filter((e) => e.scope === "user");
    const used = usedChars(entries.map((e) => e.text));
    const skills = (await this.skills.index(scope)).filter(isPrivateSkill);
    return renderProfile(this.speakerName(place), { target: "user", entries, used, limit: this.memory.limit("user") }, skills);
  }

  /** The session's frozen snapshot, taking it now if this is the session's (or this speaker's) first turn. */
  private async ensureSnapshot(sessionId: string, current: Snapshot | null, scope: Scope, place: Place): Promise<Snapshot> {
    let snapshot = current;
    let changed = false;
    let read: Promise<MemoryEntry[]> | null = null;
    // One read of the place's facts serves both parts.
    const facts = () => (read ??= this.memory.facts(scope));
    if (!snapshot) {
      snapshot = { shared: await this.renderSnapshotShared(scope, place, await facts()), profiles: {} };
      changed = true;
    }
    if (snapshot.profiles[place.person.id] === undefined) {
      snapshot = { ...snapshot, profiles: { ...snapshot.profiles, [place.person.id]: await this.renderSpeakerProfile(scope, place, await facts()) } };
      changed = true;
    }
    if (changed) await this.sessions.saveSnapshot(sessionId, snapshot);
    return snapshot;
  }

  private async compressIfNeeded(
    sessionId: string,
    summary: string | null,
    messages: HistoryMessage[],
    scope: Scope,
    place: Place,
  ): Promise<{ summary: string; messages: HistoryMessage[]; snapshot: Snapshot } | null> {
    const s = this.deps.settings;
    const size = (summary?.length ?? 0) + messages.reduce((n, m) => n + m.text.length, 0);
    if (size <= s.historyCharLimit || messages.length <= s.historyKeepMessages) return null;
    // Cut at a turn boundary, so a person's message and cairn's reply to it stay on the same side.
    let cut = messages.length - s.historyKeepMessages;
    while (cut > 0 && messages[cut]?.role === "assistant") cut--;
    if (cut === 0) return null;
    const older = messages.slice(0, cut);
    const kept = messages.slice(cut);
    let next: string;
    try {
      next = await summarize(this.models.summary, s.summaryModel, summary, older);
    } catch (err) {
      this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, "compression summary failed; dropping older turns");
      next = droppedNote(summary, older.length);
    }
    // Compression is also when new memory reaches a running session: the snapshot is retaken.
    const facts = await this.memory.facts(scope);
    const snapshot: Snapshot = {
      shared: await this.renderSnapshotShared(scope, place, facts),
      profiles: { [place.person.id]: await this.renderSpeakerProfile(scope, place, facts) },
    };
    await this.sessions.saveSummary(sessionId, next, turnOf(older.at(-1)!), snapshot);
    return { summary: next, messages: kept, snapshot };
  }
}
