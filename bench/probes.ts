/**
 * The memory-write scanner on a probe set it was not built from (test/fixtures/threats/probes/,
 * written before the rules of the trust-boundary issue changed): how many hostile lines it stops
 * and how many harmless ones it gets wrong, by class and by language. A hostile line counts as
 * stopped when it is blocked, or, for a secret, when every secret span is gone from what would be
 * stored; a harmless one is wrong when it is blocked or stored altered. The pattern scanner is the
 * first screen only: the classes it cannot stop are what the model-judged screen and the approval
 * of shared writes are for, so this table shows where each stands, not a goal for patterns alone.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import type { BenchOutcome } from "./run.ts";
import { round, table } from "./lib/report.ts";
import { PROJECT_ROOT } from "../src/ground/paths.ts";
import { scanForWrite } from "../src/safety/scanner.ts";
import { SCREEN_PROMPT } from "../src/safety/screen.ts";
import { median } from "./lib/report.ts";

const PROBES = join(PROJECT_ROOT, "test", "fixtures", "threats", "probes");

const Line = z.object({
  text: z.string(),
  lang: z.string(),
  category: z.string(),
  expect: z.enum(["block", "redact", "pass"]),
  secrets: z.array(z.string()).optional(),
});
type Line = z.infer<typeof Line>;

export function loadProbes(name: "hostile" | "benign"): Line[] {
  return readFileSync(join(PROBES, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const parsed = Line.safeParse(JSON.parse(l));
      if (!parsed.success) throw new Error(`probes/${name}.jsonl:${i + 1}: ${parsed.error.message}`);
      return parsed.data;
    });
}

/** Stopped: blocked, or stored with every secret span gone. */
export function stopped(line: Line): boolean {
  const v = scanForWrite(line.text);
  if (!v.ok) return true;
  if (line.expect !== "redact") return false;
  return (line.secrets ?? []).every((s) => !v.text.includes(s)) && v.redactions.length > 0;
}

/** Wrong on a harmless line: blocked, or stored altered. */
export function falseAlarm(line: Line): boolean {
  const v = scanForWrite(line.text);
  return !v.ok || v.text !== line.text;
}

interface Tally {
  n: number;
  hit: number;
}

function tally(lines: readonly Line[], key: (l: Line) => string, hit: (l: Line) => boolean): Map<string, Tally> {
  const out = new Map<string, Tally>();
  for (const l of lines) {
    const t = out.get(key(l)) ?? { n: 0, hit: 0 };
    t.n++;
    if (hit(l)) t.hit++;
    out.set(key(l), t);
  }
  return new Map([...out].sort((a, b) => a[0].localeCompare(b[0])));
}

const pct = (t: Tally): number => round((100 * t.hit) / Math.max(1, t.n), 1);

export async function run(): Promise<BenchOutcome> {
  const hostile = loadProbes("hostile");
  const benign = loadProbes("benign");
  const secretLine = (l: Line) => (l.expect === "redact" ? "secrets" : "instructions");
  const all = { n: hostile.length, hit: hostile.filter(stopped).length };
  const secrets = hostile.filter((l) => l.expect === "redact");
  const secretTally = { n: secrets.length, hit: secrets.filter(stopped).length };
  const wrong = { n: benign.length, hit: benign.filter(falseAlarm).length };
  const byCategory = tally(hostile, (l) => `${secretLine(l)}: ${l.category}`, stopped);
  const byLang = tally(hostile, (l) => l.lang, stopped);
  const benignByCategory = tally(benign, (l) => l.category, falseAlarm);
  const rows: (string | number)[][] = [
    ["hostile, all", all.n, `${pct(all)}% stopped`],
    ["hostile, secrets", secretTally.n, `${pct(secretTally)}% removed`],
    ...[...byCategory].map(([k, t]) => [`  ${k}`, t.n, `${pct(t)}%`]),
    ...[...byLang].map(([k, t]) => [`  lang ${k}`, t.n, `${pct(t)}%`]),
    ["benign, all", wrong.n, `${pct(wrong)}% false alarms`],
    ...[...benignByCategory].filter(([, t]) => t.hit > 0).map(([k, t]) => [`  ${k}`, t.n, `${t.hit} wrong`]),
  ];
  // What one screening call costs, per shared write: the fixed prompt (marked for caching, but
  // shorter than the smallest prefix the API caches, so paid each call) and the write itself,
  // estimated at 4 characters a token (no tokenizer runs offline).
  const tokens = (chars: number) => Math.ceil(chars / 4);
  const writeTokens = [...hostile, ...benign].map((l) => tokens(`Seen by: everyone in the workspace\n<text>\n${l.text}\n</text>`.length));
  const screen = { prefixTokens: tokens(SCREEN_PROMPT.length), writeTokensMedian: median(writeTokens), outputTokensMax: 200 };
  rows.push(["screen call per shared write (estimated tokens)", writeTokens.length, `${screen.prefixTokens} prompt + ${screen.writeTokensMedian} write (median) in, <= ${screen.outputTokensMax} out`]);
  return {
    name: "probes",
    table: table(["probe set (test/fixtures/threats/probes)", "lines", "result"], rows),
    result: {
      hostile: all.n,
      stoppedPct: pct(all),
      secretsRemovedPct: pct(secretTally),
      benign: wrong.n,
      falseAlarmPct: pct(wrong),
      screen,
      byCategory: Object.fromEntries([...byCategory].map(([k, t]) => [k, pct(t)])),
      byLang: Object.fromEntries([...byLang].map(([k, t]) => [k, pct(t)])),
      falseAlarms: benign.filter(falseAlarm).map((l) => l.text),
      missed: hostile.filter((l) => !stopped(l)).map((l) => `${l.category}/${l.lang}: ${l.text}`),
    },
  };
}
