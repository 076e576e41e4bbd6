/**
 * Splits a rendered reply into platform messages (Slack mrkdwn, Discord markdown: both fence code
 * with ```), by the adapter's limits.
 *
 * Invariants (each part, whatever the input):
 * - at most `maxChars` characters (platforms refuse or truncate longer messages);
 * - every code fence it opens is closed: a block cut across parts is closed at the end of one part
 *   and reopened, with its language, at the start of the next, so highlighting and monospace survive;
 * - nothing is lost: joining the parts (less the added fence lines) gives back the text, less
 *   whitespace at the cuts.
 *
 * Preferences (where the text allows):
 * - at most `maxLines` lines, where the adapter sets a cap (Discord: a message taller than a screen
 *   has to be scrolled back to find its start, and each part arrives as a notification);
 * - cut between blocks (a blank line, before a code block opens, after one closes, before a list
 *   item or heading) rather than mid-paragraph, as long as the part stays at least half full;
 * - a line too long for one message is cut at whitespace outside inline spans (`code`, **bold**,
 *   __underline__, ~~strike~~, ||spoiler||, [links](url), Slack's <url|label> and &amp; entities),
 *   so their markers stay paired and no link or entity is broken.
 */

export interface ChunkOptions {
  maxChars: number;
  /** Infinity: no cap on lines. */
  maxLines: number;
}

interface Fence {
  indent: string;
  /** The run of backticks or tildes that opened it; a closer needs at least as many of the same. */
  marker: string;
  /** The line that reopens the block in a later part: indent, marker and language. */
  reopen: string;
}

type LineKind = "text" | "open" | "close" | "code";

interface Line {
  text: string;
  kind: LineKind;
  /** The fence open before this line / after it (null outside code blocks). */
  before: Fence | null;
  after: Fence | null;
  /** What joins this line to the previous one within a part: a newline, or the whitespace where an over-long line was cut. */
  glue: string;
}

const FENCE_LINE = /^( {0,3})(`{3,}|~{3,})(.*)$/;

function openingFence(line: string): Fence | null {
  const m = FENCE_LINE.exec(line);
  if (!m) return null;
  const indent = m[1] ?? "";
  const marker = m[2] ?? "```";
  const info = (m[3] ?? "").trim();
  // CommonMark: a backtick fence's info string cannot contain backticks (that is inline code).
  if (marker.startsWith("`") && info.includes("`")) return null;
  // Only the language word is carried over: a long info string would eat the next part's budget.
  const lang = (info.split(/\s+/)[0] ?? "").slice(0, 32);
  return { indent, marker, reopen: `${indent}${marker}${lang}` };
}

function closesFence(line: string, fence: Fence): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  const run = m?.[1];
  return run !== undefined && run[0] === fence.marker[0] && run.length >= fence.marker.length;
}

function closer(fence: Fence): string {
  return `${fence.indent}${fence.marker}`;
}

/** Classifies every line and tracks which code fence is open around it. */
function scan(text: string): Line[] {
  const out: Line[] = [];
  let open: Fence | null = null;
  for (const raw of text.split("\n")) {
    if (open) {
      if (closesFence(raw, open)) {
        out.push({ text: raw.trimEnd(), kind: "close", before: open, after: null, glue: "\n" });
        open = null;
      } else {
        out.push({ text: raw, kind: "code", before: open, after: open, glue: "\n" });
      }
      continue;
    }
    const fence = openingFence(raw);
    if (fence) {
      out.push({ text: raw.trimEnd(), kind: "open", before: null, after: fence, glue: "\n" });
      open = fence;
    } else {
      out.push({ text: raw, kind: "text", before: null, after: null, glue: "\n" });
    }
  }
  return out;
}

/** Index ranges [start, end) of inline markdown spans a cut should not fall inside. */
function inlineSpans(line: string): [number, number][] {
  const spans: [number, number][] = [];
  const patterns = [
    /(`+)[^`][\s\S]*?\1(?!`)/g, // inline code, any backtick run length
    /\[[^\]\n]*\]\([^)\s]*\)/g, // [masked](links)
    /\|\|[\s\S]+?\|\|/g, // ||spoilers||
    /\*\*[\s\S]+?\*\*/g, // **bold**
    /__[\s\S]+?__/g, // __underline__
    /~~[\s\S]+?~~/g, // ~~strike~~
    /<[^<>\s][^<>]*>/g, // <https://link|label>, <@U123> (Slack, Discord)
    /&[a-z]+;/g, // &amp; (Slack's escaped text)
  ];
  for (const re of patterns) {
    for (const m of line.matchAll(re)) spans.push([m.index, m.index + m[0].length]);
  }
  return spans;
}

/** Never cut between the two halves of a surrogate pair (an emoji would turn into two U+FFFD). */
function safeCut(s: string, at: number): number {
  const code = s.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * Cuts one line into pieces of at most `budget` characters. Text lines are cut at whitespace outside
 * inline spans where possible; code lines at whitespace late in the piece, else exactly at the budget.
 */
function splitLongLine(line: Line, budget: number): Line[] {
  const pieces: Line[] = [];
  let rest = line.text;
  let glue = line.glue;
  while (rest.length > budget) {
    let cut = -1;
    const spans = line.kind === "text" ? inlineSpans(rest) : [];
    const inSpan = (i: number) => spans.some(([s, e]) => i > s && i < e - 1);
    // Whitespace positions that leave a first piece within budget, latest first.
    const minGood = line.kind === "text" ? Math.floor(budget / 4) : Math.floor((budget * 3) / 4);
    for (let i = budget; i > 0; i--) {
      if (!/\s/.test(rest[i] ?? "")) continue;
      if (i >= minGood && !inSpan(i)) {
        cut = i;
        break;
      }
    }
    if (cut === -1 && line.kind === "text") {
      for (let i = budget; i > 0; i--) {
        if (/\s/.test(rest[i] ?? "")) {
          cut = i;
          break;
        }
      }
    }
    if (cut > 0) {
      // The whitespace becomes the glue: kept when both pieces share a part, dropped at a cut.
      pieces.push({ ...line, text: rest.slice(0, cut), glue });
      glue = rest[cut] ?? " ";
      rest = rest.slice(cut + 1);
    } else {
      let at = safeCut(rest, budget);
      // No whitespace to cut at: still never inside a link, mention or entity that starts later.
      const span = spans.find(([s, e]) => at > s && at < e);
      if (span && span[0] > 0) at = span[0];
      pieces.push({ ...line, text: rest.slice(0, at), glue });
      glue = "";
      rest = rest.slice(at);
    }
  }
  pieces.push({ ...line, text: rest, glue });
  return pieces;
}

function isBlankText(line: Line): boolean {
  return line.kind === "text" && line.text.trim() === "";
}

interface Rendered {
  text: string;
  lines: number;
}

/** The message for lines [start, end): reopened and closed fences included. */
function render(lines: Line[], start: number, end: number): Rendered {
  let i = start;
  const first = lines[i];
  let head = "";
  // A closing line whose block the previous part already closed would open an empty block here.
  if (first?.kind === "close") i++;
  else if (first?.before) head = first.before.reopen;
  let body = "";
  for (let k = i; k < end; k++) {
    const line = lines[k]!;
    body += (k === i ? "" : line.glue) + line.text;
  }
  const last = lines[end - 1];
  const open = last && end - 1 >= i ? last.after : null;
  body = open ? body : body.trimEnd();
  const text = [head, body, open ? closer(open) : ""].filter((s, idx) => s !== "" || idx === 1).join("\n");
  const trimmed = text.trim() === "" ? "" : text;
  return { text: trimmed, lines: trimmed === "" ? 0 : trimmed.split("\n").length };
}

/** How good a cut just before line `k` is: 0 = mid-paragraph, 3 = between blocks. */
function breakScore(lines: Line[], k: number): number {
  const prev = lines[k - 1];
  const next = lines[k];
  if (!prev || !next) return 0;
  if (next.glue !== "\n") return 0; // inside a line that was cut for length
  if (isBlankText(prev) || next.kind === "open" || prev.kind === "close") return 3;
  if (next.kind === "text" && /^\s{0,3}([-*+]\s|\d+[.)]\s|#{1,3}\s|>\s)/.test(next.text)) return 2;
  if (next.kind === "code" && next.text.trim() === "") return 1;
  if (prev.kind === "text" && /[.!?:]\s*$/.test(prev.text)) return 1;
  return 0;
}

export function chunkText(input: string, opts: ChunkOptions): string[] {
  const { maxChars, maxLines } = opts;
  if (maxChars < 64) throw new Error(`maxChars must be at least 64, got ${maxChars}`);
  if (maxLines < 3) throw new Error(`maxLines must be at least 3 (a fence, a line, its closer), got ${maxLines}`);
  const text = input.replace(/\r\n?/g, "\n").replace(/\s+$/, "");
  if (text.trim() === "") return [];

  // Every line must fit a part on its own, with room for a reopened and closed fence around it.
  const lines: Line[] = [];
  for (const line of scan(text)) {
    const overhead = (line.before ? line.before.reopen.length + 1 : 0) + (line.after ? closer(line.after).length + 1 : 0);
    const budget = maxChars - overhead;
    lines.push(...(line.text.length > budget ? splitLongLine(line, budget) : [line]));
  }

  const fits = (start: number, end: number): boolean => {
    const r = render(lines, start, end);
    return r.text.length <= maxChars && r.lines <= maxLines;
  };

  const parts: string[] = [];
  let start = 0;
  while (start < lines.length) {
    while (start < lines.length && isBlankText(lines[start]!)) start++;
    if (start >= lines.length) break;
    let end = start + 1;
    while (end < lines.length && fits(start, end + 1)) end++;
    if (end < lines.length) {
      // Stopped by a limit: step back to the best block boundary that keeps the part at least half full.
      const full = render(lines, start, end).text.length;
      let best = end;
      let bestScore = breakScore(lines, end);
      for (let k = end - 1; k > start; k--) {
        const score = breakScore(lines, k);
        if (score <= bestScore) continue;
        if (render(lines, start, k).text.length * 2 < full) break;
        best = k;
        bestScore = score;
      }
      end = best;
    }
    const part = render(lines, start, end).text;
    if (part !== "") parts.push(part);
    start = end;
  }
  // Last resort for pathological input (a fence info string longer than a message): the hard
  // limit wins over markdown, since Discord would refuse the whole part.
  return parts.flatMap((part) => {
    if (part.length <= maxChars) return [part];
    const out: string[] = [];
    for (let rest = part; rest.length > 0; ) {
      const at = rest.length <= maxChars ? rest.length : safeCut(rest, maxChars);
      out.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    return out;
  });
}

/** True when every fence opened in `part` is closed in it (used by tests and as a send-time check). */
export function fencesBalanced(part: string): boolean {
  let open: Fence | null = null;
  for (const line of part.split("\n")) {
    if (open) {
      if (closesFence(line, open)) open = null;
    } else {
      open = openingFence(line);
    }
  }
  return open === null;
}
