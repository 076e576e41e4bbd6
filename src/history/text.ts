/**
 * Text analysis shared by history search and its ranking: words, stop words, Porter stems, CJK
 * n-grams and snippets. Pure functions, no database: the same analysis serves SQLite and PostgreSQL,
 * so both rank the same candidates the same way.
 */
import { stemmer } from "stemmer";
import { baseForm } from "./irregular.ts";

/**
 * English stop words (NLTK's list): words that carry no topic. Stemming and IDF would mostly cope,
 * but dropping them keeps the database queries small and stops "what/did/you" from pulling in
 * half a conversation as candidates.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself " +
    "they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having " +
    "do does did doing a an the and but if or because as until while of at by for with about against between into through during before " +
    "after above below to from up down in out on off over under again further then once here there when where why how all any both each " +
    "few more most other some such no nor not only own same so than too very s t can will just don should now"
  ).split(" "),
);

/** Han, Hiragana, Katakana, Hangul and CJK compatibility: scripts written without spaces between words. */
const CJK_CHAR = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f]/u;
export const CJK_RUNS = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u31f0-\u31ff\uff66-\uff9f]+/gu;
/** Letters and digits, so no full-text query syntax ever reaches the database. */
const WORD = /[\p{L}\p{N}]+/gu;

export function hasCjk(text: string): boolean {
  return CJK_CHAR.test(text);
}

/** Lower case, compatibility forms folded, accents removed (what FTS5's remove_diacritics does). */
export function fold(text: string): string {
  // Plain ASCII letters and digits (most words) need no Unicode normalization, which is slow.
  if (/^[A-Za-z0-9]*$/.test(text)) return text.toLowerCase();
  return text.normalize("NFKD").replace(/\p{M}+/gu, "").normalize("NFKC").toLowerCase();
}

const stemCache = new Map<string, string>();

/** Porter stem of a folded word, memoized: chat reuses a small vocabulary, stemming is regex-heavy. */
export function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = stemmer(baseForm(word));
    if (stemCache.size > 50_000) stemCache.clear();
    stemCache.set(word, s);
  }
  return s;
}

export interface Token {
  /** The word as written (for snippets). */
  surface: string;
  /** Folded surface: what the database's full-text query gets. */
  word: string;
  /** The ranking key: Porter stem, or the n-gram itself for CJK. */
  key: string;
  start: number;
  end: number;
  cjk: boolean;
}

/**
 * Words of `text` with offsets. A CJK run becomes its overlapping character bigrams (or the lone
 * character): with no spaces to find word boundaries, bigrams are the unit that matches most
 * Chinese and Japanese words without a dictionary.
 */
export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(WORD)) {
    const surface = m[0];
    const base = m.index;
    if (!CJK_CHAR.test(surface)) {
      latin(surface, base, out);
      continue;
    }
    let last = 0;
    for (const run of surface.matchAll(CJK_RUNS)) {
      if (run.index > last) latin(surface.slice(last, run.index), base + last, out);
      const chars = [...run[0]];
      let offset = base + run.index;
      if (chars.length === 1) {
        out.push({ surface: run[0], word: run[0], key: run[0], start: offset, end: offset + run[0].length, cjk: true });
      }
      for (let i = 0; i + 1 < chars.length; i++) {
        const gram = chars[i]! + chars[i + 1]!;
        out.push({ surface: gram, word: gram, key: gram, start: offset, end: offset + gram.length, cjk: true });
        offset += chars[i]!.length;
      }
      last = run.index + run[0].length;
    }
    if (last < surface.length) latin(surface.slice(last), base + last, out);
  }
  return out;
}

function latin(surface: string, start: number, out: Token[]): void {
  const word = fold(surface);
  if (!word) return;
  out.push({ surface, word, key: stem(word), start, end: start + surface.length, cjk: false });
}

const keysCache = new Map<string, string[]>();
const KEYS_CACHE_SIZE = 20_000;

/**
 * Ranking keys of a stored message: stop words out (as in queries), everything else kept.
 * Memoized by text: the same messages come back as candidates search after search, and analysing
 * a few hundred of them is most of a search's own CPU time.
 */
export function docKeys(text: string): string[] {
  let keys = keysCache.get(text);
  if (keys) return keys;
  keys = [];
  for (const t of tokenize(text)) if (t.cjk || !STOP_WORDS.has(t.word)) keys.push(t.key);
  // Oldest out first (Map keeps insertion order).
  if (keysCache.size >= KEYS_CACHE_SIZE) keysCache.delete(keysCache.keys().next().value!);
  keysCache.set(text, keys);
  return keys;
}

/** Word offsets of the text being made into a snippet: reused buffers, grown when a text needs more. */
let starts = new Int32Array(512);
let ends = new Int32Array(512);
let hits = new Uint8Array(512);
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/uy;
/** First characters (lower-case ASCII) of the keys being highlighted; see scanWords. */
const firsts = new Uint8Array(128);

function wordCharAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0x80) return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? 1 : 0;
  LETTER_OR_DIGIT.lastIndex = i;
  if (!LETTER_OR_DIGIT.test(text)) return 0;
  return c >= 0xd800 && c <= 0xdbff ? 2 : 1;
}

function room(n: number): void {
  if (n <= starts.length) return;
  const size = Math.max(n, starts.length * 2);
  starts = new Int32Array(size);
  ends = new Int32Array(size);
  hits = new Uint8Array(size);
}

/**
 * Fills starts/ends/hits with the words of `text` (as tokenize() finds them) and returns how many.
 * Text without CJK is scanned in place: tokenize() makes a match and a token object per word, and
 * the snippets of a search's results were a large share of what a search allocated.
 */
function scanWords(text: string, keys: ReadonlySet<string>): number {
  if (hasCjk(text)) {
    const tokens = tokenize(text);
    room(tokens.length);
    tokens.forEach((t, i) => {
      starts[i] = t.start;
      ends[i] = t.end;
      hits[i] = keys.has(t.key) ? 1 : 0;
    });
    return tokens.length;
  }
  // A Porter stem keeps its word's first character, so a word starting with an ASCII character no
  // key starts with cannot match: it needs no folding or stemming (most words of a snippet).
  firsts.fill(0);
  for (const k of keys) {
    const c = k.charCodeAt(0);
    if (c < 128) firsts[c] = 1;
  }
  let count = 0;
  let i = 0;
  while (i < text.length) {
    let w = wordCharAt(text, i);
    if (w === 0) {
      i += text.charCodeAt(i) >= 0xd800 && text.charCodeAt(i) <= 0xdbff ? 2 : 1;
      continue;
    }
    const start = i;
    while (w > 0) {
      i += w;
      w = i < text.length ? wordCharAt(text, i) : 0;
    }
    let c = text.charCodeAt(start);
    if (c >= 65 && c <= 90) c += 32;
    let hit = 0;
    if (c >= 128 || firsts[c]) {
      const word = fold(text.slice(start, i));
      if (!word) continue;
      hit = keys.has(stem(word)) ? 1 : 0;
    }
    room(count + 1);
    starts[count] = start;
    ends[count] = i;
    hits[count] = hit;
    count++;
  }
  return count;
}

/**
 * A short excerpt around the densest run of matched words, matches wrapped in «», cut ends marked
 * with …, like FTS5's snippet(). Made here rather than by each database so both read the same.
 */
export function makeSnippet(text: string, keys: ReadonlySet<string>, maxTokens = 24): string {
  const count = scanWords(text, keys);
  if (count === 0) return text.slice(0, 200);
  let bestStart = 0;
  let best = -1;
  for (let i = 0; i < count; i++) {
    if (!hits[i] && i !== 0) continue;
    let n = 0;
    for (let j = i; j < Math.min(count, i + maxTokens); j++) if (hits[j]) n++;
    if (n > best) {
      best = n;
      bestStart = i;
    }
  }
  // Start a few words before the first match so it reads in context.
  const from = Math.max(0, Math.min(bestStart - 3, count - maxTokens));
  const to = Math.min(count, from + maxTokens);
  const startChar = from === 0 ? 0 : starts[from]!;
  const endChar = to === count ? text.length : ends[to - 1]!;
  // Matches, overlapping CJK bigram matches merged into one highlighted span.
  let out = "";
  let at = startChar;
  let s = -1;
  let e = -1;
  for (let i = from; i < to; i++) {
    if (!hits[i]) continue;
    if (s >= 0 && starts[i]! <= e) {
      e = Math.max(e, ends[i]!);
      continue;
    }
    if (s >= 0) out += `${text.slice(at, s)}«${text.slice(s, e)}»`;
    if (s >= 0) at = e;
    s = starts[i]!;
    e = ends[i]!;
  }
  if (s >= 0) {
    out += `${text.slice(at, s)}«${text.slice(s, e)}»`;
    at = e;
  }
  out += text.slice(at, endChar);
  return `${from > 0 ? "…" : ""}${out.trim()}${to < count ? "…" : ""}`;
}
