/**
 * A strict parser of the Prometheus text exposition format (version 0.0.4), for tests: whatever a
 * real scraper would refuse, or read differently, is an error here with its line number.
 *
 * Checked: line syntax (names, label escapes, float values, timestamps), at most one HELP and one
 * TYPE per family and TYPE before its samples, a family's samples together (not interleaved with
 * another's), no series twice, counters not negative, and each histogram whole (buckets
 * cumulative, a +Inf bucket equal to `_count`, a `_sum`).
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp?: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help?: string;
  samples: Sample[];
}

export class PromParseError extends Error {
  /** `line` 0: a check of a whole family, after the last line. */
  constructor(line: number, message: string) {
    super(line > 0 ? `line ${line}: ${message}` : message);
    this.name = "PromParseError";
  }
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
/** What Go's strconv.ParseFloat takes (the format's definition of a value), hex floats aside: NaN and Inf in any case. */
const FLOAT = /^[+-]?(?:inf|infinity|nan|(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)$/i;
const TIMESTAMP = /^-?\d+$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

function parseFloatStrict(text: string, line: number): number {
  if (!FLOAT.test(text)) throw new PromParseError(line, `not a float: ${JSON.stringify(text)}`);
  if (/^[+-]?inf/i.test(text)) return text.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(text)) return NaN;
  return Number(text);
}

/** HELP text: only `\\` and `\n` are escapes. */
function unescapeHelp(text: string, line: number): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === "\\") return "\\";
    if (c === "n") return "\n";
    throw new PromParseError(line, `bad escape \\${c} in HELP`);
  });
}

/** `{a="x",b="y"}` from `at` (the `{`); returns the labels and the index after `}`. */
function parseLabels(text: string, at: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    if (text[i] === "}") return { labels, end: i + 1 };
    const name = LABEL_NAME.exec(text.slice(i))?.[0];
    if (!name) throw new PromParseError(line, `expected a label name at column ${i + 1}`);
    if (Object.hasOwn(labels, name)) throw new PromParseError(line, `label ${name} twice`);
    i += name.length;
    if (text[i] !== "=" || text[i + 1] !== '"') throw new PromParseError(line, `expected ="value" after label ${name}`);
    i += 2;
    let value = "";
    for (;;) {
      const c = text[i];
      if (c === undefined) throw new PromParseError(line, `unterminated value of label ${name}`);
      if (c === '"') break;
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "\\" || e === '"') value += e;
        else if (e === "n") value += "\n";
        else throw new PromParseError(line, `bad escape \\${e ?? ""} in label ${name}`);
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    labels[name] = value;
    i++;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new PromParseError(line, `expected , or } after label ${name}`);
  }
}

function parseSample(text: string, line: number): Sample {
  const name = METRIC_NAME.exec(text)?.[0];
  if (!name) throw new PromParseError(line, `expected a metric name: ${JSON.stringify(text)}`);
  let rest = text.slice(name.length);
  let labels: Record<string, string> = {};
  if (rest.startsWith("{")) {
    const parsed = parseLabels(rest, 0, line);
    labels = parsed.labels;
    rest = rest.slice(parsed.end);
  }
  if (!/^[ \t]/.test(rest)) throw new PromParseError(line, `expected a space before the value of ${name}`);
  const fields = rest.trim().split(/[ \t]+/);
  if (fields.length > 2) throw new PromParseError(line, `unexpected text after the value of ${name}`);
  const sample: Sample = { name, labels, value: parseFloatStrict(fields[0] ?? "", line) };
  if (fields[1] !== undefined) {
    if (!TIMESTAMP.test(fields[1])) throw new PromParseError(line, `not a timestamp: ${fields[1]}`);
    sample.timestamp = Number(fields[1]);
  }
  return sample;
}

const seriesKey = (s: Sample): string =>
  `${s.name}{${Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(s.labels[k])}`)
    .join(",")}}`;

/** The family a sample belongs to, given the TYPEs declared so far. */
function familyOf(name: string, types: ReadonlyMap<string, MetricType>): string {
  if (types.has(name)) return name;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const type = types.get(base);
    if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base;
  }
  return name;
}

function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: { le: number; value: number }[]; sum?: number; count?: number }>();
  const groupOf = (s: Sample) => {
    const { le: _le, ...rest } = s.labels;
    const key = seriesKey({ name: "", labels: rest, value: 0 });
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { buckets: [] }));
    return g;
  };
  for (const s of family.samples) {
    const g = groupOf(s);
    if (s.name === `${family.name}_bucket`) {
      const le = s.labels.le;
      if (le === undefined) throw new PromParseError(0, `${family.name}: a bucket without le`);
      g.buckets.push({ le: parseFloatStrict(le, 0), value: s.value });
    } else if (s.name === `${family.name}_sum`) g.sum = s.value;
    else if (s.name === `${family.name}_count`) g.count = s.value;
    else throw new PromParseError(0, `${family.name}: unexpected sample ${s.name} in a histogram`);
  }
  for (const [key, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a.le - b.le);
    const inf = sorted.at(-1);
    if (!inf || inf.le !== Infinity) throw new PromParseError(0, `${family.name}${key}: no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.value < sorted[i - 1]!.value) throw new PromParseError(0, `${family.name}${key}: buckets not cumulative`);
    }
    if (g.count === undefined || g.sum === undefined) throw new PromParseError(0, `${family.name}${key}: _count or _sum missing`);
    if (g.count !== inf.value) throw new PromParseError(0, `${family.name}${key}: _count ${g.count} is not the +Inf bucket ${inf.value}`);
  }
}

/** Parses a whole exposition; throws `PromParseError` at the first thing a scraper would refuse. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (text.length > 0 && !text.endsWith("\n")) throw new PromParseError(text.split("\n").length, "the last line does not end with a line feed");
  const families = new Map<string, Family>();
  const types = new Map<string, MetricType>();
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: string | null = null;
  const enter = (name: string, line: number): Family => {
    if (current !== name) {
      if (closed.has(name)) throw new PromParseError(line, `${name}: its lines are not together`);
      if (current !== null) closed.add(current);
      current = name;
    }
    let family = families.get(name);
    if (!family) families.set(name, (family = { name, type: types.get(name) ?? "untyped", samples: [] }));
    return family;
  };
  const lines = text.split("\n");
  lines.pop();
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === "") return;
    const comment = /^[ \t]*#(.*)$/.exec(raw);
    if (comment) {
      const m = /^[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(comment[1] ?? "");
      if (!m) return;
      const [, keyword, name = "", arg = ""] = m;
      if (!METRIC_NAME.test(name) || METRIC_NAME.exec(name)?.[0] !== name) throw new PromParseError(line, `bad metric name ${name}`);
      const family = enter(name, line);
      if (keyword === "HELP") {
        if (family.help !== undefined) throw new PromParseError(line, `${name}: HELP twice`);
        family.help = unescapeHelp(arg, line);
      } else {
        if (types.has(name)) throw new PromParseError(line, `${name}: TYPE twice`);
        if (family.samples.length > 0) throw new PromParseError(line, `${name}: TYPE after its samples`);
        if (!TYPES.has(arg as MetricType)) throw new PromParseError(line, `${name}: unknown type ${arg}`);
        types.set(name, arg as MetricType);
        family.type = arg as MetricType;
      }
      return;
    }
    const sample = parseSample(raw.trim(), line);
    const family = enter(familyOf(sample.name, types), line);
    const key = seriesKey(sample);
    if (seen.has(key)) throw new PromParseError(line, `series ${key} twice`);
    seen.add(key);
    if (family.type === "counter" && !(sample.value >= 0)) throw new PromParseError(line, `counter ${sample.name} is ${sample.value}`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

const matches = (s: Sample, labels: Record<string, string>): boolean => Object.entries(labels).every(([k, v]) => s.labels[k] === v);

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sumOf(families: ReadonlyMap<string, Family>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const family of families.values()) for (const s of family.samples) if (s.name === name && matches(s, labels)) total += s.value;
  return total;
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(families: ReadonlyMap<string, Family>, name: string, labels: Record<string, string> = {}): Sample[] {
  return [...families.values()].flatMap((f) => f.samples.filter((s) => s.name === name && matches(s, labels)));
}
