/**
 * One answer in the terminal: statuses on their own lines while tools run, then the answer,
 * printed a line at a time as the model completes each line (rendered as the whole answer so far,
 * so a code block or list keeps its shape), and whatever is left at the end.
 */
import { randomUUID } from "node:crypto";
import type { ReplySurface, Shown } from "../../ground/adapter.ts";

export const ANSWER_PREFIX = "cairn> ";

export class TerminalReply implements ReplySurface {
  private draft = "";
  /** Rendered lines of the draft already printed. */
  private printed = 0;

  /** `write` takes whole lines of this answer (console.ts says which question it answers, when late). */
  constructor(
    private readonly write: (text: string) => void,
    private readonly render: (markdown: string) => string,
  ) {}

  progress(status: string): void {
    if (this.printed === 0) this.write(`  … ${status}\n`);
  }

  text(delta: string): void {
    this.draft += delta;
    const complete = this.draft.slice(0, this.draft.lastIndexOf("\n") + 1);
    if (complete) this.printLines(this.render(complete).split("\n"), false);
  }

  reset(): void {
    // A preamble already printed stays: it was true when written ("let me check the runbook").
    this.draft = "";
    this.printed = 0;
  }

  async cancel(): Promise<void> {}

  async finish(markdown: string): Promise<Shown> {
    if (this.printed > 0 && !markdown.startsWith(this.draft.slice(0, this.draft.lastIndexOf("\n") + 1))) {
      // The answer is not what was streamed (it broke off, or an apology replaced it): start afresh.
      this.write("\n");
      this.printed = 0;
    }
    this.printLines(this.render(markdown).split("\n"), true);
    return { posted: [`console-${randomUUID()}`], failed: false };
  }

  private printLines(lines: readonly string[], all: boolean): void {
    // While streaming, the last rendered line may still change: it is printed once complete.
    const upTo = all ? lines.length : Math.max(this.printed, lines.length - 1);
    let text = "";
    for (let i = this.printed; i < upTo; i++) text += `${i === 0 ? ANSWER_PREFIX : ""}${lines[i]}\n`;
    this.printed = upTo;
    if (text) this.write(text);
  }
}
