/**
 * The one delivery path: from a platform's message to cairn's answer on that platform, and the
 * posts the core starts itself. Every adapter gets the same turn policy from here.
 *
 * Invariants kept here:
 * - One post is answered once: a synchronous check-and-set catches a platform's double deliveries
 *   and retries in this process; the stored-message key catches what a restart forgets, and the
 *   copy another replica received; a refusal, never stored, is claimed in the database.
 * - A message in a thread is a turn without a mention only where cairn follows the thread.
 * - The messages of one conversation reach the turn queue, and their answers reach the platform,
 *   in arrival order, whatever each adapter's or the database's look-ups cost on the way.
 * - Someone chatting in a followed thread who may not use cairn is never answered with a refusal;
 *   someone who addressed cairn is told once, and nothing of theirs is stored.
 * - A failure anywhere ends in a polite reply where the platform still takes one; every posted
 *   part of a reply is recorded as a delivery, so a reaction on any part reaches the core.
 * - Whether a message can be a turn at all (a bot's, one with nothing visible) is decided once,
 *   here (`notATurn`), not by each adapter and again by the core.
 * - Command answers are rendered and chunked here as replies are; a public one is stored and
 *   recorded as deliveries like the core's own posts, a private one is recorded nowhere.
 */
import { errText, type Logger } from "../ground/log.ts";
import { RecentSet } from "../ground/cache/recent-set.ts";
import { conversationKey, type Conversation, type HistoryStore, type Workspace } from "../history/store/store.ts";
import type { Answered, CommandTarget, DraftOptions, PlatformAdapter, Posted, PostTarget, Received, ReceiveOptions, ReplySurface, ReplyTarget, RichPost } from "../ground/adapter.ts";
import { showCommandAnswer } from "./command-answer.ts";
import { chunkText } from "../ground/chunk.ts";
import { hasVisibleText } from "../ground/text.ts";
import { DraftReply } from "./draft.ts";
import { sendRichPost } from "./rich-post.ts";
import { ThreadFollowing, type ThreadRef } from "./follow.ts";
import { KeyedQueue } from "../ground/keyed-queue.ts";
import { INTERNAL_ERROR_REPLY, postFailedApology } from "../ground/replies.ts";
import { StorageOutage } from "./outage.ts";
import { NotStoredError } from "../ground/errors.ts";
import type { StoreOutcome } from "../ground/journal.ts";
import type { HandleResult, Inbound, Outbound, Platform, TurnHooks } from "../ground/types.ts";

export interface DeliveryDeps {
  /**
   * The turn (src/turn): admission, storage, the model. `context`: the thread's earlier messages,
   * still being read: stored beside the message once read.
   */
  handle(inbound: Inbound, hooks: TurnHooks, context?: Promise<string>): Promise<HandleResult>;
  /** Records where a reply's parts were posted. */
  recordDelivery(reply: Outbound, channelId: string, platformIds: readonly string[]): Promise<void>;
  /** Once a reply's parts are posted and recorded: what follows a reply (the learning loop's jobs). */
  delivered?(reply: Outbound): Promise<void>;
  /** No part of a stored reply reached the platform: its failure is recorded. */
  undelivered?(reply: Outbound): Promise<void>;
  /** Whether this process is the first, of all sharing the database, to take `key` (claim-store.ts). */
  claim?(key: string): Promise<boolean>;
  history: HistoryStore;
  log: Logger;
}

type Settled = { ok: HandleResult } | { err: unknown };

/** A turn under way: what its delivery needs once the core has answered. */
interface Started {
  settled: Promise<Settled>;
  surface: ReplySurface;
  target: ReplyTarget;
  /** The working mark's remover once the message was marked (not before the core accepts it); null when it never was. */
  working: Promise<(() => Promise<void>) | null>;
  thread: ThreadRef | null;
  /** The thread was followed before this message. */
  wasFollowed: boolean;
  addressed: boolean;
}

export class DeliveryPath {
  private readonly adapters = new Map<Platform, PlatformAdapter>();
  /** Posts taken on by this process. Platforms retry for minutes; ten cover it with room to spare. */
  private readonly seen = new RecentSet(10 * 60_000, 20_000);
  private readonly following: ThreadFollowing;
  /** Up to the hand-off to the turn queue, in arrival order per conversation. */
  private readonly intake = new KeyedQueue(Number.MAX_SAFE_INTEGER);
  /** Answers posted in arrival order per conversation (a quick refusal never overtakes an answer). */
  private readonly posting = new KeyedQueue(Number.MAX_SAFE_INTEGER);
  /** Messages taken on and not yet answered on the platform. */
  private active = 0;
  /** Stopping: answers not yet posted are left to their leases (another process posts them). */
  private closed = false;
  /** Messages that could not be stored: notices, and working marks kept meanwhile (outage.ts). */
  private readonly outage = new StorageOutage();

  constructor(private readonly deps: DeliveryDeps) {
    this.following = new ThreadFollowing({
      conversationExists: (key) => deps.history.conversationExists(key),
      postedAs: (platform, workspace, id) => deps.history.postedAs(platform, workspace, id),
    });
  }

  attach(adapter: PlatformAdapter): void {
    this.adapters.set(adapter.platform, adapter);
  }

  /** The adapter attached for a platform, if any. */
  adapterOf(platform: Platform): PlatformAdapter | null {
    return this.adapters.get(platform) ?? null;
  }

  private adapter(platform: Platform): PlatformAdapter {
    const adapter = this.adapters.get(platform);
    if (!adapter) throw new Error(`no ${platform} adapter is attached`);
    return adapter;
  }

  /**
   * `via`: the adapter the message came through (default: the one attached last for its platform).
   * `opts`: see `ReceiveOptions` (its `kept` is told exactly once what became of the message).
   */
  receive(inbound: Inbound, target: ReplyTarget, via?: PlatformAdapter, opts: ReceiveOptions = {}): Promise<Received> {
    const { kept, held = false } = opts;
    let told = false;
    const stored = (outcome: StoreOutcome = "not_stored") => {
      if (told) return;
      told = true;
      // A message stored: storage answers, so the next outage gets its notice again.
      if (outcome === "stored") this.outage.over();
      kept?.(outcome);
    };
    const now = (r: Received): Promise<Received> => (stored(), Promise.resolve(r));
    const not = notATurn(inbound);
    if (not) return now({ kind: "dropped", reason: not });
    // Synchronous: of two deliveries of one post racing here, the first wins.
    if (!this.seen.addIfNew(postKey(inbound))) {
      return now({ kind: "dropped", reason: "duplicate" });
    }
    const key = conversationKey(inbound);
    // Both queues are entered now, so order is fixed before the first await.
    const adapter = via ?? this.adapter(inbound.platform);
    const started = this.intake.run(key, async () => ({ turn: await this.start(inbound, target, adapter, stored, held && kept !== undefined) }));
    this.active++;
    return this.posting
      .run(key, async (): Promise<Received> => {
        const { turn } = await started;
        return turn ? this.deliver(inbound, turn, kept !== undefined, stored) : { kind: "dropped", reason: "not_addressed" };
      })
      .finally(() => {
        stored();
        this.active--;
      });
  }

  /** Messages taken on by this process whose answers are not yet on the platform. */
  get inFlight(): number {
    return this.active;
  }

  /** The platforms attached: the ones this process can post to. */
  platforms(): Platform[] {
    return [...this.adapters.keys()];
  }

  /** Stopping (false) or taking work again (true): a closed path posts no more answers. */
  setOpen(open: boolean): void {
    this.closed = !open;
  }

  /**
   * Posts a stored reply whose turn another process (or this one before a restart) left, into its
   * conversation, its parts recorded as deliveries; whether the reply is on the platform. Called
   * from the conversation's turn queue (recovery.ts), ahead of any later turn there, so it keeps
   * the order without the posting queue (whose next answer may be the turn waiting on this one).
   *
   * `answers` (the person's message): where the platform marks posts with it, the posts already
   * made for it are read first. The same parts as this reply: it was posted just before the crash,
   * and is recorded, not posted again. Anything else (a draft, a part of an earlier answer): taken
   * down, and the reply posted whole.
   */
  async resume(reply: Outbound, workspace: Workspace, conversation: Conversation, answers: string | null): Promise<boolean> {
    if (this.closed) return false;
    const adapter = this.adapter(workspace.platform as Platform);
    const threadId = conversation.isDm ? null : conversation.threadId;
    const place = await adapter.open({ ...storedPlace(workspace, conversation), ...(answers ? { answers } : {}) });
    const earlier = answers && adapter.postedFor ? await adapter.postedFor(place.channelId, threadId, answers) : [];
    if (earlier.length) {
      const options = this.draftOptions(adapter, null);
      const parts = options.chunk(options.render(reply.text));
      if (parts.length === earlier.length && parts.every((p, i) => p.trim() === earlier[i]!.text.trim())) {
        await this.deps.recordDelivery(reply, place.channelId, earlier.map((e) => e.id));
        await this.deps.delivered?.(reply);
        this.deps.log.info({ reply: reply.replyMessageId, parts: earlier.length }, "the reply was on the platform already: recorded, not posted again");
        return true;
      }
      for (const e of earlier) await place.remove?.(e.id).catch((err: unknown) => this.deps.log.warn({ err: errText(err), part: e.id }, "could not take down an earlier draft"));
    }
    const shown = await new DraftReply(place, this.draftOptions(adapter, null)).finish(reply.text);
    if (shown.posted.length === 0) {
      await this.deps.undelivered?.(reply);
      return false;
    }
    await this.deps.recordDelivery(reply, place.channelId, shown.posted);
    await this.deps.delivered?.(reply);
    return true;
  }

  /** Takes the working mark (👀) off a person's message; failures cost only the mark. */
  async clearWorking(platform: Platform, channelId: string, messageId: string): Promise<void> {
    const adapter = this.adapters.get(platform);
    await adapter?.clearWorking?.(channelId, messageId).catch((err: unknown) => this.deps.log.debug({ err: errText(err) }, "could not clear a working mark"));
  }

  /** Decides, marks the message as being worked on, and hands the turn to the core (not waiting for it). */
  private async start(inbound: Inbound, target: ReplyTarget, adapter: PlatformAdapter, stored: (outcome: StoreOutcome) => void, held: boolean): Promise<Started | null> {
    const addressed = inbound.addressed !== false;
    const thread = !inbound.channel.isDm && inbound.threadId ? threadRef(inbound) : null;
    const wasFollowed = thread !== null && (!addressed || target.threadContext !== undefined) ? await this.following.isFollowed(thread) : false;
    if (!addressed && !wasFollowed) return null;
    // Followed before the answer, so a quick follow-up in the thread is not missed.
    if (thread) this.following.follow(thread);
    // Marked (👀, typing) once the message is stored as new here, not before: a replica whose copy
    // is a duplicate (the other replica stored it first) marks nothing, so it cannot take the mark
    // off while the other works, and a platform is not asked twice (reactions.add is rate limited).
    let mark: (accepted: boolean) => void = () => undefined;
    const working = new Promise<(() => Promise<void>) | null>((resolve) => {
      mark = (accepted) => resolve(accepted && target.working ? target.working().catch(() => null) : null);
    });
    // Read while the message is stored, not before: storing first fixes its place among replicas
    // (and lets the platform's delivery be acknowledged) without waiting on a Web API call.
    const context =
      !held && addressed && thread && !wasFollowed && target.threadContext
        ? target.threadContext().catch((err: unknown) => {
            this.deps.log.warn({ err: errText(err), channel: inbound.channel.externalId }, "could not read the thread's earlier messages");
            return "";
          })
        : undefined;
    const draft = this.draftOptions(adapter, postFailedApology(inbound.platform));
    const surface = target.surface?.(draft) ?? new DraftReply(target, draft);
    const hooks: TurnHooks = { onProgress: (s) => surface.progress(s), onStored: () => stored("stored"), onAccepted: () => mark(true) };
    // Streaming costs a little per delta: only where something shows it.
    if (target.surface || target.edit) Object.assign(hooks, { onText: (d: string) => surface.text(d), onTextReset: () => surface.reset() });
    // Held (an earlier message of its conversation waits for storage): not stored out of its turn,
    // only marked as waiting, like a message whose storing failed.
    const settled = held
      ? Promise.resolve<Settled>({ err: new NotStoredError(new Error("an earlier message of its conversation waits for storage")) })
      : this.deps.handle(inbound, hooks, context).then(
          (ok): Settled => ({ ok }),
          (err: unknown): Settled => ({ err }),
        );
    // Never accepted (a duplicate, a refusal, a failure before storing): no mark, and none to wait for.
    void settled.then(() => mark(false));
    return { settled, surface, target, working, thread, wasFollowed, addressed };
  }

  private async deliver(inbound: Inbound, turn: Started, kept: boolean, stored: (outcome: StoreOutcome) => void): Promise<Received> {
    const log = this.deps.log.child({ platform: inbound.platform, channel: inbound.channel.externalId, message: inbound.messageId });
    // Waiting in the journal for storage: its working mark stays.
    let waiting = false;
    let unmarked = false;
    const unmarkOnce = async (): Promise<void> => {
      if (unmarked) return;
      unmarked = true;
      const unmark = await turn.working;
      if (unmark) await unmark().catch((err: unknown) => log.debug({ err: errText(err) }, "could not clear the working mark"));
    };
    try {
      const settled = await turn.settled;
      if ("err" in settled && settled.err instanceof NotStoredError) {
        waiting = kept;
        const post = postKey(inbound);
        return await this.outage.notStored({ post, conversation: conversationKey(inbound), kept }, turn, stored, () => this.seen.delete(post), settled.err, log);
      }
      if ("err" in settled) {
        log.error({ err: settled.err }, "the turn failed before an answer");
        const shown = await turn.surface.finish(INTERNAL_ERROR_REPLY, "notice");
        return { kind: "replied", status: "failed", replyMessageId: null, ...shown };
      }
      const result = settled.ok;
      if (result.kind === "dropped") {
        await turn.surface.cancel();
        log.debug({ reason: result.reason }, "the core dropped the message");
        return { kind: "dropped", reason: result.reason };
      }
      const reply = result.reply;
      if (reply.status === "refused" && !turn.addressed) {
        await turn.surface.cancel();
        log.info("not answering an unaddressed message from someone cairn may not serve");
        return { kind: "silent", status: "refused" };
      }
      if (reply.status === "refused" && turn.thread && !turn.wasFollowed) this.following.unfollow(turn.thread);
      if (reply.status === "refused" && !(await this.firstToRefuse(inbound, log))) {
        await turn.surface.cancel();
        log.debug("another process refused this message");
        return { kind: "dropped", reason: "duplicate" };
      }
      if (this.closed) {
        // Stopping: the stored reply's lease was handed back; the process that takes it posts it.
        await turn.surface.cancel();
        log.info({ reply: reply.replyMessageId }, "stopping: the answer is left to the next process");
        return { kind: "dropped", reason: "stopping" };
      }
      if (reply.status !== "ok" && reply.status !== "command") log.warn({ reply: reply.replyMessageId, status: reply.status }, "posting the core's non-answer (apology, refusal or limit)");
      const shown = await turn.surface.finish(reply.text, reply.status === "ok" ? "answer" : "notice");
      // The working mark comes off before the delivery is recorded, which ends the turn's lease: a
      // process killed between the two leaves a turn recovery still finishes (it finds the posted
      // parts, records them, and takes the mark off), never a mark nobody will take off.
      await unmarkOnce();
      if (!shown.posted.length) {
        log.error({ reply: reply.replyMessageId, status: reply.status }, "no part of the reply reached the platform");
        await this.deps.undelivered?.(reply).catch((err: unknown) => log.error({ err }, "could not record the failed delivery"));
      }
      if (shown.posted.length) {
        try {
          await this.deps.recordDelivery(reply, turn.target.channelId, shown.posted);
        } catch (err) {
          log.error({ err, reply: reply.replyMessageId, parts: shown.posted }, "could not record the delivery; reactions on it will be ignored");
        }
        await this.deps.delivered?.(reply);
      }
      log.info({ reply: reply.replyMessageId, parts: shown.posted.length, status: reply.status, failed: shown.failed }, "reply posted");
      return { kind: "replied", status: reply.status, replyMessageId: reply.replyMessageId, ...shown };
    } finally {
      await unmarkOnce();
      if (!waiting) await this.outage.ended(postKey(inbound), log);
    }
  }

  /**
   * A message cairn starts itself (a question, a proposal, a report): stored in the conversation of
   * the place it goes to, posted in parts, every part recorded as a delivery so reactions on it
   * reach the core; a thread it starts or posts in is followed. With `rich`, a platform that has a
   * rich form posts it as one message; otherwise (or when it cannot) the Markdown parts are posted.
   * History stores the Markdown either way.
   */
  async post(platform: Platform, target: PostTarget, markdown: string, rich?: RichPost): Promise<Posted> {
    const adapter = this.adapter(platform);
    const place = await adapter.open(target);
    const threadId = target.kind === "channel" ? (target.threadId ?? null) : null;
    const conversation = await this.deps.history.placeOfPost(platform, target.workspace, place.channelId, threadId, target.kind === "dm" ? target.person : null);
    const message = await this.deps.history.recordPost(conversation, markdown);
    const richShown = rich ? await sendRichPost(place, rich, markdown, this.deps.log) : null;
    const shown = richShown ?? (await new DraftReply(place, this.draftOptions(adapter, null)).finish(markdown));
    if (shown.posted.length) await this.deps.history.recordDeliveries(conversation.id, message.id, place.channelId, shown.posted);
    if (threadId) this.following.follow({ platform, workspace: target.workspace, threadId, key: conversation.key });
    this.deps.log.info({ platform, channel: place.channelId, parts: shown.posted.length, rich: richShown !== null, failed: shown.failed }, "post delivered");
    return { messageId: message.id, ...shown };
  }

  /** A command's answer, through `via` (the adapter it was asked on): see command-answer.ts. */
  answer(via: PlatformAdapter, inbound: Inbound, markdown: string, ephemeral: boolean, target: CommandTarget): Promise<Answered> {
    return showCommandAnswer({ history: this.deps.history, log: this.deps.log, options: this.draftOptions(via, null), canBePrivate: via.capabilities.ephemeral }, inbound, markdown, ephemeral, target);
  }

  /**
   * A refusal is not stored (nothing of someone cairn may not serve is), so the stored message's key
   * that has one replica answer a message does not cover it: where every replica receives the
   * message (Discord), every one would refuse it. The first to claim the refusal posts it; when the
   * claim cannot be made, this one posts it too (twice is better than never).
   */
  private async firstToRefuse(inbound: Inbound, log: Logger): Promise<boolean> {
    if (!this.deps.claim) return true;
    try {
      return await this.deps.claim(`refusal:${postKey(inbound)}`);
    } catch (err) {
      log.warn({ err: errText(err) }, "could not claim the refusal of a message; posting it anyway");
      return true;
    }
  }

  private draftOptions(adapter: PlatformAdapter, apology: string | null): DraftOptions {
    const caps = adapter.capabilities;
    return {
      render: (markdown: string) => adapter.render(markdown),
      chunk: (text: string) => chunkText(text, { maxChars: caps.maxMessageLength, maxLines: caps.maxMessageLines }),
      minUpdateMs: caps.minEditIntervalMs,
      apology,
      log: this.deps.log,
    };
  }
}

/**
 * Why a message from a platform can be no turn at all: a bot's (cairn's own echoed back, another
 * app's), or one with nothing visible (only spaces or zero-width characters: it asks nothing, and
 * costs no model call). Adapters pass every message on; this is the one place it is decided.
 */
export function notATurn(inbound: Inbound): "bot" | "empty" | null {
  if (inbound.author.isBot) return "bot";
  if (!hasVisibleText(inbound.text)) return "empty";
  return null;
}

/** One platform post, whichever delivery or replica it reaches. */
function postKey(inbound: Inbound): string {
  return `${inbound.platform}:${inbound.workspace.externalId}:${inbound.channel.externalId}:${inbound.messageId}`;
}

/** Where a stored conversation's replies go: its channel (a DM's channel too: the platform knows it by id), in its thread. */
function storedPlace(workspace: Workspace, conversation: Conversation): PostTarget {
  return { kind: "channel", workspace: workspace.externalId, channel: conversation.channelId, threadId: conversation.isDm ? null : conversation.threadId };
}

function threadRef(inbound: Inbound): ThreadRef {
  return { platform: inbound.platform, workspace: inbound.workspace.externalId, threadId: inbound.threadId ?? "", key: conversationKey(inbound) };
}
