/**
 * Bracketed paste for the terminal chat. With `ESC[?2004h` the terminal wraps whatever is pasted in
 * `ESC[200~` … `ESC[201~`. Readline alone would take each pasted newline as Enter (a 4-line runbook
 * after `/learn ` would be one command and three chat turns), so this Transform sits between stdin
 * and readline: keystrokes pass through untouched, and a paste is held here whole (any length,
 * newlines kept) while readline gets a short placeholder (`[paste #1: 4 lines]`) to edit around.
 * `expand` puts the pasted text back when the line is sent. A short one-line paste is just typed.
 */
import { StringDecoder } from "node:string_decoder";
import { Transform, type TransformCallback } from "node:stream";

export const PASTE_ON = "\u001b[?2004h";
export const PASTE_OFF = "\u001b[?2004l";
const START = "\u001b[200~";
const END = "\u001b[201~";
/** A paste up to this long, on one line, is typed into the line as it is. */
const INLINE_MAX = 200;
/** Pastes kept for lines recalled from history; the oldest go first. */
const KEPT = 50;
const PLACEHOLDER = /\[paste #(\d+): [^\]\n]*\]/g;
// Control characters (ESC among them) a paste must not turn into keystrokes.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** The terminal under the reader: raw mode is readline's to set, and it is passed on (see setRawMode). */
export interface RawTerminal {
  setRawMode(mode: boolean): unknown;
}

export class PasteReader extends Transform {
  private readonly decoder = new StringDecoder("utf8");
  /** The paste being read, or null between pastes. */
  private pasting: string | null = null;
  /** The end of a chunk that may be the start of a marker: read with the next chunk. */
  private held = "";
  private readonly pastes = new Map<number, string>();
  private count = 0;
  isRaw = false;

  /** `bracketed`: told when the terminal should start (true) or stop wrapping pastes. */
  constructor(
    private readonly terminal: RawTerminal | null,
    private readonly bracketed: (on: boolean) => void,
  ) {
    super();
  }

  /**
   * Readline sets raw mode on its input: at start, off at close and around Ctrl-Z. Bracketed paste
   * follows it, so it is on exactly while this reader has the terminal.
   */
  setRawMode(mode: boolean): this {
    this.terminal?.setRawMode(mode);
    if (mode !== this.isRaw) this.bracketed(mode);
    this.isRaw = mode;
    return this;
  }

  /** A sent line with its placeholders replaced by what was pasted. */
  expand(line: string): string {
    return line.replace(PLACEHOLDER, (m, n: string) => this.pastes.get(Number(n)) ?? m);
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, done: TransformCallback): void {
    let s = this.held + (typeof chunk === "string" ? chunk : this.decoder.write(chunk));
    this.held = "";
    let out = "";
    while (s) {
      const marker = this.pasting === null ? START : END;
      const at = s.indexOf(marker);
      const upTo = at < 0 ? s.length - partialMarker(s, marker) : at;
      if (this.pasting === null) out += s.slice(0, upTo);
      else this.pasting += s.slice(0, upTo);
      if (at < 0) {
        this.held = s.slice(upTo);
        break;
      }
      s = s.slice(at + marker.length);
      if (this.pasting === null) this.pasting = "";
      else {
        out += this.keep(this.pasting);
        this.pasting = null;
      }
    }
    if (out) this.push(out);
    done();
  }

  override _flush(done: TransformCallback): void {
    // The input ended: a cut marker was only text after all; an unfinished paste is dropped.
    if (this.pasting === null && this.held) this.push(this.held);
    done();
  }

  /** What readline gets for a paste: its text when short and on one line, else a placeholder. */
  private keep(raw: string): string {
    // Terminals send a pasted newline as CR.
    const text = raw.replace(/\r\n?/g, "\n");
    if (!text.includes("\n") && text.length <= INLINE_MAX) return text.replace(CONTROLS, "");
    const n = ++this.count;
    this.pastes.set(n, text);
    this.pastes.delete(n - KEPT);
    const lines = text.split("\n").length;
    return lines > 1 ? `[paste #${n}: ${lines} lines]` : `[paste #${n}: ${text.length.toLocaleString("en-US")} chars]`;
  }
}

/** How many characters at the end of `s` begin `marker` (0 when none): a marker cut by a chunk's end. */
function partialMarker(s: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, s.length); n > 0; n--) if (marker.startsWith(s.slice(-n))) return n;
  return 0;
}
