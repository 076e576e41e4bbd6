/**
 * Text with a Zipf-like word distribution, for seeding at scale: a fixed vocabulary (team words
 * first, then made-up three-syllable words for the long tail) whose rank-k word is drawn with
 * probability about 1 / (k ln V). A few words are in most messages, most words in a handful: the
 * mix real chat has, unlike the flat 60-150-word vocabularies of the smaller benchmarks, where
 * every word is common.
 */

const HEAD = (
  "deploy release staging production fix bug review merge test build pipeline issue ticket customer team meeting today tomorrow " +
  "yesterday week thanks please done looks works broken blocked waiting started finished update change branch api database query " +
  "latency cache error alert incident oncall runbook outage rollback migration index schema endpoint webhook token login password " +
  "session cookie billing invoice payment refund pricing design mockup onboarding signup docs wiki standup retro planning sprint " +
  "roadmap quarter goal launch demo feedback survey metrics dashboard grafana kafka redis queue worker cron docker kubernetes helm " +
  "terraform node python rust typescript lint coverage flaky postmortem pager support contract okr lunch friday monday morning " +
  "afternoon month ship comment agree idea later decided owner deadline approve access secret vault certificate dns server cluster " +
  "region backup restore snapshot disk memory cpu timeout retry limit quota usage report export import sync job batch stream event " +
  "log trace span sample budget cost forecast hiring interview offer contractor vendor legal privacy security audit compliance " +
  "policy handbook laptop badge office travel expense reimbursement holiday vacation sick leave payroll benefits"
).split(" ");

const CONSONANTS = "bdfgklmnprstvz";
const VOWELS = "aeiou";
const SYLLABLES = [...CONSONANTS].flatMap((c) => [...VOWELS].map((v) => c + v));

/** The k-th made-up word: three syllables (k in base 70), distinct for every k below 70^3. */
function madeUp(k: number): string {
  const n = SYLLABLES.length;
  return SYLLABLES[Math.floor(k / (n * n)) % n]! + SYLLABLES[Math.floor(k / n) % n]! + SYLLABLES[k % n]!;
}

/** `size` words, most frequent first. */
export function vocabulary(size: number): string[] {
  const words = HEAD.slice(0, size);
  const seen = new Set(words);
  for (let k = 0; words.length < size; k++) {
    const w = madeUp(k);
    if (seen.has(w)) continue;
    words.push(w);
    seen.add(w);
  }
  return words;
}

/**
 * A word's rank (0-based) drawn from about 1/k: floor(V^u) for u uniform in [0, 1) has
 * P(k) = log_V((k + 1) / k), close to 1 / (k ln V).
 */
export function zipfRank(r: () => number, size: number): number {
  return Math.min(size, Math.floor(Math.pow(size, r()))) - 1;
}

export function zipfText(r: () => number, words: readonly string[], min: number, max: number): string {
  const n = min + Math.floor(r() * (max - min + 1));
  let s = "";
  for (let i = 0; i < n; i++) s += (i === 0 ? "" : " ") + words[zipfRank(r, words.length)]!;
  return s;
}
