/**
 * Keeping a long session within the model's budget: past `historyCharLimit`, the older turns are
 * summarised (or, if the summary fails, dropped with a note) and only the last
 * `historyKeepMessages` are sent whole. The cut falls on a turn boundary, so a person's message and
 * cairn's reply to it stay on the same side. Compression is also when new memory reaches a
 * running session: the snapshot is retaken.
 */
import type { Logger } from "../ground/log.ts";
import type { Scope } from "../ground/types.ts";
import { turnOf, type HistoryMessage, type Place } from "../history/store/store.ts";
import type { ModelClient } from "../agent/model.ts";
import type { SessionManager, Snapshot } from "../agent/sessions.ts";
import { droppedNote, summarize } from "../agent/compress.ts";
import type { Snapshots } from "./snapshot.ts";

export interface CompressionDeps {
  settings: { summaryModel: string; historyCharLimit: number; historyKeepMessages: number };
  /** The model, measured as "summary" calls. */
  model: ModelClient;
  sessions: SessionManager;
  snapshots: Snapshots;
  log: Logger;
}

export interface Compressed {
  summary: string;
  messages: HistoryMessage[];
  snapshot: Snapshot;
}

export class Compression {
  constructor(private readonly deps: CompressionDeps) {}

  /** Whether `ifNeeded` would compress (a summary, a model call) rather than return null at once. */
  due(summary: string | null, messages: readonly HistoryMessage[]): boolean {
    return this.cutOf(summary, messages) !== null;
  }

  /** The session compressed and saved, or null when it still fits. */
  async ifNeeded(sessionId: string, summary: string | null, messages: HistoryMessage[], scope: Scope, place: Place): Promise<Compressed | null> {
    const s = this.deps.settings;
    const cut = this.cutOf(summary, messages);
    if (cut === null) return null;
    const older = messages.slice(0, cut);
    const kept = messages.slice(cut);
    let next: string;
    try {
      next = await summarize(this.deps.model, s.summaryModel, summary, older, scope.workspaceId);
    } catch (err) {
      this.deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, "compression summary failed; dropping older turns");
      next = droppedNote(summary, older.length);
    }
    const snapshot = await this.deps.snapshots.retake(scope, place);
    await this.deps.sessions.saveSummary(sessionId, next, turnOf(older.at(-1)!), snapshot);
    return { summary: next, messages: kept, snapshot };
  }

  /** Where the older turns end when the session must be compressed (on a turn boundary), else null. */
  private cutOf(summary: string | null, messages: readonly HistoryMessage[]): number | null {
    const s = this.deps.settings;
    const size = (summary?.length ?? 0) + messages.reduce((n, m) => n + m.text.length, 0);
    if (size <= s.historyCharLimit || messages.length <= s.historyKeepMessages) return null;
    let cut = messages.length - s.historyKeepMessages;
    while (cut > 0 && messages[cut]?.role === "assistant") cut--;
    return cut === 0 ? null : cut;
  }
}
