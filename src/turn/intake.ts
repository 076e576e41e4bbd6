/**
 * From a person's message to its turn: admission (access), storage, the rate limit, and the
 * per-conversation order.
 *
 * Invariants kept here:
 * - The person's message is stored before anything else happens; a failure later loses nothing.
 *   Refused people's messages are not stored at all.
 * - Messages of one conversation are handled strictly in order (turn order equals id order);
 *   conversations run concurrently, bounded by the turn queue's concurrency.
 * - Under a lease (the delivery path), another process finishes the turn if this one dies.
 */
import type { Logger } from "../ground/log.ts";
import type { HandleResult, Inbound, Outbound, TurnHooks } from "../ground/types.ts";
import { KeyedQueue } from "../ground/keyed-queue.ts";
import { cutNote, DEFAULT_MAX_MESSAGE_CHARS, storable, storableStrings, withinLimit } from "../ground/text.ts";
import { conversationKey, personScopeOf, scopeOf, type HistoryStore, type Lease, type Place } from "../history/store/store.ts";
import type { SessionManager } from "../agent/sessions.ts";
import { checkAccess, type AccessPolicy } from "../admission/access.ts";
import { limitText, type RateLimiter } from "../admission/rate-limit.ts";
import type { Metrics } from "../ops/metrics.ts";
import { countTurn } from "../ops/core-metrics.ts";
import type { TurnLeases } from "./leases.ts";
import type { Recovery } from "./recovery.ts";
import type { TurnRunner } from "./turn.ts";
import { ANY_ID, withStored } from "./turn-start-store.ts";
import { notATurn } from "../delivery/delivery.ts";
import { NotStoredError } from "../ground/errors.ts";
import { didYouMean, typedCommand, type TypedCommand } from "../ground/typed-command.ts";
import type { CommandName, CommandReply } from "../ground/commands.ts";
import { runCommandSafely } from "../delivery/command-answer.ts";

export interface HandleOptions {
  leased?: boolean;
  context?: Promise<string>;
}

export interface IntakeDeps {
  settings: { access: AccessPolicy; rateLimitPerHour: number; maxMessageChars?: number };
  history: HistoryStore;
  sessions: SessionManager;
  limiter: RateLimiter;
  leases: TurnLeases;
  /** Other replicas' turns for earlier messages of a conversation come first. */
  recovery: Pick<Recovery, "before" | "settle" | "settled" | "anyAhead">;
  /** The turns, one at a time per conversation. */
  queue: KeyedQueue;
  runner: TurnRunner;
  metrics: Metrics;
  /** Runs a command as its asker (the command service, access rules and all): a read-only command typed in a DM. */
  command?: (inbound: Inbound, name: CommandName, args: readonly string[]) => Promise<CommandReply>;
  log: Logger;
  now: () => Date;
}

export class Intake {
  /** Storing, one message at a time per conversation. */
  private readonly storing = new KeyedQueue(Number.MAX_SAFE_INTEGER);

  constructor(private readonly deps: IntakeDeps) {}

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
    if (not) return countTurn(this.deps.metrics, Promise.resolve({ kind: "dropped", reason: not }));
    return this.handleStorable(storableStrings(received), hooks, opts);
  }

  /** `handle` for a message whose strings are storable already (text.ts): the delivery path's. */
  handleStorable(received: Inbound, hooks: TurnHooks, opts: HandleOptions): Promise<HandleResult> {
    return countTurn(this.deps.metrics, this.handleMessage(received, hooks, opts));
  }

  private async handleMessage(received: Inbound, hooks: TurnHooks, opts: HandleOptions): Promise<HandleResult> {
    const { settings, history, sessions, limiter, leases, recovery, queue, runner, log } = this.deps;
    let storedYet = false;
    const lease = () => (opts.leased ? leases.next() : null);
    // Bots and messages with nothing visible never get here (`notATurn`, decided once before).
    const limit = settings.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
    const fitted = withinLimit(received.text, limit);
    const inbound: Inbound = { ...received, text: fitted.text };
    const access = checkAccess(settings.access, inbound);
    if (!access.ok) {
      log.info({ platform: inbound.platform, user: inbound.author.externalId, channel: inbound.channel.externalId, reason: access.reason }, "access refused");
      return { kind: "reply", reply: { status: "refused", text: access.text, conversationId: null, replyMessageId: null } };
    }
    // Messages are stored one at a time per conversation (keyed before any database work, so a slow
    // look-up cannot let a later message overtake an earlier one), and each turn is queued the
    // moment its message is stored: turn order equals id order, and history is read by id range.
    // The session is picked as the message arrives, so the message is stored once, already filed.
    const key = conversationKey(inbound);
    const store = async () => {
      // A message for a conversation whose turn is under way cannot be answered before that turn
      // ends, a model call away: storing it waits for the event loop's next turn, so work that can
      // start a reply sooner (other conversations' turns) goes first. In a burst, the follow-ups
      // are then stored while the model calls are out instead of delaying them.
      if (queue.busy(key)) await new Promise((resolve) => setImmediate(resolve));
      const place = await history.resolve(inbound);
      const { session, isNew } = await sessions.current(scopeOf(place), this.deps.now());
      // A new session's first snapshot is read while its message is stored, not a round trip after:
      // only when nothing of this conversation is under way, whose turn could still write what it reads.
      const early = isNew && !queue.busy(key) ? runner.snapshotReads(place, session.id) : null;
      // A continuing session's first read goes out with the message's insert, not a round trip
      // after it (on PostgreSQL, where a statement is one: TurnRunner.startBeside). Only when
      // nothing of this conversation can come between the two: nothing of it under way, no context
      // to store, no order window still to wait. The read keeps what was before the message, and
      // the message is added (turn-start-store.ts `withStored`).
      const idle = !isNew && !queue.busy(key) && !inbound.context?.trim() && !opts.context && (!opts.leased || recovery.settled(inbound.sentAt));
      const beside = idle ? runner.startBeside(place, session, opts.leased ? { owner: leases.owner, message: { id: ANY_ID, createdAt: inbound.sentAt } } : null) : null;
      const stored = await history.recordInbound(place, inbound, session.id, lease());
      storedYet = true;
      if (!stored) return null;
      hooks.onAccepted?.();
      // A command typed without its slash is never a turn: the model would only chat about it
      // (ground/typed-command.ts says which lines are one). It costs no model call, so no rate.
      const typed = typedCommand(inbound.text);
      const run = typed && this.runsHere(inbound, typed);
      if (run) return { turn: queue.run(key, () => this.runTyped(run, inbound, typed, place, session.id, stored.id, lease())) };
      if (typed) return { turn: this.pointTo(place, session.id, stored.id, didYouMean(inbound.platform, typed.call), lease()) };
      const rate = await limiter.take(personScopeOf(place), stored.id, this.deps.now());
      if (!rate.ok) return { turn: this.limited(place, session.id, stored.id, rate.retryAfterMs, lease()) };
      // A new session's first message (without a context block) is all of its history so far; in a
      // conversation's first session nobody can have a correction open yet (no earlier reply).
      const known = isNew && !inbound.context?.trim() && !opts.context ? { messages: [{ ...stored, author: place.person }], correctionOpen: !sessions.inFirstSession(scopeOf(place)), unchecked: true } : null;
      const read = beside?.then((start) => start && withStored(start, { ...stored, author: place.person }));
      return {
        turn: queue.run(key, async () => {
          // Stopping: the message is stored under a lease already handed back; another replica answers it.
          if (opts.leased && leases.released) return null;
          // Other replicas' turns for earlier messages come first: looked for by the turn (turn.ts, `ahead`).
          if (opts.leased) await recovery.settle(stored);
          const context = storable((await opts.context) ?? "");
          if (context.trim()) await history.recordContext(place, session.id, stored.id, context, stored.createdAt);
          const ahead = opts.leased ? { owner: leases.owner, message: stored, wait: () => recovery.before(scopeOf(place), stored), look: () => recovery.anyAhead(scopeOf(place), stored) } : null;
          return runner.run(place, session.id, stored.id, hooks, known ?? (await read) ?? null, lease(), early, ahead);
        }),
      };
    };
    const accepted = await this.storing.run(key, async () => {
      try {
        return await store();
      } catch (err) {
        // Not stored: the caller tells the person so, or its journal hands the message back later.
        if (!storedYet) throw new NotStoredError(err);
        throw err;
      }
    });
    hooks.onStored?.();
    if (!accepted) return { kind: "dropped", reason: "duplicate" };
    const reply = await accepted.turn;
    // Another process took the turn over (this one stalled past its lease, or is stopping): it answers.
    if (!reply) return { kind: "dropped", reason: "taken_over" };
    // The person is told what was left out of an over-long message, with the answer to the rest.
    return { kind: "reply", reply: fitted.cut ? { ...reply, text: `${cutNote(fitted.cut, limit)}\n\n${reply.text}` } : reply };
  }

  /**
   * How a typed command is run here, or null when it is only pointed to. Only a read-only one in a
   * DM: nobody but the asker reads a DM, so its answer is as private as `/cairn …`'s. In a channel
   * or thread the reply to a message is public (`ReplyTarget` has no private surface: Slack's
   * ephemeral posts and Discord's ephemeral replies reach the core only as `CommandTarget.private`,
   * for commands the platform itself hands in), so there it is pointed to. A change never runs.
   */
  private runsHere(inbound: Inbound, typed: TypedCommand): IntakeDeps["command"] | null {
    return !typed.changes && inbound.channel.isDm ? (this.deps.command ?? null) : null;
  }

  /**
   * A read-only command typed in a DM, run as its asker and its answer stored as the reply (in the
   * DM's history, which only its asker reads, as the pointer would be); no model call, no rate. In
   * the conversation's turn order, so it answers after the turn of a message sent before it.
   */
  private async runTyped(run: NonNullable<IntakeDeps["command"]>, inbound: Inbound, typed: TypedCommand, place: Place, sessionId: string, messageId: number, lease: Lease | null): Promise<Outbound | null> {
    const { log } = this.deps;
    const answer = await runCommandSafely(() => run(inbound, typed.call.name, typed.call.args), log.child({ platform: inbound.platform, command: typed.call.name }));
    const reply = await this.deps.runner.recordReply(place, sessionId, messageId, answer.text, "sent", lease);
    log.info({ person: place.person.id, command: typed.call.name }, "a read-only command typed in a DM: run");
    return reply && { status: "command", text: answer.text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }

  /** A typed command: the pointer to it is stored as the reply, as a limit's notice is; no model call. */
  private async pointTo(place: Place, sessionId: string, messageId: number, text: string, lease: Lease | null): Promise<Outbound | null> {
    const reply = await this.deps.runner.recordReply(place, sessionId, messageId, text, "sent", lease);
    this.deps.log.info({ person: place.person.id }, "a command typed as a message: pointed to, not run");
    return reply && { status: "command", text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }

  /** Over the rate limit: the message stays stored (and in history); the reply says when to return. */
  private async limited(place: Place, sessionId: string, messageId: number, retryAfterMs: number, lease: Lease | null): Promise<Outbound | null> {
    const text = limitText(this.deps.settings.rateLimitPerHour, retryAfterMs);
    const reply = await this.deps.runner.recordReply(place, sessionId, messageId, text, "failed", lease);
    this.deps.log.info({ person: place.person.id }, "rate limited");
    return reply && { status: "limited", text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }
}
