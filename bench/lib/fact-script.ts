/**
 * The fact-update bench's script (bench/facts.ts): a team whose facts change over simulated weeks,
 * with the answer key. Subjects are a service and an attribute ("The billing service deploys on
 * Tuesdays"); each gets a first value, then 1-3 changes, each by one of three paths:
 * - own: its author again, in the same place (half replace the text, half say it anew);
 * - other: another person in the same place (a new entry contradicting theirs);
 * - team: another person, for the whole team, about a subject that lived in one channel or the team.
 * Deterministic for a seed, so runs with different nominator error rates see the same week.
 */
import { prng } from "../../test/support/scope-fuzz.ts";

const SERVICES = ["billing", "search", "checkout", "auth", "payments", "ledger", "mailer", "reports", "gateway", "catalog", "images", "notify", "sync", "export", "importer", "audit", "admin", "portal", "api", "web"];
const ATTRIBUTES: { says: string; values: readonly string[] }[] = [
  { says: "deploys on", values: ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"] },
  { says: "is owned by", values: ["Ana", "Bilal", "Chen", "Dara", "Emeka", "Femi", "Greta", "Hiro"] },
  { says: "builds with the package manager", values: ["npm", "pnpm", "yarn", "bun"] },
  { says: "has its change freeze on", values: ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"] },
  { says: "pages the rota called", values: ["red", "blue", "green", "amber", "violet"] },
  { says: "runs on", values: ["kubernetes", "ECS", "Nomad", "bare VMs"] },
  { says: "sends its logs to", values: ["Datadog", "Loki", "Splunk", "Elastic"] },
  { says: "keeps its data in", values: ["PostgreSQL", "MySQL", "MongoDB", "DynamoDB"] },
  { says: "releases on a train that is", values: ["daily", "weekly", "biweekly", "monthly"] },
  { says: "has an on-call lead named", values: ["Ines", "Jonas", "Kemal", "Lena", "Mateo", "Noor"] },
];

export const PEOPLE = ["UANA", "UBILAL", "UCHEN", "UDARA", "UEMEKA", "UFEMI", "UGRETA", "UHIRO"];
export const CHANNELS = ["C-eng", "C-ops", "C-web", "C-data"];

export type Path = "first" | "own" | "other" | "team";

export interface Write {
  week: number;
  /** Day offset within the week (0-6), for the clock. */
  day: number;
  subject: number;
  value: string;
  text: string;
  person: string;
  /** The channel it is said in. */
  channel: string;
  target: "team" | "channel";
  path: Path;
  /** For "own": change the entry's text in place (replace) instead of saying it anew. */
  replace: boolean;
}

export interface Subject {
  id: number;
  service: string;
  says: string;
  /** The words a question about it uses (the history tool's topic). */
  topic: string;
}

export interface FactScript {
  subjects: Subject[];
  writes: Write[];
  weeks: number;
}

export function factScript(seed: number, opts: { subjects: number; weeks: number }): FactScript {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const subjects: Subject[] = [];
  for (let i = 0; subjects.length < opts.subjects; i++) {
    const service = SERVICES[i % SERVICES.length]!;
    const attr = ATTRIBUTES[Math.floor(i / SERVICES.length) % ATTRIBUTES.length]!;
    subjects.push({ id: subjects.length, service, says: attr.says, topic: `${service} ${attr.says}` });
  }
  const valuesOf = (s: Subject) => ATTRIBUTES.find((a) => a.says === s.says)!.values;
  const writes: Write[] = [];
  for (const s of subjects) {
    const values = valuesOf(s);
    let value = pick(values);
    let person = pick(PEOPLE);
    let channel = pick(CHANNELS);
    let target: "team" | "channel" = rand() < 0.7 ? "team" : "channel";
    const text = (v: string) => `The ${s.service} service ${s.says} ${v}`;
    writes.push({ week: 0, day: Math.floor(rand() * 7), subject: s.id, value, text: text(value), person, channel, target, path: "first", replace: false });
    const changes = 1 + Math.floor(rand() * 3);
    const weeks = new Set<number>();
    while (weeks.size < changes) weeks.add(1 + Math.floor(rand() * (opts.weeks - 1)));
    for (const week of [...weeks].sort((a, b) => a - b)) {
      value = pick(values.filter((v) => v !== value));
      const r = rand();
      let path: Path;
      if (r < 0.4) path = "own";
      else if (r < 0.7) {
        path = "other";
        person = pick(PEOPLE.filter((p) => p !== person));
      } else {
        path = "team";
        person = pick(PEOPLE.filter((p) => p !== person));
        channel = pick(CHANNELS);
        target = "team";
      }
      writes.push({ week, day: Math.floor(rand() * 7), subject: s.id, value, text: text(value), person, channel, target, path, replace: path === "own" && rand() < 0.5 });
    }
  }
  writes.sort((a, b) => a.week - b.week || a.day - b.day || a.subject - b.subject);
  return { subjects, writes, weeks: opts.weeks };
}
