/**
 * A turn's answer shown by post-and-edit, for every platform that can edit its messages, so nobody
 * stares at an empty thread while a long answer is written.
 *
 * While the turn runs, one working message shows either the latest tool status or the answer as
 * the model writes it (a draft; a draft longer than a message spills into further messages, split
 * as the final answer will be). Updates are coalesced: at most one flush per `minUpdateMs`, never
 * two flushes in flight, each showing only the newest state, so a fast model cannot outrun the
 * platform's edit limits. A draft first appears `minUpdateMs` after its first text: a short answer
 * finished by then is posted once, without an edit a moment later.
 *
 * At the end the final answer replaces the working messages part by part (a part that already
 * shows the right text is left alone), further parts are posted, and working messages it does not
 * need are deleted, so the thread keeps no stale text. A platform without edits gets the final
 * answer only.
 */
import { errText } from "../ground/log.ts";
import type { DraftOptions, ReplySurface, ReplyTarget, Shown } from "../ground/adapter.ts";

/** A working message posted so far, and the text it shows now (to skip edits that change nothing). */
interface Working {
  id: string;
  text: string;
}

/** What the next flush shows: the latest tool status, or the draft as it is by then. */
type View = { kind: "status"; status: string } | { kind: "draft" };

/** The Markdown of a status line: `⏳ _searching history…_`, the status's own markup escaped. */
export function statusLine(status: string): string {
  return `⏳ _${status.replace(/[\\`*_~[\]<>|]/g, (c) => `\\${c}`)}…_`;
}

export class DraftReply implements ReplySurface {
  private readonly shown: Working[] = [];
  /** Working messages deleted because the final answer did not need them. */
  private readonly deleted = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private view: View | null = null;
  /** The answer's Markdown so far, since the last reset. */
  private draft = "";
  private draftSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  private lastShown = Number.NEGATIVE_INFINITY;
  private closed: boolean;

  constructor(
    private readonly target: ReplyTarget,
    private readonly opts: DraftOptions,
  ) {
    // Without edits a draft could never be replaced by the answer: only the answer is posted.
    this.closed = target.edit === undefined;
  }

  progress(status: string): void {
    if (this.closed) return;
    this.view = { kind: "status", status };
    this.schedule();
  }

  text(delta: string): void {
    if (this.closed || !delta) return;
    this.draftSince ??= Date.now();
    this.draft += delta;
    this.view = { kind: "draft" };
    this.schedule();
  }

  /** The draft was a preamble to tool calls: dropped, but left on screen until the next status replaces it. */
  reset(): void {
    this.draft = "";
    this.draftSince = null;
    if (this.view?.kind === "draft") this.view = null;
  }

  async cancel(): Promise<void> {
    await this.close();
    await this.discard(this.shown);
  }

  /** Never throws: a part the platform refuses ends in an apology where it can still be posted. */
  async finish(markdown: string): Promise<Shown> {
    await this.close();
    const parts = this.opts.chunk(this.opts.render(markdown));
    if (!parts.length) parts.push("…");
    const posted: string[] = [];
    for (const [i, part] of parts.entries()) {
      const working = this.shown[i];
      try {
        posted.push(working ? await this.replace(working, part) : await this.target.send(part));
      } catch (err) {
        this.opts.log.error({ channel: this.target.channelId, part: i + 1, parts: parts.length, err: errText(err) }, "could not post the reply");
        await this.apologise();
        return { posted: posted.filter((id) => !this.deleted.has(id)), failed: true };
      }
    }
    posted.push(...(await this.discard(this.shown.slice(parts.length))));
    return { posted, failed: false };
  }

  private async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.chain;
  }

  /** A short apology over the working messages, or posted anew. */
  private async apologise(): Promise<void> {
    const [first, ...rest] = this.shown;
    if (this.opts.apology === null) return;
    const text = this.opts.render(this.opts.apology);
    try {
      if (first && this.target.edit) await this.target.edit(first.id, text);
      else await this.target.send(text);
    } catch (err) {
      this.opts.log.error({ channel: this.target.channelId, err: errText(err) }, "could not post the apology either");
    }
    await this.discard(rest);
  }

  private schedule(): void {
    if (this.closed || this.timer || this.busy) return;
    let at = this.lastShown + this.opts.minUpdateMs;
    if (this.view?.kind === "draft" && this.draftSince !== null) at = Math.max(at, this.draftSince + this.opts.minUpdateMs);
    this.timer = setTimeout(() => this.flush(), Math.max(0, at - Date.now()));
  }

  private flush(): void {
    this.timer = null;
    const view = this.view;
    this.view = null;
    if (this.closed || view === null) return;
    // Rendered now, not when the text arrived: whatever came in meanwhile is shown in this one edit.
    // The chunker closes a code fence the draft has not closed yet, so a half-written code block
    // never swallows the rest of the message.
    const parts = this.opts.chunk(this.opts.render(view.kind === "status" ? statusLine(view.status) : this.draft));
    if (!parts.length) return;
    this.lastShown = Date.now();
    this.busy = true;
    this.chain = this.chain
      .then(() => this.show(parts))
      .finally(() => {
        this.busy = false;
        if (this.view) this.schedule();
      });
  }

  /** Brings the working messages to `parts`: edits the ones that changed, posts the new ones. */
  private async show(parts: readonly string[]): Promise<void> {
    try {
      for (const [i, text] of parts.entries()) {
        const working = this.shown[i];
        if (!working) {
          this.shown.push({ id: await this.target.send(text), text });
        } else if (working.text !== text && this.target.edit) {
          await this.target.edit(working.id, text);
          working.text = text;
        }
      }
    } catch (err) {
      // A status line or draft is a courtesy: the answer still goes out without it.
      this.opts.log.warn({ channel: this.target.channelId, err: errText(err) }, "could not show the working status");
    }
  }

  private async replace(working: Working, text: string): Promise<string> {
    if (working.text === text || !this.target.edit) return working.id;
    try {
      await this.target.edit(working.id, text);
      working.text = text;
      return working.id;
    } catch (err) {
      this.opts.log.warn({ channel: this.target.channelId, placeholder: working.id, err: errText(err) }, "could not replace the working message; posting the answer anew");
      return this.target.send(text);
    }
  }

  /** Deletes working messages the answer does not need; returns those that stay (delete refused or impossible). */
  private async discard(extra: readonly Working[]): Promise<string[]> {
    const kept: string[] = [];
    for (const working of extra) {
      if (this.deleted.has(working.id)) continue;
      try {
        if (!this.target.remove) throw new Error("the platform cannot delete messages");
        await this.target.remove(working.id);
        this.deleted.add(working.id);
      } catch (err) {
        this.opts.log.warn({ channel: this.target.channelId, id: working.id, err: errText(err) }, "could not delete a working message");
        kept.push(working.id);
      }
    }
    return kept;
  }
}
