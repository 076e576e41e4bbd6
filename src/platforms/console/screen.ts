/**
 * The terminal chat's screen: output scrolls above a live area at the bottom, which holds the
 * "thinking…" line (while a sent message has no answer yet) and readline's prompt with whatever
 * the person is typing. The person can type the next message while cairn answers; an answer's
 * lines never land in the middle of their half-typed line.
 *
 * Printing erases the live area (cursor up to its first row, `\r`, clear to the end of the
 * screen), writes, and draws it again: the indicator line, then the prompt through readline's own
 * refresh (`prompt(true)` keeps the line and the cursor). Readline moves up by the rows it last
 * drew before redrawing, so the same number of newlines is written first for it to climb.
 */
import type { Interface } from "node:readline";

const THINKING = "  thinking…";

export class Screen {
  /** The live area is on the screen. */
  private live = false;
  /** The indicator line is drawn above the prompt. */
  private indicator = false;
  private thinking = false;
  private closed = false;

  /** `columns`: the terminal's width now (Infinity when unknown). */
  constructor(
    private readonly rl: Interface,
    private readonly write: (text: string) => void,
    private readonly color: boolean,
    private readonly columns: () => number,
  ) {}

  /** Draws the prompt for the first time. */
  start(): void {
    this.draw();
  }

  /**
   * Readline has printed the sent line and moved to a new one: nothing of the live area is left on
   * the screen. `thinking`: the line was a message, waiting for its answer.
   */
  submitted(line: string, thinking: boolean): void {
    this.lineSent(line);
    this.thinking = thinking;
    this.draw();
  }

  /**
   * Readline has printed the sent `line` and moved below it: the prompt is gone from the live area,
   * but a thinking line above it would stay in the scrollback. It is cleared from there down, and
   * the sent line printed again in its place.
   */
  lineSent(line: string): void {
    if (this.live && this.indicator) {
      const text = `${this.rl.getPrompt()}${line}`;
      const rows = Math.floor(Math.max(text.length - 1, 0) / this.columns()) + 1;
      this.write(`\u001b[${rows + 1}A\r\u001b[J${text}\n`);
    }
    this.live = false;
    this.indicator = false;
  }

  /** Prints `text` (whole lines) above the live area; `thinking` says whether the indicator stays. */
  print(text: string, thinking = this.thinking): void {
    this.erase();
    this.thinking = thinking;
    this.write(text);
    this.draw();
  }

  setThinking(on: boolean): void {
    if (on === this.thinking) return;
    this.erase();
    this.thinking = on;
    this.draw();
  }

  /** The chat is ending: the live area goes, and output is written as it comes. */
  close(): void {
    this.erase();
    this.closed = true;
  }

  private erase(): void {
    if (!this.live) return;
    const up = this.rl.getCursorPos().rows + (this.indicator ? 1 : 0);
    this.write(`${up ? `\u001b[${up}A` : ""}\r\u001b[J`);
    this.live = false;
    this.indicator = false;
  }

  private draw(): void {
    if (this.live || this.closed) return;
    if (this.thinking) {
      this.write(`${this.color ? `\u001b[2m${THINKING}\u001b[22m` : THINKING}\n`);
      this.indicator = true;
    }
    const rows = this.rl.getCursorPos().rows;
    if (rows) this.write("\n".repeat(rows));
    this.rl.prompt(true);
    this.live = true;
  }
}
