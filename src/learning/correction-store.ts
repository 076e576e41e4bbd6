/**
 * The correction asked for after a negative reaction: cairn asks once per reply, in the reply's
 * conversation; the reactor's next message there is the correction.
 *
 * Invariants kept here:
 * - One question per reply, however many people react or how often: the reply id is unique.
 * - A correction is claimed by exactly one message: the claim is a conditional update
 *   (asked -> received), so two replicas handling the reactor's next messages cannot both take it.
 * - A question waits `windowMs`; after that the reactor's messages are ordinary messages again.
 */
import type { Db } from "../db/client.ts";
import type { Provider } from "../db/migrate.ts";
import type { Correction, Message } from "../db/generated/sqlite/client.ts";
import type { Scope, TypedCorrection, WorkspaceScope } from "../ground/types.ts";

export type { Correction };

/** The correction a turn is answering: what was asked and what cairn wrongly said. */
export interface ClaimedCorrection {
  id: string;
  question: string | null;
  wrongAnswer: string;
}

/**
 * The id of the correction `claim` would find, as a column of another statement (the turn's session
 * read, turn/turn-start-store.ts), so a turn with none open spends no statement on it. The same
 * WHERE as `claim`; its values: workspace id, conversation id, person id, `openSince()`
 * (PostgreSQL's placeholders numbered from `first`).
 */
export function openCorrectionColumn(provider: Provider, first: number | ((n: number) => string)): string {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  // SQLite numbers a bare `?` by its place in the statement's text. Named, or its "id" would be a
  // second output column of that name, which PostgreSQL's ORDER BY id finds ambiguous. `first` as
  // a function writes each value itself (a batch's columns: rows.ts, sessionMessagesMany).
  const p = (n: number): string => (typeof first === "function" ? first(n) : pg ? `$${first + n}` : "?");
  return `(SELECT id FROM ${q("Correction")} WHERE ${q("workspaceId")} = ${p(0)} AND ${q("conversationId")} = ${p(1)} AND ${q("reactorId")} = ${p(2)} AND status = 'asked' AND ${q("createdAt")} >= ${p(3)} ORDER BY ${q("createdAt")} DESC LIMIT 1) AS ${q("openCorrectionId")}`;
}

/**
 * The id of the correction `receivedFor` finds, as a column of another statement (review-store.ts,
 * `afterDelivered`): `ws`, `conversation` and `message` are that statement's expressions for the
 * workspace, the conversation and the person's message. A correction is the reactor's message in
 * the corrected reply's conversation, so naming the conversation finds the same row, from the
 * conversation's corrections (an index) instead of the workspace's.
 */
export function receivedCorrectionColumn(provider: Provider, ws: string, conversation: string, message: string): string {
  const q = (c: string): string => (provider === "postgresql" ? `"${c}"` : c);
  return `(SELECT id FROM ${q("Correction")} WHERE ${q("conversationId")} = ${conversation} AND ${q("workspaceId")} = ${ws} AND ${q("correctionMessageId")} = ${message} AND status = 'received' LIMIT 1)`;
}

function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && "code" in err && (err as { code?: unknown }).code === "P2002";
}

export class CorrectionStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date,
    private readonly windowMs: number,
  ) {}

  /**
   * Opens the correction of a reply. Null when one was opened for it before (asked once per reply),
   * unless it is this reactor's and its question was never posted (a run that failed before
   * posting): then that one, so the retry asks.
   */
  async open(input: { workspaceId: string; conversationId: string; replyMessageId: number; reactorId: string }): Promise<Correction | null> {
    try {
      return await this.db.correction.create({ data: { ...input, status: "asked", createdAt: this.now() } });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const earlier = await this.db.correction.findFirst({ where: { replyMessageId: input.replyMessageId, workspaceId: input.workspaceId } });
      return earlier && earlier.reactorId === input.reactorId && earlier.questionMessageId === null && earlier.status === "asked" ? earlier : null;
    }
  }

  async asked(id: string, questionMessageId: number): Promise<void> {
    await this.db.correction.updateMany({ where: { id }, data: { questionMessageId } });
  }

  /**
   * The person's message in a conversation where they were asked for a correction: takes the open
   * correction (the latest, within the window) for this message. Null when there is none.
   */
  async claim(scope: Scope, messageId: number): Promise<ClaimedCorrection | null> {
    const since = this.openSince();
    const open = await this.db.correction.findFirst({
      where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, reactorId: scope.personId, status: "asked", createdAt: { gte: since } },
      orderBy: { createdAt: "desc" },
    });
    if (!open) return null;
    const taken = await this.db.correction.updateMany({ where: { id: open.id, status: "asked" }, data: { status: "received", correctionMessageId: messageId } });
    if (taken.count !== 1) return null;
    const reply = await this.db.message.findFirst({ where: { id: open.replyMessageId, conversationId: open.conversationId } });
    const question = reply?.replyToId ? await this.db.message.findFirst({ where: { id: reply.replyToId, conversationId: open.conversationId } }) : null;
    return { id: open.id, question: question?.text ?? null, wrongAnswer: reply?.text ?? "" };
  }

  /** The oldest an asked correction may be and still be claimed (the window). */
  openSince(): Date {
    return new Date(this.now().getTime() - this.windowMs);
  }

  /**
   * A correction typed in words ("no, we use pnpm"), as the turn's model judged it: the person's
   * message `messageId` corrects cairn's latest answer before it in the conversation. Recorded as
   * received at once (nobody was asked: `questionMessageId` stays null), so the same lesson job
   * takes it once the corrected answer is posted. One correction per answer, as for a 👎.
   */
  async recordTyped(scope: Scope, messageId: number): Promise<TypedCorrection> {
    const answer = await this.db.message.findFirst({
      where: { conversationId: scope.conversationId, workspaceId: scope.workspaceId, role: "assistant", status: "sent", replyToId: { not: null }, id: { lt: messageId } },
      orderBy: { id: "desc" },
      select: { id: true },
    });
    if (!answer) return { kind: "no_answer" };
    if (await this.receivedFor(scope, messageId)) return { kind: "taken" };
    try {
      const made = await this.db.correction.create({
        data: {
          workspaceId: scope.workspaceId,
          conversationId: scope.conversationId,
          replyMessageId: answer.id,
          reactorId: scope.personId,
          status: "received",
          correctionMessageId: messageId,
          createdAt: this.now(),
        },
      });
      return { kind: "recorded", id: made.id, replyMessageId: answer.id };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      return { kind: "taken" };
    }
  }

  /** The correction of one reply, whatever its status (one per reply). */
  async ofReply(scope: WorkspaceScope, replyMessageId: number): Promise<Correction | null> {
    return this.db.correction.findFirst({ where: { workspaceId: scope.workspaceId, replyMessageId } });
  }

  /**
   * Takes back a correction opened for `/correct` whose turn never claimed it (the message was
   * refused, limited, or not stored): deleted while still asked and never shown to anyone, so the
   * person's next message is not taken for it and the reply can still be corrected.
   */
  async withdraw(id: string): Promise<boolean> {
    const r = await this.db.correction.deleteMany({ where: { id, status: "asked", questionMessageId: null } });
    return r.count === 1;
  }

  /** The correction a person's message was taken as (status received), if any. */
  async receivedFor(scope: WorkspaceScope, correctionMessageId: number): Promise<Correction | null> {
    return this.db.correction.findFirst({ where: { workspaceId: scope.workspaceId, correctionMessageId, status: "received" } });
  }

  async get(scope: WorkspaceScope, id: string): Promise<Correction | null> {
    return this.db.correction.findFirst({ where: { id, workspaceId: scope.workspaceId } });
  }

  /** The person's message the correction was taken from; null before one was (or once it is gone). */
  async said(correction: Correction): Promise<Message | null> {
    if (correction.correctionMessageId === null) return null;
    return this.db.message.findFirst({ where: { id: correction.correctionMessageId, conversationId: correction.conversationId, workspaceId: correction.workspaceId } });
  }

  /** Ends a correction without a lesson (its text was refused by the scanner). Only from `received`. */
  async drop(id: string): Promise<boolean> {
    const r = await this.db.correction.updateMany({ where: { id, status: "received" }, data: { status: "dropped" } });
    return r.count === 1;
  }
}
