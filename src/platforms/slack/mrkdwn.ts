/**
 * Markdown (what the model writes) to Slack mrkdwn (what Slack renders).
 *
 * Slack's dialect differs where it hurts: `*x*` is bold (Markdown's italics), links are
 * `<url|label>`, there are no headings or tables, and `&`, `<`, `>` are control characters that must
 * be escaped everywhere, code included, except in Slack's own sequences (`<@U123>`, `<#C1>`,
 * `<https://...|label>`), which the model may write on purpose to mention people. Of the special
 * `<!…>` sequences only dates are kept: the rest (`<!channel>`, `<!here>`, `<!everyone>`, the legacy
 * `<!group>`, `<!subteam^…>`, in any spelling) are escaped, so they show as text: anyone can ask
 * cairn to repeat one, and a bot must not ping a whole channel for them, unless an admin lets them
 * through (`massMentions`, from CAIRN_ALLOW_MASS_MENTIONS). For the same reason a Markdown link
 * becomes a Slack link only to a web or mail address: `[x](!here)` would otherwise be `<!here|x>`.
 */

/** Slack's own `<...>` sequences: user and channel mentions, dates, and links. Kept verbatim. */
const SLACK_SEQUENCE = /<(?:(?:[@#]|!date\^)[A-Za-z0-9^_.:{}-]+(?:\|[^<>\n]*)?|(?:https?|mailto):[^<>\s|]+(?:\|[^<>\n]*)?)>/g;
/** The same, mass mentions included. */
const SLACK_SEQUENCE_WITH_MASS = /<(?:[@#!][A-Za-z0-9^_.:{}-]+(?:\|[^<>\n]*)?|(?:https?|mailto):[^<>\s|]+(?:\|[^<>\n]*)?)>/g;

/** Link targets Slack's `<url|label>` is for; anything else in it would be a mention or a command. */
const WEB_OR_MAIL = /^(?:https?|mailto):/i;

export interface MrkdwnOptions {
  /** Keep `<!channel>`, `<!here>`, `<!everyone>`, `<!subteam^…>` (any `<!…>`) as Slack sequences (they ping). Default false. */
  massMentions?: boolean;
}

export function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Escapes `&<>` but keeps Slack's mention and link sequences: for text that is already mrkdwn-ish. */
export function escapeKeepingSequences(text: string): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(SLACK_SEQUENCE)) {
    out += escapeText(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + escapeText(text.slice(last));
}

/** A link target inside `<url|label>`: `|` and `>` would end it early. */
function escapeUrl(url: string): string {
  return url.replace(/&/g, "&amp;").replace(/</g, "%3C").replace(/>/g, "%3E").replace(/\|/g, "%7C");
}

/** Link labels are shown as plain text by Slack: formatting marks inside them would show literally. */
function plainLabel(label: string): string {
  return escapeText(label.replace(/\*\*|__|`/g, "").replace(/\|/g, "/")).trim();
}

/** Inline Markdown of one line to mrkdwn. */
export function convertInline(line: string, opts: MrkdwnOptions = {}): string {
  // Protected pieces wait in `slots` behind private-use characters, which no Markdown rule touches.
  const slots: string[] = [];
  const protect = (s: string): string => `\uE000${slots.push(s) - 1}\uE000`;

  let s = line;
  // Order matters: code spans first (nothing inside them is Markdown), then Slack's own sequences,
  // then links, before escaping what is left.
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_m, _ticks: string, code: string) => protect(`\`${escapeText(code)}\``));
  s = s.replace(/\\([\\`*_{}[\]()#+\-.!|~<>])/g, (_m, ch: string) => protect(escapeText(ch)));
  s = s.replace(opts.massMentions ? SLACK_SEQUENCE_WITH_MASS : SLACK_SEQUENCE, (m) => protect(m));
  s = s.replace(/!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (_m, alt: string, url: string) =>
    protect(WEB_OR_MAIL.test(url) ? `<${escapeUrl(url)}|${plainLabel(alt) || "image"}>` : `${plainLabel(alt) || "image"} (${escapeText(url)})`),
  );
  s = s.replace(/\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, (_m, label: string, url: string) => {
    const text = plainLabel(label);
    if (!WEB_OR_MAIL.test(url)) return protect(text && text !== escapeText(url) ? `${text} (${escapeText(url)})` : escapeText(url));
    return protect(text && text !== escapeText(url) ? `<${escapeUrl(url)}|${text}>` : `<${escapeUrl(url)}>`);
  });
  s = escapeText(s);
  // Bold is held in placeholders (private-use \uE001 ... \uE002) while single-star italics are converted, so the
  // `*` Slack uses for bold is not mistaken for Markdown italics.
  s = s.replace(/\*\*\*(?=\S)(.+?)(?<=\S)\*\*\*/g, "\uE001_$1_\uE002");
  s = s.replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, "\uE001$1\uE002");
  s = s.replace(/(^|[^\w])__(?=\S)(.+?)(?<=\S)__(?!\w)/g, "$1\uE001$2\uE002");
  s = s.replace(/(^|[^*\w])\*(?=[^\s*])([^*\n]*?[^\s*])?\*(?![*\w])/g, (_m, pre: string, body: string | undefined) => `${pre}_${body ?? ""}_`);
  s = s.replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "~$1~");
  s = s.replace(/[\uE001\uE002]/g, "*");
  // A protected piece may hold another (a Slack sequence inside a link's parentheses).
  const restore = (t: string): string => t.replace(/\uE000(\d+)\uE000/g, (_m, i: string) => restore(slots[Number(i)] ?? ""));
  return restore(s);
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^(\s*)[-*+]\s+(?:\[([ xX])\]\s+)?(.*)$/;
const ORDERED = /^(\s*)(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const BULLETS = ["•", "◦", "▪"];

/** Markdown to Slack mrkdwn. */
export function toMrkdwn(markdown: string, opts: MrkdwnOptions = {}): string {
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;

    const fence = FENCE.exec(line);
    if (fence) {
      const [, indent = "", marker = "```"] = fence;
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const l = lines[j]!;
        const close = FENCE.exec(l);
        if (close && close[2]![0] === marker[0] && close[2]!.length >= marker.length && close[3]!.trim() === "") break;
        body.push(l.startsWith(indent) ? l.slice(indent.length) : l.trimStart());
      }
      // An unclosed fence runs to the end, as in CommonMark; the output is always closed.
      out.push(codeBlock(body.map(escapeText)));
      i = j;
      continue;
    }

    if (line.includes("|") && i + 1 < lines.length && TABLE_SEPARATOR.test(lines[i + 1]!) && lines[i + 1]!.includes("-")) {
      const rows = [splitRow(line)];
      let j = i + 2;
      for (; j < lines.length && lines[j]!.includes("|") && lines[j]!.trim() !== ""; j++) rows.push(splitRow(lines[j]!));
      out.push(renderTable(rows));
      i = j - 1;
      continue;
    }

    const heading = HEADING.exec(line);
    if (heading) {
      const text = convertInline(heading[2]!.replace(/\*\*|__/g, ""), opts).trim();
      if (text) out.push(`*${text}*`);
      continue;
    }
    if (RULE.test(line)) {
      out.push("──────────");
      continue;
    }
    const bullet = BULLET.exec(line);
    if (bullet) {
      const level = Math.floor(bullet[1]!.replace(/\t/g, "    ").length / 2);
      const task = bullet[2] === undefined ? "" : bullet[2] === " " ? "☐ " : "☑ ";
      out.push(`${"    ".repeat(level)}${BULLETS[Math.min(level, BULLETS.length - 1)]} ${task}${convertInline(bullet[3]!, opts)}`);
      continue;
    }
    const ordered = ORDERED.exec(line);
    if (ordered) {
      const level = Math.floor(ordered[1]!.replace(/\t/g, "    ").length / 2);
      out.push(`${"    ".repeat(level)}${ordered[2]}. ${convertInline(ordered[3]!, opts)}`);
      continue;
    }
    const quote = QUOTE.exec(line);
    if (quote) {
      // The `>` stays a quote marker; everything after it is escaped like any text.
      out.push(`> ${convertInline(quote[1]!, opts)}`.trimEnd());
      continue;
    }
    out.push(convertInline(line.trimEnd(), opts));
  }
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function codeBlock(lines: string[]): string {
  return ["```", ...lines, "```"].join("\n");
}

function splitRow(line: string): string[] {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, "|"));
}

/** Slack has no tables: a table becomes aligned columns in a code block, which keeps it readable. */
function renderTable(rows: string[][]): string {
  const cells = rows.map((r) => r.map(plainCell));
  const cols = Math.max(...cells.map((r) => r.length));
  const widths = Array.from({ length: cols }, (_, c) => Math.max(...cells.map((r) => [...(r[c] ?? "")].length)));
  const render = (r: string[]) => widths.map((w, c) => (r[c] ?? "").padEnd(w + ((r[c] ?? "").length - [...(r[c] ?? "")].length))).join(" | ").trimEnd();
  const [head = [], ...body] = cells;
  const lines = [render(head), widths.map((w) => "-".repeat(w)).join("-+-"), ...body.map(render)];
  return codeBlock(lines.map(escapeText));
}

/** Inside a code block nothing renders, so Markdown marks in cells are dropped and links spelled out. */
function plainCell(cell: string): string {
  return cell
    .replace(/\[([^\]]+)\]\(([^)\s]+)[^)]*\)/g, "$1 ($2)")
    .replace(/\*\*|__|`/g, "")
    .replace(/(^|\W)[*_](\S(?:.*?\S)?)[*_](?=\W|$)/g, "$1$2");
}
