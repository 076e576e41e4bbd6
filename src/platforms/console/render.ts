/**
 * Markdown (cairn's one text format) as terminal text, for the console: no raw markup left, with
 * ANSI styles when the terminal takes them and plain text when it does not.
 *
 * Line by line, as the model writes: headings, code fences (an unclosed one, a draft cut mid-block,
 * runs to the end), blockquotes (their content rendered as blocks of their own), rules, bullet and
 * numbered lists; inside a line, code spans, backslash escapes, links, then emphasis. Nothing inside
 * code is interpreted. Control characters in the input are dropped, so a reply cannot send its own
 * escape sequences to the terminal. HTML entities are plain text, as Markdown input.
 */

export interface TerminalOptions {
  /** ANSI styles (bold, italic, colors); without, the output holds no escape sequence at all. */
  color: boolean;
  /** The terminal's columns: how long a horizontal rule is (default 40). */
  width?: number;
}

const SGR = { bold: [1, 22], italic: [3, 23], strike: [9, 29], code: [36, 39], underline: [4, 24], dim: [2, 22] } as const;
type Style = keyof typeof SGR;
const STYLE_NAMES = Object.keys(SGR) as Style[];

// Inline styles wait in the text as noncharacters (U+FDD1..), which Unicode keeps for internal use
// and no Markdown rule touches; U+FDD0 wraps the index of a piece kept verbatim (code, a URL).
const SLOT = "\uFDD0";
const SLOTS = /\uFDD0(\d+)\uFDD0/g;
const MARKERS = /[\uFDD1-\uFDDC]/g;
const marker = (style: Style, end: 0 | 1): string => String.fromCharCode(0xfdd1 + STYLE_NAMES.indexOf(style) * 2 + end);
const mark = (style: Style, text: string): string => marker(style, 0) + text + marker(style, 1);
const STRUCK = new RegExp(`${marker("strike", 0)}(.*?)${marker("strike", 1)}`, "g");
// C0 and C1 controls but tab and newline (ESC among them), and the noncharacters used above.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\uFDD0-\uFDEF]/g;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** Removes the SGR sequences this module writes. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

function paint(opts: TerminalOptions, style: Style, text: string): string {
  return opts.color && text ? `\u001b[${SGR[style][0]}m${text}\u001b[${SGR[style][1]}m` : text;
}

// A code span or a backslash escape, whichever comes first: left to right, an escaped backtick opens
// no span and a backslash inside a span escapes nothing.
const CODE_OR_ESCAPE = /\\([!-/:-@[-`{-~])|(`+)([^`]|[^`][\s\S]*?[^`])\2(?!`)/g;
const AUTOLINK = /<([a-z][a-z0-9+.-]{1,31}:[^<>\s]+)>/gi;
const LINK = /(!?)\[([^[\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s]*\))+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const BARE_URL = /\b(?:https?|ftp):\/\/[^\s<>]+/g;
// Paired marks look at most 1,000 characters ahead for their closer: a line of unclosed `**` costs
// its length times that, not its length squared.
const EMPHASIS: [RegExp, (body: string) => string][] = [
  [/\*\*\*(?=\S)(.{1,1000}?)(?<=\S)\*\*\*/g, (b) => mark("bold", mark("italic", b))],
  [/\*\*(?=\S)(.{1,1000}?)(?<=\S)\*\*/g, (b) => mark("bold", b)],
  [/(?<![\w\\])__(?=\S)(.{1,1000}?)(?<=\S)__(?!\w)/g, (b) => mark("bold", b)],
  // Single marks need a non-word character outside: 2*3*4 and snake_case_words stay as they are.
  [/(?<![\w*])\*([^\s*](?:[^*]*?[^\s*])?)\*(?![\w*])/g, (b) => mark("italic", b)],
  [/(?<![\w_])_([^\s_](?:[^_]*?[^\s_])?)_(?![\w_])/g, (b) => mark("italic", b)],
  [/~~(?=\S)(.{1,1000}?)(?<=\S)~~/g, (b) => mark("strike", b)],
];

/**
 * One line of text. In a heading (already bold) inner bold adds nothing; without color a level 1-2
 * heading is upper-cased, its code and URLs left as written.
 */
function inline(text: string, opts: TerminalOptions, heading = 0): string {
  const slots: string[] = [];
  const keep = (s: string): string => `${SLOT}${slots.push(s) - 1}${SLOT}`;
  let s = text.replace(CODE_OR_ESCAPE, (_m, escaped: string | undefined, _ticks: string, code: string) => {
    if (escaped !== undefined) return keep(escaped);
    // CommonMark drops one space on each side (so a span can start or end with a backtick).
    return keep(mark("code", /^ [\s\S]*[^ ][\s\S]* $/.test(code) ? code.slice(1, -1) : code));
  });
  s = s.replace(AUTOLINK, (_m, url: string) => keep(url));
  s = s.replace(LINK, (_m, _image: string, label: string, url: string) =>
    label.trim() === "" || label === url ? keep(url) : `${label} ${keep(`(${url})`)}`,
  );
  s = s.replace(BARE_URL, (url) => keep(url));
  for (const [re, render] of EMPHASIS) s = s.replace(re, (_m, body: string) => render(body));
  if (heading > 0 && heading <= 2 && !opts.color) s = s.toUpperCase();
  const restore = (t: string): string => t.replace(SLOTS, (_m, i: string) => restore(slots[Number(i)] ?? ""));
  s = restore(s);
  // Without color struck text keeps its meaning with a combining long stroke over each character.
  if (!opts.color) s = s.replace(STRUCK, (_m, t: string) => t.replace(/[^\uFDD1-\uFDDC]/gu, "$&\u0336"));
  return s.replace(MARKERS, (m) => {
    const n = m.charCodeAt(0) - 0xfdd1;
    const style = STYLE_NAMES[n >> 1]!;
    return !opts.color || (heading > 0 && style === "bold") ? "" : `\u001b[${SGR[style][n & 1]}m`;
  });
}

const FENCE = /^([ \t]*)(`{3,}|~{3,})(.*)$/;
const CLOSING_FENCE = /^[ \t]*(`{3,}|~{3,})[ \t]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^([ \t]*)[-*+][ \t]+(?:\[([ xX])\][ \t]+)?(.*)$/;
const ORDERED = /^([ \t]*)(\d{1,9}[.)])[ \t]+(.*)$/;

/** Quotes deeper than this stay text: a line of 10,000 `>` must not recurse 10,000 times. */
const MAX_QUOTE_DEPTH = 8;

function blocks(lines: string[], opts: TerminalOptions, depth = 0): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;

    const fence = FENCE.exec(line);
    // A backtick fence's info string holds no backtick: ```x``` is a code span.
    if (fence && !(fence[2]!.startsWith("`") && fence[3]!.includes("`"))) {
      const [, indent = "", opener = "```", info = ""] = fence;
      const lang = info.trim().split(/\s+/)[0];
      if (lang) out.push(`${indent}  ${paint(opts, "dim", `[${lang}]`)}`);
      let j = i + 1;
      for (; j < lines.length; j++) {
        const closer = CLOSING_FENCE.exec(lines[j]!)?.[1];
        if (closer && closer[0] === opener[0] && closer.length >= opener.length) break;
        const code = lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart();
        out.push(code ? `${indent}    ${paint(opts, "code", code)}` : "");
      }
      i = j;
      continue;
    }

    if (depth < MAX_QUOTE_DEPTH && QUOTE.test(line)) {
      const inner: string[] = [];
      for (let m; i < lines.length && (m = QUOTE.exec(lines[i]!)); i++) inner.push(m[1]!);
      i--;
      for (const l of blocks(inner, opts, depth + 1)) out.push(`${paint(opts, "dim", "│")} ${l}`.trimEnd());
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      const text = inline(heading[2] ?? "", opts, level);
      out.push(level <= 2 ? paint(opts, "bold", paint(opts, "underline", text)) : paint(opts, "bold", text));
      continue;
    }
    if (RULE.test(line)) {
      out.push(paint(opts, "dim", "─".repeat(Math.max(3, Math.min(Math.floor(opts.width ?? 40), 500)) || 40)));
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet) {
      const task = bullet[2] === undefined ? "" : bullet[2] === " " ? "☐ " : "☑ ";
      out.push(`${bullet[1]}• ${task}${inline(bullet[3]!.trimEnd(), opts)}`);
      continue;
    }
    const ordered = ORDERED.exec(line);
    if (ordered) {
      out.push(`${ordered[1]}${ordered[2]} ${inline(ordered[3]!.trimEnd(), opts)}`);
      continue;
    }
    out.push(inline(line.trimEnd(), opts));
  }
  return out;
}

/** Markdown as terminal text: styled with ANSI when `color`, plain text otherwise. */
export function renderTerminal(markdown: string, opts: TerminalOptions): string {
  const lines = markdown.replace(/\r\n?/g, "\n").replace(UNSAFE, "").split("\n");
  return blocks(lines, opts).join("\n").replace(/^\n+/, "").trimEnd();
}
