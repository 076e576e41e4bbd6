/**
 * Splits a mrkdwn reply into messages under Slack's limit. Slack truncates or rejects long `text`
 * (it advises under 4,000 characters), so a long answer goes out as several thread messages.
 *
 * A code fence is never left open: a chunk that ends inside one closes it, and the next chunk
 * reopens it, so each message renders on its own. Breaks prefer blank lines, then line ends; a
 * single line longer than a message is cut at a space, never inside `&amp;` or `<...|...>`.
 */

export const SLACK_CHUNK_LIMIT = 3500;
const FENCE = "```";

/** How many ``` a line holds; an odd count toggles "inside a code block". */
function fenceCount(line: string): number {
  return line.split(FENCE).length - 1;
}

export function chunkMrkdwn(text: string, limit = SLACK_CHUNK_LIMIT): string[] {
  if (limit < 64) throw new Error(`chunk limit ${limit} is too small`);
  const trimmed = text.trim();
  if (!trimmed) return [];
  // Room for the "\n```" that closes a fence and the "```\n" that reopens it.
  const maxLine = limit - 2 * (FENCE.length + 1);
  const chunks: string[] = [];
  let cur: string[] = [];
  let curLen = 0;
  let inFence = false;
  /** Index in `cur` of the last blank line outside a fence: the preferred break. */
  let softBreak = -1;

  const length = (lines: string[]) => lines.reduce((n, l) => n + l.length, 0) + Math.max(0, lines.length - 1);
  const emit = (lines: string[]) => {
    const body = lines.join("\n").replace(/^\n+|\n+$/g, "");
    if (body.trim() && body.trim() !== FENCE) chunks.push(body);
  };
  const hardBreak = () => {
    if (inFence) {
      emit([...cur, FENCE]);
      cur = [FENCE];
    } else {
      emit(cur);
      cur = [];
    }
    curLen = length(cur);
    softBreak = -1;
  };

  for (const line of trimmed.split("\n").flatMap((l) => splitLongLine(l, maxLine))) {
    const toggles = fenceCount(line) % 2 === 1;
    // Inside a fence after this line, the chunk may have to end with our closing "\n```".
    const reserve = inFence !== toggles ? FENCE.length + 1 : 0;
    if (cur.length > 0 && curLen + 1 + line.length + reserve > limit) {
      if (softBreak > 0 && length(cur.slice(0, softBreak)) >= limit / 2) {
        emit(cur.slice(0, softBreak));
        cur = cur.slice(softBreak + 1);
        curLen = length(cur);
        softBreak = -1;
      }
      if (cur.length > 0 && curLen + 1 + line.length + reserve > limit) hardBreak();
    }
    if (!inFence && line.trim() === "" && cur.length > 0) softBreak = cur.length;
    cur.push(line);
    curLen = length(cur);
    if (toggles) inFence = !inFence;
  }
  if (inFence) cur.push(FENCE);
  emit(cur);
  return chunks;
}

/** Cuts a line longer than `max` at spaces where it can; never inside an entity or a `<...>` sequence. */
export function splitLongLine(line: string, max: number): string[] {
  const parts: string[] = [];
  let rest = line;
  while (rest.length > max) {
    let cut = rest.lastIndexOf(" ", max);
    if (cut < max / 2) cut = max;
    const head = rest.slice(0, cut);
    const amp = head.lastIndexOf("&");
    if (amp > 0 && !head.slice(amp).includes(";") && cut - amp < 8) cut = amp;
    const open = head.lastIndexOf("<");
    if (open > 0 && !head.slice(open).includes(">")) cut = open;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  parts.push(rest);
  return parts;
}
