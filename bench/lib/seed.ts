/**
 * Seeds a benchmark database straight through the driver (not Prisma): workspaces, people,
 * conversations, messages, memory entries and skills shaped like the rows cairn writes, with the
 * same keys, so the Core finds and reads them as its own. Deterministic (seeded PRNG).
 */
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { sqlitePath } from "../../src/db/client.ts";
import { HISTORY_INDEX_CATCH_UP } from "../../src/history/store/history-index-sqlite.ts";
import type { Provider } from "../../src/db/migrate.ts";
import { checkedMark, RULES_VERSION, scanStored } from "../../src/safety/scanner.ts";
import { prng } from "../../test/support/scope-fuzz.ts";

export interface SeedPlan {
  workspaces: number;
  messages: number;
  memoryEntries: number;
  skills: number;
  peoplePerWorkspace: number;
  channelsPerWorkspace: number;
}

/** The same seeded generator the scope fuzzer uses: reproducible on every machine. */
export const rng = prng;

const VOCAB = (
  "deploy release staging production rollback migration database index query latency cache redis kafka queue worker cron " +
  "review merge branch pipeline build test flaky coverage lint typescript node python rust docker kubernetes helm terraform " +
  "alert incident oncall pager runbook postmortem outage customer ticket support billing invoice payment refund pricing " +
  "design figma mockup onboarding signup login password token session cookie api endpoint webhook schema contract " +
  "meeting standup retro planning sprint roadmap quarter okr goal launch demo feedback survey metrics dashboard grafana " +
  "team lunch friday monday tomorrow yesterday today morning afternoon week month ship fix bug issue pr comment docs wiki " +
  "please thanks agree sounds good great idea maybe later blocked waiting done started finished looks works broken"
).split(" ");

export const SEED_PREFIX = "seed-ws-";
export const seedWorkspace = (w: number) => `${SEED_PREFIX}${w}`;
export const seedUser = (p: number) => `U${p}`;
export const seedChannel = (c: number) => `C${c}`;

function sentence(r: () => number, min = 6, max = 24): string {
  const n = min + Math.floor(r() * (max - min));
  const words: string[] = [];
  for (let i = 0; i < n; i++) words.push(VOCAB[Math.floor(r() * VOCAB.length)]!);
  return words.join(" ");
}

interface Rows {
  workspaces: unknown[][];
  people: unknown[][];
  conversations: unknown[][];
}

function baseRows(plan: SeedPlan): Rows & { convIds: string[][]; personIds: string[][] } {
  const now = new Date("2026-01-01T00:00:00Z");
  const rows: Rows = { workspaces: [], people: [], conversations: [] };
  const convIds: string[][] = [];
  const personIds: string[][] = [];
  for (let w = 0; w < plan.workspaces; w++) {
    const ws = `sw${w}`;
    rows.workspaces.push([ws, "slack", seedWorkspace(w), `Seed ${w}`, now]);
    personIds.push([]);
    convIds.push([]);
    for (let p = 0; p < plan.peoplePerWorkspace; p++) {
      const id = `sp${w}_${p}`;
      personIds[w]!.push(id);
      rows.people.push([id, ws, seedUser(p), `Person ${p}`, false, now, now]);
    }
    for (let c = 0; c < plan.channelsPerWorkspace; c++) {
      const id = `sc${w}_${c}`;
      convIds[w]!.push(id);
      rows.conversations.push([id, ws, `slack:${seedWorkspace(w)}:${seedChannel(c)}:main`, seedChannel(c), null, false, null, now, now]);
    }
  }
  return { ...rows, convIds, personIds };
}

/** Yields message rows [workspaceId, conversationId, authorId, role, text, platformId, status, createdAt]. */
function* messageRows(plan: SeedPlan, convIds: string[][], personIds: string[][]): Generator<unknown[]> {
  const r = rng(42);
  const start = Date.parse("2025-01-01T00:00:00Z");
  for (let i = 0; i < plan.messages; i++) {
    const w = i % plan.workspaces;
    const conv = convIds[w]![Math.floor(r() * convIds[w]!.length)]!;
    const author = personIds[w]![Math.floor(r() * personIds[w]!.length)]!;
    yield [`sw${w}`, conv, author, "user", sentence(r), `seed-${i}`, "answered", new Date(start + i * 20_000)];
  }
}

function memoryRows(plan: SeedPlan, personIds: string[][]): unknown[][] {
  const r = rng(7);
  const now = new Date("2026-01-01T00:00:00Z");
  const out: unknown[][] = [];
  for (let i = 0; i < plan.memoryEntries; i++) {
    const w = i % plan.workspaces;
    const kind = i % 10 < 2 ? "team" : i % 10 < 5 ? "channel" : "user";
    const owner = kind === "user" ? personIds[w]![Math.floor(r() * personIds[w]!.length)]! : null;
    const channel = kind === "channel" ? seedChannel(Math.floor(r() * plan.channelsPerWorkspace)) : null;
    const text = sentence(r, 5, 12);
    // As the memory store writes them: marked with the rules the text passed.
    out.push([`sm${i}`, `sw${w}`, kind, owner, channel, text, scanStored(text).ok ? RULES_VERSION : null, "active", 1, "import", now, now]);
  }
  return out;
}

function skillRows(plan: SeedPlan): unknown[][] {
  const r = rng(9);
  const now = new Date("2026-01-01T00:00:00Z");
  const out: unknown[][] = [];
  for (let i = 0; i < plan.skills; i++) {
    const w = i % plan.workspaces;
    const name = `seed-skill-${i}`;
    const description = `Use when ${sentence(r, 4, 9)}`;
    const content = `---\nname: ${name}\ndescription: ${description}\n---\n\n1. ${sentence(r)}\n2. ${sentence(r)}\n`;
    // Marked as the skill store marks what it writes (safety/stored-mark.ts).
    out.push([`sk${i}`, `sw${w}`, "team", name, description, checkedMark(description), content, "active", false, false, `hash-${i}`, 1, "import", 0, now, now]);
  }
  return out;
}

const WS_COLS = ["id", "platform", "externalId", "name", "createdAt"];
const PERSON_COLS = ["id", "workspaceId", "externalId", "displayName", "isBot", "createdAt", "updatedAt"];
const CONV_COLS = ["id", "workspaceId", "key", "channelId", "threadId", "isDm", "ownerId", "createdAt", "lastMessageAt"];
const MSG_COLS = ["workspaceId", "conversationId", "authorId", "role", "text", "platformId", "status", "createdAt"];
const MEM_COLS = ["id", "workspaceId", "scope", "ownerId", "channelKey", "text", "scannedWith", "status", "confidence", "source", "createdAt", "updatedAt"];
const SKILL_COLS = ["id", "workspaceId", "scope", "name", "description", "descriptionChecked", "content", "status", "pinned", "bundled", "contentHash", "confidence", "source", "useCount", "createdAt", "updatedAt"];

const q = (cols: string[]) => cols.map((c) => `"${c}"`).join(", ");

export async function seed(provider: Provider, url: string, plan: SeedPlan, progress?: (done: number) => void): Promise<void> {
  const base = baseRows(plan);
  if (provider === "sqlite") {
    const db = new BetterSqlite3(sqlitePath(url));
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = OFF");
    // Prisma's SQLite adapter stores DateTime as ISO text with an explicit offset; so do we.
    const v = (row: unknown[]) => row.map((x) => (x instanceof Date ? x.toISOString().replace("Z", "+00:00") : typeof x === "boolean" ? (x ? 1 : 0) : x));
    const insert = (table: string, cols: string[], rows: Iterable<unknown[]>) => {
      const st = db.prepare(`INSERT INTO "${table}" (${q(cols)}) VALUES (${cols.map(() => "?").join(", ")})`);
      let n = 0;
      let batch = db.transaction(() => {});
      const buf: unknown[][] = [];
      const flush = () => {
        batch = db.transaction(() => {
          for (const r of buf) st.run(...v(r));
        });
        batch();
        n += buf.length;
        buf.length = 0;
        if (table === "Message") progress?.(n);
      };
      for (const r of rows) {
        buf.push(r);
        if (buf.length >= 20_000) flush();
      }
      flush();
    };
    insert("Workspace", WS_COLS, base.workspaces);
    insert("Person", PERSON_COLS, base.people);
    insert("Conversation", CONV_COLS, base.conversations);
    insert("MemoryEntry", MEM_COLS, memoryRows(plan, base.personIds));
    insert("Skill", SKILL_COLS, skillRows(plan));
    insert("Message", MSG_COLS, messageRows(plan, base.convIds, base.personIds));
    // Indexed now, as cairn would have indexed them while they arrived: not in the first search measured.
    db.transaction(() => HISTORY_INDEX_CATCH_UP.forEach((sql) => db.exec(sql)))();
    db.exec("ANALYZE");
    // Cairn's own connection is open, so closing this one does not checkpoint: without this, the
    // first write measured after seeding would copy the seeding's whole WAL into the database.
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const insert = async (table: string, cols: string[], rows: Iterable<unknown[]>) => {
      // Column-wise arrays through unnest: one statement per 10,000 rows.
      const types = await client.query<{ column_name: string; udt_name: string }>(
        `SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = $1`,
        [table],
      );
      const type = new Map(types.rows.map((t) => [t.column_name, t.udt_name === "timestamp" ? "timestamp(3)" : t.udt_name]));
      const sql = `INSERT INTO "${table}" (${q(cols)}) SELECT * FROM unnest(${cols.map((c, i) => `$${i + 1}::${type.get(c)}[]`).join(", ")})`;
      let n = 0;
      const buf: unknown[][] = [];
      const flush = async () => {
        if (buf.length === 0) return;
        await client.query(sql, cols.map((_, i) => buf.map((r) => r[i])));
        n += buf.length;
        buf.length = 0;
        if (table === "Message") progress?.(n);
      };
      for (const r of rows) {
        buf.push(r);
        if (buf.length >= 10_000) await flush();
      }
      await flush();
    };
    await insert("Workspace", WS_COLS, base.workspaces);
    await insert("Person", PERSON_COLS, base.people);
    await insert("Conversation", CONV_COLS, base.conversations);
    await insert("MemoryEntry", MEM_COLS, memoryRows(plan, base.personIds));
    await insert("Skill", SKILL_COLS, skillRows(plan));
    await insert("Message", MSG_COLS, messageRows(plan, base.convIds, base.personIds));
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}
