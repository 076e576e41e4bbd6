/**
 * One turn: a stored message in, a stored answer out. The prompt is the session's frozen snapshot,
 * its history (compressed when long), the lessons that fit this message and the correction it
 * answers; the model runs with the tools; the reply is stored, under this process's lease when
 * there is one.
 *
 * Invariants kept here:
 * - The scope of every read is built once, from the stored place of the inbound message.
 * - A model failure never surfaces as an exception: the person gets a polite reply, stored as failed.
 * - A turn another process took over (its lease ran out) stores nothing and returns null.
 */
import type { Logger } from "../ground/log.ts";
import { errText } from "../ground/log.ts";
import type { Outbound, Scope, TurnHooks } from "../ground/types.ts";
import { storable } from "../ground/text.ts";
import { INTERNAL_ERROR_REPLY, MODEL_INTERRUPTED_REPLY, MODEL_KEY_REFUSED_REPLY, MODEL_UNAVAILABLE_REPLY } from "../ground/replies.ts";
import { scopeOf, type HistoryStore, type Lease, type Message, type Place } from "../history/store/store.ts";
import type { MemoryStore } from "../memory/store.ts";
import { relevantLessons } from "../lessons/recall.ts";
import { MEANING } from "../lessons/by-meaning.ts";
import { isKeyRefused, ModelUnavailableError, type ModelClient } from "../agent/model.ts";
import { readSnapshot, type SessionManager, type Snapshot } from "../agent/sessions.ts";
import { buildRequest, historyToMessages, withLessons } from "../agent/prompt.ts";
import { runToolLoop, type LoopResult } from "../agent/loop.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { Learning } from "../learning/learning.ts";
import type { TraceSearch, TurnDrew } from "../learning/trace-store.ts";
import { withCorrection } from "../learning/correction-frame.ts";
import { DEFAULT_FRESHNESS } from "../learning/settings.ts";
import type { Metrics } from "../ops/metrics.ts";
import type { Providers } from "../providers/providers.ts";
import type { Embeddings } from "../providers/embeddings/wiring.ts";
import { withProviderItems } from "../providers/quoted.ts";
import type { TurnLeases } from "./leases.ts";
import { speakerName, type SnapshotReads, type Snapshots } from "./snapshot.ts";
import type { Compression } from "./compression.ts";
import { ANY_ID, type LeasedMessage, type TurnStart, type TurnStartStore } from "./turn-start-store.ts";
import type { RecordedReply, TurnEndStore } from "./turn-end-store.ts";
import type { Away, Slots } from "../ground/slots.ts";
import type { ChatSession } from "../agent/session-store.ts";

/** What the model is sent, and what the turn's trace keeps of how it was made. */
interface Prepared {
  request: ReturnType<typeof buildRequest>;
  asked: string;
  earlier: string[];
  correction: Awaited<ReturnType<Learning["claimCorrection"]>>;
  inPrompt: Pick<TurnDrew, "ruleIds" | "factIds">;
  shownLessons: string[];
}

/**
 * A leased turn's look at the turns ahead of it: its message and process, and the wait for those
 * turns (recovery.ts `before`). The look rides on the turn's first read (turn-start-store.ts);
 * `look` is the same look alone (recovery.ts `anyAhead`), for a turn that has no read to carry it.
 */
export interface TurnAhead extends LeasedMessage {
  wait: () => Promise<void>;
  look: () => Promise<boolean>;
}

/**
 * How a turn looks at the turns ahead of it: on its own (`seen`: sent when the turn starts,
 * answered while it prepares, as the read's column would be), or, `seen` null, with its session's
 * first read.
 */
interface Look {
  ahead: TurnAhead;
  seen: Promise<boolean> | null;
}

/** `prepare` found another process's turns ahead of this one: it waits for them and starts again. */
const AHEAD = Symbol("ahead");

/** Earlier person messages of the session read with the message when lessons are picked. */
const LESSON_CONTEXT_MESSAGES = 3;

export interface TurnDeps {
  /** `learning.freshness.verifyDays`: shared lessons unconfirmed this long show their date (issue 27). */
  settings: { model: string; maxTokens: number; toolIterations: number; learning?: { freshness?: { verifyDays: number } } };
  /** The model, measured as "turn" calls. */
  model: ModelClient;
  tools: ToolRegistry;
  history: HistoryStore;
  /** The session read with the open-correction check in one statement (without it: two reads). */
  starts?: Pick<TurnStartStore, "read" | "correctionOpen" | "overlaps">;
  /** The reply stored with its trace in one statement where the database can (without it: two writes). */
  ends?: Pick<TurnEndStore, "record">;
  memory: MemoryStore;
  sessions: SessionManager;
  snapshots: Snapshots;
  compression: Compression;
  /** The correction a message answers, and what a turn drew on (the learning loop). */
  learning: Pick<Learning, "claimCorrection" | "recordTurn">;
  leases: TurnLeases;
  metrics: Metrics;
  log: Logger;
  now: () => Date;
  /** Memory providers: items fetched beside the lessons, the delivered turn synced (providers.ts). */
  providers?: Pick<Providers, "prefetch" | "replied" | "any">;
  /** The embeddings provider (providers/embeddings/wiring.ts): lessons recalled by meaning too. */
  embeddings?: Pick<Embeddings, "similarity"> | null;
  /** A refused model key met at `place`: the admins are told (key-alarm.ts). */
  onKeyRefused?: (place: Place) => void;
  /**
   * The turns being prepared (everything before the model is called) at once, started in arrival
   * order. A burst's turns prepared all together reach the model all at the end, and their replies
   * all come back together; a few at a time, the first to arrive is the first to be answered.
   */
  preparing: Slots;
}

export class TurnRunner {
  constructor(private readonly deps: TurnDeps) {}

  /** A new session's first snapshot reads, started before its turn (turn/intake.ts; snapshot.ts `reads`). */
  snapshotReads(place: Place, sessionId: string): SnapshotReads {
    return this.deps.snapshots.reads(scopeOf(place), sessionId);
  }

  /**
   * A continuing session's first read, started while its message is stored (turn/intake.ts), for
   * every id (turn-start-store.ts `withStored` keeps what was before the message); null without the
   * store or where a read beside the insert saves nothing (SQLite), or when the read failed (the
   * turn then reads as usual). `lease`: the look at turns ahead.
   */
  startBeside(place: Place, session: Pick<ChatSession, "id" | "summaryThroughId">, lease: LeasedMessage | null): Promise<TurnStart | null> | null {
    const { starts } = this.deps;
    if (!starts?.overlaps) return null;
    return starts.read(scopeOf(place), session.id, session.summaryThroughId, ANY_ID, lease).catch((err: unknown) => {
      this.deps.log.warn({ err: errText(err), session: session.id }, "could not read a session beside its message; the turn reads it again");
      return null;
    });
  }

  /**
   * `known`: the session's messages through this one, when the intake already holds them, and
   * whether a correction may be open; `early`: the snapshot's reads, when the intake started them;
   * `ahead`: under a lease, other processes' turns for earlier messages of the conversation come
   * first (looked for with the session's read where there is one, `known`'s included, else on its
   * own while the turn prepares).
   */
  async run(place: Place, sessionId: string, messageId: number, hooks: TurnHooks, known: TurnStart | null, lease: Lease | null, early: SnapshotReads | null = null, ahead: TurnAhead | null = null): Promise<Outbound | null> {
    const { settings: s, sessions, tools, learning } = this.deps;
    const log = this.deps.log.child({ conversation: place.conversation.key, message: messageId });
    const scope = scopeOf(place);
    // No session read for the look to ride on (a new session's first message, whose start the intake
    // knows): the look goes out on its own now, beside the snapshot's reads, not before them.
    const look = ahead ? lookOf(ahead, this.deps.starts !== undefined && (!known || known.aheadSeen !== undefined)) : null;
    // Read now, not at intake: turns queued ahead of this one may have frozen its snapshot since.
    const session = await sessions.get(scope, sessionId);

    let text: string;
    let status: Outbound["status"] = "ok";
    let toolCalls: LoopResult["toolCalls"] = [];
    let shownLessons: string[] = [];
    let inPrompt: Pick<TurnDrew, "ruleIds" | "factIds"> = { ruleIds: [], factIds: [] };
    // The searches the model ran and the messages they showed it (the trace keeps them: why this answer?).
    const searches: TraceSearch[] = [];
    let question = "";
    // Writes the turn started and need not wait for before the model is called (the snapshot's).
    const writes: Promise<void>[] = [];
    try {
      // A burst's turns are prepared a few at a time, in arrival order (TurnDeps.preparing).
      const prep = await this.prepareInOrder(place, scope, session, messageId, known, writes, early, look);
      const { request, asked, earlier, correction } = prep;
      ({ inPrompt, shownLessons } = prep);
      question = asked;
      const result = await runToolLoop({
        model: this.deps.model,
        request,
        tools,
        ctx: {
          scope,
          sourceMessageId: messageId,
          sessionId: session.id,
          speakerName: speakerName(place),
          conversation: [...earlier, asked],
          onRead: (read) => void searches.push({ query: read.query, messageIds: read.messageIds }),
        },
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
        // A refused key is no outage: "try again in a few minutes" would never come true.
        text = err.reason === "interrupted" ? MODEL_INTERRUPTED_REPLY : isKeyRefused(err) ? MODEL_KEY_REFUSED_REPLY : MODEL_UNAVAILABLE_REPLY;
        if (text === MODEL_KEY_REFUSED_REPLY) this.deps.onKeyRefused?.(place);
      } else {
        log.error({ err }, "turn failed");
        this.deps.metrics.error("turn");
        text = INTERNAL_ERROR_REPLY;
      }
    }
    // Done before the turn ends: the conversation's next turn reads what they wrote.
    await Promise.all(writes);
    // The lease is taken now, not when the turn began: renewals have kept it alive meanwhile.
    const drew: TurnDrew | null = status === "ok" ? { toolCalls, lessonIds: shownLessons, ...inPrompt, searches } : null;
    const { reply, traced } = await this.endTurn(place, session.id, messageId, text, lease && this.deps.leases.next(), drew);
    if (!reply) {
      log.warn("the turn was taken over by another process; its answer is not stored");
      return null;
    }
    if (drew) {
      await learning.recordTurn(scope, reply.id, drew, { traced }).catch((err: unknown) => log.warn({ err: errText(err) }, "could not record what the turn drew on"));
      this.deps.providers?.replied(scope, { question, answer: text, messageId, replyMessageId: reply.id });
    }
    return { status, text, conversationId: place.conversation.id, replyMessageId: reply.id };
  }

  /**
   * `prepare`, in the conversation's order across processes: when the look saw another process's
   * turn for an earlier message, that turn is waited for and the turn prepared again from a fresh
   * read of its session (the turn ahead may have summarized it).
   */
  private async prepareInOrder(place: Place, scope: Scope, session: ChatSession, messageId: number, known: TurnStart | null, writes: Promise<void>[], early: SnapshotReads | null, look: Look | null): Promise<Prepared> {
    const first = await this.deps.preparing.run((away) => this.prepare(place, scope, session, messageId, known, away, writes, early, look));
    if (first !== AHEAD) return first;
    await look!.ahead.wait();
    const fresh = await this.deps.sessions.get(scope, session.id);
    // `known` was read before the turns ahead ended: the session is read again.
    const again = await this.deps.preparing.run((away) => this.prepare(place, scope, fresh, messageId, null, away, writes, early, null));
    // Without `ahead` nothing is looked for: `prepare` always prepares.
    if (again === AHEAD) throw new Error("a turn prepared without a look ahead reported one");
    return again;
  }

  /**
   * Everything before the model is called: the snapshot, the session's messages (compressed when
   * long), the lessons that fit and the correction this message answers, and the request built from
   * them. AHEAD when `look` saw another process's turn first.
   */
  private async prepare(place: Place, scope: Scope, session: ChatSession, messageId: number, known: TurnStart | null, away: Away, writes: Promise<void>[], early: SnapshotReads | null, look: Look | null): Promise<Prepared | typeof AHEAD> {
    const { settings: s, history, memory, tools, learning } = this.deps;
    const { snapshot, saved } = await this.deps.snapshots.ensure(session.id, readSnapshot(session), scope, place, early);
    // A snapshot not saved is taken again by the next turn (the session store keeps only what was
    // written): the answer need not wait for, or fail with, its write.
    const saving = saved?.catch((err: unknown) => this.deps.log.warn({ err: errText(err), session: session.id }, "could not save the session's snapshot; the next turn takes it again"));
    if (saving) writes.push(saving);
    let summary = session.summary;
    // A new session's first message has no read for the correction check to ride on: it is asked
    // alone (`mayBeOpen`), unless the intake knows none can be open (the conversation's first session).
    const start = known ?? (await this.readStart(scope, session.id, session.summaryThroughId, messageId, look && !look.seen ? look.ahead : null));
    if (start.aheadSeen || (look?.seen && (await look.seen))) return AHEAD;
    let messages = start.messages;
    // A summary is a model call: the slot is not held through it.
    const { compression } = this.deps;
    const due = compression.due(summary, messages);
    // Compression writes a snapshot of its own: the one taken above must not land after it.
    if (due && saving) await saving;
    const compressed = due ? await away(() => compression.ifNeeded(session.id, summary, messages, scope, place)) : null;
    if (compressed) ({ summary, messages } = compressed);
    const inPrompt = promptMemory(compressed?.snapshot ?? snapshot, place.person.id);
    // Lessons go with the message they fit, not into the frozen snapshot: they differ message to message.
    const at = messages.findIndex((m) => m.id === messageId);
    const asked = messages[at]?.text ?? "";
    // The few messages people wrote just before it name the topic a short follow-up leaves out.
    const earlier = messages.slice(0, Math.max(0, at)).filter((m) => m.role === "user").slice(-LESSON_CONTEXT_MESSAGES).map((m) => m.text);
    // Started now, awaited with the prompt: it runs while lessons and the correction are read.
    const provided = this.deps.providers?.prefetch(scope, { text: asked, recent: earlier }) ?? Promise.resolve([]);
    const inPlace = await memory.lessons(scope);
    // By meaning only where enough lessons give a spread to stand out from (lessons/by-meaning.ts);
    // the message's vector is asked for while the correction is claimed.
    const near = inPlace.length > MEANING.minOthers ? this.deps.embeddings?.similarity(scope, asked, inPlace.map((l) => l.id)) : undefined;
    // The person's message after cairn asked them what it should have done: the correction.
    const correction = (await this.mayBeOpen(scope, start)) ? await learning.claimCorrection(scope, messageId) : null;
    // Providers and embeddings are services outside: the slot is not held while they answer.
    const lessons = relevantLessons(inPlace, asked, undefined, earlier, near ? await away(() => near) : undefined);
    // Each lesson names who taught it; the names come from the history's cache of people.
    const teachers = await history.names(scope, lessons.flatMap((l) => (l.createdById ? [l.createdById] : [])));
    const items = this.deps.providers?.any ? await away(() => provided) : await provided;
    const request = buildRequest({
      model: s.model,
      maxTokens: s.maxTokens,
      snapshot: compressed?.snapshot ?? snapshot,
      speakerId: place.person.id,
      summary,
      history: withCorrection(withProviderItems(withLessons(historyToMessages(messages, !place.conversation.isDm), lessons, teachers, { now: this.deps.now(), days: s.learning?.freshness?.verifyDays ?? DEFAULT_FRESHNESS.verifyDays }), items), correction),
      tools: tools.definitions(),
    });
    return { request, asked, earlier, correction, inPrompt, shownLessons: lessons.map((l) => l.id) };
  }

  /**
   * Whether the speaker may have a correction open. A new session's first message has no session
   * read for the check to ride on: the store's check alone (below Prisma) asks, and `claim` (a read
   * and a conditional update) runs only when one is there.
   */
  private async mayBeOpen(scope: Scope, start: TurnStart): Promise<boolean> {
    if (!start.correctionOpen) return false;
    return this.deps.starts && start.unchecked ? this.deps.starts.correctionOpen(scope) : true;
  }

  /** The session's messages; whether a correction may be open, and turns ahead, come with them when the store can say. */
  private readStart(scope: Scope, sessionId: string, afterUserId: number | null, throughUserId: number, ahead: TurnAhead | null): Promise<TurnStart> {
    const { starts, history } = this.deps;
    if (starts) return starts.read(scope, sessionId, afterUserId, throughUserId, ahead);
    return history.sessionMessages(scope, sessionId, afterUserId, throughUserId).then((messages) => ({ messages, correctionOpen: true }));
  }

  /** The turn's reply, with its trace when the store writes both at once (turn-end-store.ts). */
  private async endTurn(place: Place, sessionId: string, replyToId: number, text: string, lease: Lease | null, drew: TurnDrew | null): Promise<RecordedReply> {
    const status = drew ? "sent" : "failed";
    if (this.deps.ends) return this.deps.ends.record(place, sessionId, replyToId, text, status, lease, drew);
    return { reply: await this.recordReply(place, sessionId, replyToId, text, status, lease), traced: false };
  }

  /** Stores a reply; under a lease, only while the turn is still this process's (null otherwise). */
  recordReply(place: Place, sessionId: string, replyToId: number, text: string, status: "sent" | "failed", lease: Lease | null): Promise<Message | null> {
    const { history } = this.deps;
    return lease ? history.recordReply(place, sessionId, replyToId, text, status, lease) : history.recordReply(place, sessionId, replyToId, text, status);
  }

  /** The session a recovered message was filed in, or the conversation's current one. */
  async sessionFor(place: Place, sessionId: string | null): Promise<string> {
    return sessionId ?? (await this.deps.sessions.current(scopeOf(place), this.deps.now())).session.id;
  }
}

/** The team rules and the facts the prompt's snapshot holds for this speaker: shared ones and their own profile's. */
function promptMemory(snapshot: Snapshot, personId: string): Pick<TurnDrew, "ruleIds" | "factIds"> {
  return { ruleIds: snapshot.rules ?? [], factIds: [...(snapshot.facts ?? []), ...(snapshot.profileFacts?.[personId] ?? [])] };
}

/** The look a turn makes: with its first read when it has one (`onRead`), else sent now on its own. */
function lookOf(ahead: TurnAhead, onRead: boolean): Look {
  if (onRead) return { ahead, seen: null };
  const seen = ahead.look();
  // Awaited by prepare; a turn that fails before it gets there must not leave its failure unhandled.
  seen.catch(() => undefined);
  return { ahead, seen };
}
