/**
 * The top of the house: builds the stores and services from one database and one model, wires
 * them to each other, starts and stops them, and is the port adapters talk to (CorePort). It holds
 * no policy of its own: the turn is src/turn/ (intake.ts, turn.ts), the delivery path src/delivery/, reactions
 * learning/reactions.ts, commands commands/. Nothing below imports this module.
 */
import { errText, type Logger } from "../ground/log.ts";
import type { FeedbackEvent, FeedbackResult, HandleResult, Inbound, Outbound, Platform, Scope, TurnHooks } from "../ground/types.ts";
import { JobQueue } from "../jobs/job-store.ts";
import { ErasureStore } from "../erasure/erasure-store.ts";
import { ShortIdStore } from "../ids/short-id-store.ts";
import { TombstoneStore } from "../erasure/tombstone-store.ts";
import { HistoryStore, scopeOf } from "../history/store/store.ts";
import { MemoryStore } from "../memory/store.ts";
import { TeacherStore } from "../admission/teacher-store.ts";
import { DEFAULT_TEAM_WRITES, TeamTrust } from "../admission/trust.ts";
import { SkillStore } from "../skills/store.ts";
import { Slots } from "../ground/slots.ts";
import { KeyedQueue } from "../ground/keyed-queue.ts";
import { DEFAULT_LEASES, TurnLeases } from "../turn/leases.ts";
import { LeaseStore } from "../turn/lease-store.ts";
import { DEFAULT_RECOVERY, Recovery } from "../turn/recovery.ts";
import { RateLimiter } from "../admission/rate-limit.ts";
import { RateStore } from "../admission/rate-store.ts";
import { ClaimStore } from "../delivery/claim-store.ts";
import { ToolRegistry } from "../tools/registry.ts";
import { turnTools, writeScreen, type SkillReach, type WriteScreen } from "./turn-tools.ts";
import { loopStores } from "./loop-stores.ts";
import { DEFAULT_MAX_MESSAGE_CHARS, storableStrings } from "../ground/text.ts";
import { DeliveryPath } from "../delivery/delivery.ts";
import type { Answered, CommandTarget, CorePort, PlatformAdapter, Posted, PostTarget, Received, ReplyTarget, RichPost, ReceiveOptions } from "../ground/adapter.ts";
import { SessionManager } from "../agent/sessions.ts";
import { SessionStore } from "../agent/session-store.ts";
import type { CommandCall, CommandName, CommandReply } from "../ground/commands.ts";
import { Learning } from "../learning/learning.ts";
import { DEFAULT_LEARNING } from "../learning/settings.ts";
import { Scheduler } from "../jobs/scheduler.ts";
import { DEFAULT_SCHEDULES } from "../jobs/schedules.ts";
import { Metrics } from "../ops/metrics.ts";
import { UsageLedger } from "../ops/usage-ledger.ts";
import { UsageStore } from "../ops/usage-store.ts";
import { DEFAULT_PERSONA_CHARS, PersonaStore } from "../persona/store.ts";
import { ViewStore } from "../views/view-store.ts";
import { RevisionStore } from "../revisions/revision-store.ts";
import { CurationStore } from "../curator/curation-store.ts";
import { ReportStore } from "../report/report-store.ts";
import { ChannelKnowledge, DEFAULT_KNOWLEDGE } from "../knowledge/knowledge.ts";
import { backfillJob } from "../knowledge/backfill.ts";
import { reportJob } from "../report/job.ts";
import { curatorJob } from "../curator/job.ts";
import { verifyJob } from "../freshness/job.ts";
import { KnowledgeStore } from "../knowledge/store.ts";
import { ListenStore } from "../knowledge/listen-store.ts";
import type { ChannelEvent } from "../ground/channel-events.ts";
import type { TeamView, ViewRequest } from "../ground/view-model.ts";
import { instrumentModel } from "../agent/model-metrics.ts";
import { countDelivery } from "../ops/core-metrics.ts";
import { portFor } from "./core-port.ts";
import { DEFAULT_PROVIDER_DEADLINE_MS, Providers } from "../providers/providers.ts";
import { embeddingsFor, type Embeddings } from "../providers/embeddings/wiring.ts";
import type { CoreDeps, AgentSettings } from "./agent-settings.ts";
import { Intake, type HandleOptions } from "../turn/intake.ts";
import { TurnRunner } from "../turn/turn.ts";
import { TurnStartStore } from "../turn/turn-start-store.ts";
import { TurnEndStore } from "../turn/turn-end-store.ts";
import { KeyAlarm } from "../turn/key-alarm.ts";
import { Snapshots } from "../turn/snapshot.ts";
import { Compression } from "../turn/compression.ts";
import { Reactions } from "../learning/reactions.ts";
import { CommandService } from "../commands/service.ts";
import { slackEmoji } from "../platforms/slack/emoji.ts";
import type { InboundLog } from "../journal/inbound-log.ts";
import { inboundLogFor } from "../journal/wiring.ts";
import { importBundledSkills } from "../skills/bundled.ts";

/**
 * Turns prepared at once (turn.ts, TurnDeps.preparing): enough to keep the CPU busy while some of
 * them wait on the database, few enough that a burst's first turns reach the model first (the
 * throughput bench; bench/README, 2026-12-06).
 */
const PREPARING_TURNS = 16;

export class Core implements CorePort {
  readonly history: HistoryStore;
  readonly memory: MemoryStore;
  /** Trusted teachers (`/cairn teachers`), and who may share with the whole workspace alone (admission/trust.ts). */
  readonly teachers: TeacherStore;
  readonly trust: TeamTrust;
  readonly skills: SkillStore;
  /** Where a skill written in a conversation (a turn, `/cairn learn`) goes, as memory: tools/skill-reach.ts. */
  readonly skillReach: SkillReach;
  readonly persona: PersonaStore;
  readonly revisions: RevisionStore;
  /** Ids found by the first characters a person typed (commands/short-id.ts). */
  readonly shortIds: ShortIdStore;
  readonly curation: CurationStore;
  readonly reports: ReportStore;
  readonly views: ViewStore;
  readonly knowledge: ChannelKnowledge;
  readonly sessions: SessionManager;
  readonly tools: ToolRegistry;
  /** The model-judged screen shared writes pass (safety/screen.ts): tools, reviews, the persona. */
  readonly screen: WriteScreen;
  readonly jobs: JobQueue;
  /** Real deletion: one entry, or everything of a person, and the two-step request of it. */
  readonly erasure: ErasureStore;
  /** Memory providers (providers/providers.ts): prefetched in turns, synced after delivery, told of erasures. */
  readonly providers: Providers;
  /** The embeddings provider (providers/embeddings/), when CAIRN_EMBEDDINGS_URL is set. */
  readonly embeddings: Embeddings | null;
  /** The one path from a platform's message to the answer on that platform, and the core's own posts. */
  readonly delivery: DeliveryPath;
  /** Reviews, corrections, lessons and rules, run by the job worker after replies. */
  readonly learning: Learning;
  /** The curator's and the report's slots, queued as jobs for the worker. */
  readonly scheduler: Scheduler;
  /** What this core counts (GET /metrics). */
  readonly metrics: Metrics;
  /** Which process answers which stored message; renewed while turns run (leases.ts). */
  readonly leases: TurnLeases;
  /** The turns a dead or stopped process left, finished here (recovery.ts). */
  readonly recovery: Recovery;
  /** A message to its turn: admission, storage, order (intake.ts). */
  private readonly intake: Intake;
  /** Commands, their answers and views (commands/service.ts). */
  private readonly commands: CommandService;
  /** Reactions on cairn's messages, to the learning loop (learning/reactions.ts). */
  private readonly reactions: Reactions;
  /** Which replica acts on a platform event every replica receives (claim-store.ts). */
  private readonly claims: ClaimStore;
  /** What adapters keep before acknowledging their platform, handed back to them (journal/). */
  readonly journal: InboundLog;
  private readonly now: () => Date;
  private readonly usage: UsageLedger;

  constructor(private readonly deps: CoreDeps) {
    const db = deps.database.prisma;
    const s = deps.settings;
    const now = (this.now = deps.now ?? (() => new Date()));
    const log = deps.log;
    const metrics = (this.metrics = deps.metrics ?? new Metrics({ processMetrics: false }));
    // Every model call's tokens, kept per workspace and day for the weekly report.
    this.usage = UsageLedger.of(new UsageStore(db), metrics, (err) => log.warn({ err }, "could not record model usage; kept for the next try"));
    const learningSettings = { ...DEFAULT_LEARNING, ...s.learning };

    // Stores: the only code that touches the database.
    this.sessions = new SessionManager(new SessionStore(deps.database), s.sessionIdleMs);
    // A conversation just created has no session: its first message skips looking for one.
    this.history = new HistoryStore(deps.database, (id, byMessage) => this.sessions.noneOpen(id, byMessage));
    this.teachers = new TeacherStore(db);
    this.trust = new TeamTrust({ ...DEFAULT_TEAM_WRITES, ...s.teamWrites }, s.access, this.teachers, this.history);
    // A team write reaches the whole workspace alone only when its writer may share alone (memory/reach.ts).
    this.memory = new MemoryStore(db, s.budgets, (scope) => this.trust.reach(scope), now, deps.database);
    this.persona = new PersonaStore(deps.database, s.personaChars ?? DEFAULT_PERSONA_CHARS);
    this.skills = new SkillStore(db, deps.database);
    this.revisions = new RevisionStore(db, [this.skills, this.memory], now);
    this.shortIds = new ShortIdStore(db);
    this.curation = new CurationStore(db, [this.skills, this.memory]);
    this.reports = new ReportStore(db);
    this.views = new ViewStore(db);
    this.jobs = new JobQueue(db, now);
    this.claims = new ClaimStore(deps.database, now, log);
    this.erasure = new ErasureStore(db, { memory: this.memory, skills: this.skills, sessions: this.sessions, history: this.history });
    const listens = new ListenStore(deps.database);
    this.providers = new Providers({ providers: deps.providers ?? [], deadlineMs: s.providerDeadlineMs ?? DEFAULT_PROVIDER_DEADLINE_MS, metrics, log });
    const embeddings = (this.embeddings = embeddingsFor(s.embeddings, { database: deps.database, metrics, log, deadlineMs: s.providerDeadlineMs ?? DEFAULT_PROVIDER_DEADLINE_MS }));
    const leaseStore = new LeaseStore(deps.database);

    // The turn: tools, snapshots, compression, the model loop, then intake in front of it.
    const models = { turn: instrumentModel(deps.model, metrics, "turn"), summary: instrumentModel(deps.model, metrics, "summary") };
    const screen = (this.screen = writeScreen(s, deps.model, metrics));
    const loop = loopStores(db, deps.database, { memory: this.memory, skills: this.skills, budgets: s.budgets, now, correctionWindowMs: learningSettings.correctionWindowMs });
    this.skillReach = { reachOf: (scope) => this.trust.reach(scope), proposals: loop.skillProposals, screen };
    const tools = turnTools({ memory: this.memory, memoryHistory: loop.memoryHistory, skills: this.skills, skillReach: this.skillReach, history: this.history, screen, readable: (scope) => this.knowledge.readers.readable(scope), recordCorrection: (scope, id) => this.learning.recordTypedCorrection(scope, id), timeZone: s.schedules?.timezone ?? DEFAULT_SCHEDULES.timezone, now, queryVector: embeddings?.queryVector });
    this.tools = new ToolRegistry(tools, (err, tool) => log.error({ err, tool }, "tool failed unexpectedly"), (tool, result) => metrics.toolCall(tool, result));
    // The definitions (zod to JSON Schema, about 10 ms) are built now, not inside the first person's turn.
    this.tools.definitions();
    const turns = new KeyedQueue(s.maxConcurrency);
    this.delivery = new DeliveryPath({
      // Made storable at the port already (receive): not walked again.
      handle: (inbound, hooks, context) => this.intake.handleStorable(inbound, hooks, { leased: true, ...(context ? { context } : {}) }),
      recordDelivery: (reply, channelId, ids) => this.recordDelivery(reply, channelId, ids),
      delivered: (reply) => this.delivered(reply),
      undelivered: (reply) => this.undelivered(reply),
      claim: (key) => this.claims.claim(key),
      history: this.history,
      log,
    });
    this.leases = new TurnLeases(leaseStore, { ...DEFAULT_LEASES, ...s.leases }, () => turns.activeKeys > 0 || this.delivery.inFlight > 0, log, now);
    const snapshots = new Snapshots({ memory: this.memory, skills: this.skills, persona: this.persona, sessions: this.sessions, history: this.history, doubtfulRules: (scope: Scope) => this.learning.doubtfulRules(scope), now, verifyDays: learningSettings.freshness.verifyDays });
    const keyAlarm = new KeyAlarm({ access: s.access, post: (platform, target, markdown) => this.post(platform, target, markdown), log, now });
    const runner = new TurnRunner({
      settings: s,
      model: models.turn,
      tools: this.tools,
      history: this.history,
      starts: new TurnStartStore(deps.database, this.history, loop.corrections),
      ends: new TurnEndStore(deps.database, this.history),
      memory: this.memory,
      sessions: this.sessions,
      snapshots,
      compression: new Compression({ settings: s, model: models.summary, sessions: this.sessions, snapshots, log }),
      learning: { claimCorrection: (scope, id) => this.learning.claimCorrection(scope, id), recordTurn: (...args) => this.learning.recordTurn(...args) },
      leases: this.leases,
      metrics,
      log,
      now,
      onKeyRefused: (place) => keyAlarm.raise(place),
      providers: this.providers,
      embeddings,
      preparing: new Slots(PREPARING_TURNS),
    });
    this.recovery = new Recovery({
      store: leaseStore,
      leases: this.leases,
      settings: { ...DEFAULT_RECOVERY, ...s.recovery },
      platforms: () => this.delivery.platforms(),
      inQueue: (key, work) => turns.run(key, work),
      answer: async (place, sessionId, messageId) => {
        const reply = await runner.run(place, await runner.sessionFor(place, sessionId), messageId, {}, null, this.leases.next());
        // A recovered turn is a turn like any other in the metrics.
        metrics.turn(reply ? reply.status : "dropped_taken_over");
        return reply;
      },
      giveUp: async (place, sessionId, messageId, text, command) => {
        const reply = await this.history.recordReply(place, await runner.sessionFor(place, sessionId), messageId, text, command ? "sent" : "failed", this.leases.next());
        return reply && { status: command ? "command" : "failed", text, conversationId: place.conversation.id, replyMessageId: reply.id };
      },
      post: (reply, workspace, conversation, answers) => this.delivery.resume(reply, workspace, conversation, answers),
      clearWorking: (platform, channelId, messageId) => this.delivery.clearWorking(platform, channelId, messageId),
      log,
      now,
    });
    const limiter = new RateLimiter(new RateStore(deps.database), s.rateLimitPerHour);
    this.intake = new Intake({ settings: s, history: this.history, sessions: this.sessions, limiter, leases: this.leases, recovery: this.recovery, queue: turns, runner, metrics, log, now, command: (inbound, name, args) => this.command(inbound, name, args) });

    // Background: channel knowledge, the learning loop's jobs, the schedules.
    this.knowledge = new ChannelKnowledge({
      store: new KnowledgeStore(deps.database, this.history, listens, s.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS),
      listens,
      tombstones: new TombstoneStore(deps.database),
      history: this.history,
      jobs: this.jobs,
      adapterFor: (platform) => this.delivery.adapterOf(platform),
      post: (platform, target, markdown) => this.post(platform, target, markdown),
      kick: () => this.learning.worker.kick(),
      settings: { ...DEFAULT_KNOWLEDGE, ...s.knowledge },
      log,
      now,
    });
    this.learning = new Learning({
      jobs: this.jobs,
      model: deps.model,
      memory: this.memory,
      skills: this.skills,
      history: this.history,
      ...loop,
      turnTools: tools,
      screen,
      post: (platform, target, markdown, rich) => this.post(platform, target, markdown, rich),
      settings: { model: s.model, summaryModel: s.summaryModel, maxTokens: s.maxTokens, budgets: s.budgets, access: s.access, learning: learningSettings },
      log,
      now,
      metrics,
      // Slack names emoji: its reading turns those names (settings, older queued jobs) into characters, and leaves a character bare.
      readEmoji: slackEmoji,
    }, (as) => [
      reportJob({ ...as("report"), reports: this.reports, usage: this.usage }),
      curatorJob({ ...as("curator"), curation: this.curation }),
      verifyJob({ ...as("verify"), reports: this.reports }),
      backfillJob(this.knowledge),
      ...(deps.handlers ?? []),
    ]);
    this.commands = new CommandService({ access: s.access, delivery: this.delivery, services: this, run: (inbound, name, args) => this.command(inbound, name, args), log });
    this.reactions = new Reactions({ history: this.history, memory: this.memory, jobs: this.jobs, access: s.access, kick: () => this.learning.worker.kick(), log });
    // In use: some workspace had talked to cairn before the slot.
    this.scheduler = new Scheduler({ queue: this.jobs, kick: () => this.learning.worker.kick(), settings: { ...DEFAULT_SCHEDULES, ...s.schedules }, log, now, inUseBefore: (at) => this.history.workspaceCreatedBefore(at) });
    const journal = (this.journal = inboundLogFor({ journal: deps.journal, ping: () => deps.database.ping(), metrics, log, maxInFlight: s.journalInFlight }));
    metrics.watch({ jobQueue: () => this.jobs.depth(), openConversations: () => turns.activeKeys, journal: () => ({ depth: journal.depth, oldestAt: journal.oldestAt }), embeddingBacklog: () => embeddings?.embedder.backlog() ?? null });
  }

  /**
   * Starts the job worker (reviews, feedback, lessons, scheduled jobs), then the schedules, which
   * queue the slots missed while no process ran: call once the adapters are started.
   */
  async startBackground(): Promise<void> {
    this.delivery.setOpen(true);
    this.leases.start();
    this.learning.start();
    this.usage.start();
    this.embeddings?.embedder.start();
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
    await this.usage.stop();
    await this.embeddings?.embedder.stop();
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
    this.providers.undelivered(reply.replyMessageId);
    await this.history.recordUndelivered(reply.replyMessageId);
  }

  /** A reply reached the platform: queue what it triggers (reviews, the lesson of a correction). Never throws. */
  private async delivered(reply: Outbound): Promise<void> {
    if (reply.status !== "ok" || reply.replyMessageId === null || reply.conversationId === null) return;
    this.providers.delivered(reply.replyMessageId);
    try {
      await this.learning.afterDelivered(reply.replyMessageId, reply.conversationId);
    } catch (err) {
      this.deps.log.error({ err, reply: reply.replyMessageId }, "could not queue the learning jobs of a reply");
    }
  }

  /** Makes a platform reachable for the core's own posts; the port it returns renders replies with that adapter. */
  attach(adapter: PlatformAdapter): CorePort {
    this.delivery.attach(adapter);
    return portFor(this, adapter);
  }

  /** A message through the adapter attached last for its platform. */
  receive(inbound: Inbound, target: ReplyTarget, opts?: ReceiveOptions): Promise<Received> {
    return countDelivery(this.metrics, this.delivery.receive(storableStrings(inbound), target, undefined, opts));
  }

  /** A message cairn starts itself, recorded as a delivery so reactions on it reach the core. */
  post(platform: Platform, target: PostTarget, markdown: string, rich?: RichPost): Promise<Posted> {
    return countDelivery(this.metrics, this.delivery.post(platform, target, markdown, rich));
  }

  /** Imports the bundled skills (idempotent by content hash). Call once at start-up. */
  async start(): Promise<void> {
    const dir = this.deps.settings.bundledSkillsDir;
    if (dir) await importBundledSkills(this.skills, dir, this.deps.log);
  }

  /** One message's turn, outside the delivery path (its caller posts the answer): see Intake.handle. */
  handle(received: Inbound, hooks: TurnHooks = {}, opts: HandleOptions = {}): Promise<HandleResult> {
    return this.intake.handle(received, hooks, opts);
  }

  /** Adapters call this once a reply is posted: one platform id per part of a split reply. */
  async recordDelivery(reply: Outbound, channelId: string, platformIds: readonly string[]): Promise<void> {
    if (reply.replyMessageId === null || reply.conversationId === null) return;
    await this.history.recordDeliveries(reply.conversationId, reply.replyMessageId, channelId, platformIds);
  }

  /** A reaction on a message cairn posted: see learning/reactions.ts. */
  feedback(event: FeedbackEvent): Promise<FeedbackResult> {
    return this.reactions.feedback(event);
  }

  async endSession(inbound: Inbound, reason: "request" | "restart"): Promise<void> {
    const scope = scopeOf(await this.history.resolve(inbound));
    await this.sessions.end(scope, reason);
    // The conversation ended: its review, if enough was said since the last (review-triggers.ts).
    await this.learning.conversationEnded(scope).catch((err: unknown) => this.deps.log.warn({ err: errText(err) }, "could not queue the review of an ended conversation"));
  }

  /** `/cairn <name> <args>`: see commands/service.ts. */
  command(inbound: Inbound, name: CommandName, args: readonly string[] = []): Promise<CommandReply> {
    return this.commands.command(inbound, name, args);
  }

  /** A command whose answer the delivery path shows on `via`'s platform: see commands/service.ts. */
  answer(inbound: Inbound, call: CommandCall, target: CommandTarget, via?: PlatformAdapter): Promise<Answered> {
    return this.commands.answer(inbound, call, target, via);
  }

  /** What `inbound`'s author may see of cairn's memory: see commands/service.ts. */
  view(inbound: Inbound, request: ViewRequest): Promise<TeamView> {
    return this.commands.view(inbound, request);
  }

  /** A channel event (message, edit, deletion, member): kept if cairn listens in that channel. */
  observe(event: ChannelEvent): Promise<void> {
    return this.knowledge.observe(event);
  }

  claim(key: string, windowMs?: number): Promise<boolean> {
    return this.claims.claim(key, windowMs);
  }

  get settings(): AgentSettings { return this.deps.settings; } // prettier-ignore
  get log(): Logger { return this.deps.log; } // prettier-ignore
}
