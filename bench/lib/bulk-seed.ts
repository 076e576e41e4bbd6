/**
 * Seeds PostgreSQL with millions of messages in bulk, for the scale benchmark (bench/scale.ts).
 *
 * The project has no COPY client (pg-copy-streams is not a dependency), so rows go in as
 * `INSERT ... SELECT FROM unnest(...)` of 20,000 at a time, two connections at once: only the
 * texts cross the wire (made here, Zipf-distributed, zipf-words.ts); ids, sessions, authors,
 * roles and dates are computed inside PostgreSQL from helper tables (bench_ws, bench_conv,
 * bench_session, kept in the temporary database). PostgreSQL computes the generated `search` and
 * `cjk` tsvectors as in production.
 *
 * Shape: workspaces of the given sizes (people); per workspace, channels (one per 25 people),
 * four threads per channel, and a DM with cairn for 60% of the people; sessions of six messages
 * (user, cairn, user, ...), half of them in DMs; busy conversations busier (a power law over
 * each kind). Keys as bench/lib/seed.ts writes them (seedWorkspace, U<n>, C<n>), so a Core finds
 * the seeded channels and people.
 */
import pg from "pg";
import { rng, seedWorkspace } from "./seed.ts";
import { vocabulary, zipfText } from "./zipf-words.ts";

export interface ScaleShape {
  /** People per workspace; messages are shared in proportion. */
  workspaces: number[];
  vocabulary: number;
}

export const SESSION_LENGTH = 6;
const BATCH = 20_000;
const WORKERS = 2;
/** Message g (1-based id) is g * 3 s after this: 10M messages span about a year. */
const START = "2025-01-01 00:00:00";

/** Workspaces, people, conversations and the helper tables the message inserts read. */
export async function seedShape(url: string, shape: ScaleShape): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`CREATE TABLE bench_ws (w int PRIMARY KEY, people int, lo float8, hi float8, ch_lo int, ch_n int, dm_lo int, dm_n int)`);
    await c.query(`CREATE TABLE bench_conv (idx int PRIMARY KEY, w int, id text, ws text, key text, channel text, thread text, isdm bool, owner text)`);
    await c.query(`CREATE TABLE bench_session (s int PRIMARY KEY, conv int)`);
    const total = shape.workspaces.reduce((a, b) => a + b, 0);
    let cum = 0;
    let idx = 0;
    for (const [w, people] of shape.workspaces.entries()) {
      const ws = `sw${w}`;
      const ext = seedWorkspace(w);
      const channels = Math.max(10, Math.round(people / 25));
      const threads = channels * 4;
      const dms = Math.round(people * 0.6);
      await c.query(`INSERT INTO "Workspace" (id, platform, "externalId", name, "createdAt") VALUES ($1, 'slack', $2, $3, $4)`, [ws, ext, `Scale ${w}`, START]);
      await c.query(
        `INSERT INTO "Person" (id, "workspaceId", "externalId", "displayName", "isBot", "createdAt", "updatedAt")
         SELECT 'sp' || $1::int || '_' || p, $2, $3 || p, 'Person ' || p, false, $4::timestamp, $4::timestamp FROM generate_series(0, $5::int - 1) p`,
        [w, ws, "U", START, people],
      );
      const chLo = idx;
      // Channels (main), their threads, then DMs: each kind a contiguous range of bench_conv.idx.
      await c.query(
        `INSERT INTO bench_conv SELECT $1::int + i, $2::int, 'sc' || $2::int || '_' || i, $3, 'slack:' || $4 || ':' || $5 || i || ':main', $5 || i, NULL, false, NULL
           FROM generate_series(0, $6::int - 1) i`,
        [idx, w, ws, ext, "C", channels],
      );
      idx += channels;
      await c.query(
        `INSERT INTO bench_conv SELECT $1::int + t, $2::int, 'st' || $2::int || '_' || t, $3, 'slack:' || $4 || ':' || $5 || (t % $6::int) || ':t' || t, $5 || (t % $6::int), 't' || t, false, NULL
           FROM generate_series(0, $7::int - 1) t`,
        [idx, w, ws, ext, "C", channels, threads],
      );
      idx += threads;
      const dmLo = idx;
      await c.query(
        `INSERT INTO bench_conv SELECT $1::int + p, $2::int, 'sd' || $2::int || '_' || p, $3, 'slack:' || $4 || ':D' || p || ':main', 'D' || p, NULL, true, 'sp' || $2::int || '_' || p
           FROM generate_series(0, $5::int - 1) p`,
        [idx, w, ws, ext, dms],
      );
      idx += dms;
      await c.query(`INSERT INTO bench_ws VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [w, people, cum / total, (cum + people) / total, chLo, channels + threads, dmLo, dms]);
      cum += people;
    }
    await c.query(
      `INSERT INTO "Conversation" (id, "workspaceId", key, "channelId", "threadId", "isDm", "ownerId", "createdAt", "lastMessageAt")
       SELECT id, ws, key, channel, thread, isdm, owner, $1::timestamp, $1::timestamp FROM bench_conv`,
      [START],
    );
  } finally {
    await c.end();
  }
}

export interface LoadTimes {
  sessionsSeconds: number;
  messagesSeconds: number;
}

/**
 * Messages with ids from..to (inclusive), their sessions first. A session picks a workspace by its
 * share of people, then a DM or a channel/thread (half each), low indexes busier.
 */
export async function seedMessages(url: string, shape: ScaleShape, from: number, to: number, progress?: (done: number) => void): Promise<LoadTimes> {
  const words = vocabulary(shape.vocabulary);
  const clients = await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      // Bulk loading: a lost commit on a crash only loses benchmark rows.
      await c.query("SET synchronous_commit = off");
      return c;
    }),
  );
  try {
    const c = clients[0]!;
    const t0 = performance.now();
    const s0 = Math.floor((from - 1) / SESSION_LENGTH);
    const s1 = Math.floor((to - 1) / SESSION_LENGTH);
    await c.query("SELECT setseed($1)", [((from % 1000) / 1000) * 0.9]);
    await c.query(
      `INSERT INTO bench_session (s, conv)
       SELECT x.s, CASE WHEN x.r3 < 0.5 THEN w.dm_lo + floor(power(x.r2, 1.5) * w.dm_n)::int ELSE w.ch_lo + floor(power(x.r2, 2) * w.ch_n)::int END
         FROM (SELECT s, random() AS r1, random() AS r2, random() AS r3 FROM generate_series($1::int, $2::int) s OFFSET 0) x
         JOIN bench_ws w ON x.r1 >= w.lo AND x.r1 < w.hi
       ON CONFLICT (s) DO NOTHING`,
      [s0, s1],
    );
    await c.query(
      `INSERT INTO "ChatSession" (id, "conversationId", "startedAt", "lastActivityAt", "endedAt", "endReason")
       SELECT 'ss' || b.s, c.id, $3::timestamp + (b.s * ${SESSION_LENGTH} + 1) * interval '3 seconds', $3::timestamp + (b.s * ${SESSION_LENGTH} + ${SESSION_LENGTH}) * interval '3 seconds',
              $3::timestamp + (b.s * ${SESSION_LENGTH} + ${SESSION_LENGTH}) * interval '3 seconds', 'idle'
         FROM bench_session b JOIN bench_conv c ON c.idx = b.conv WHERE b.s BETWEEN $1 AND $2
       ON CONFLICT (id) DO NOTHING`,
      [s0, s1, START],
    );
    const sessionsSeconds = (performance.now() - t0) / 1000;

    const t1 = performance.now();
    const sql = `INSERT INTO "Message" (id, "workspaceId", "conversationId", "sessionId", "authorId", role, text, "platformId", status, "createdAt")
      SELECT x.g, c.ws, c.id, 'ss' || x.s,
             CASE WHEN x.pos % 2 = 1 THEN NULL WHEN c.isdm THEN c.owner ELSE 'sp' || c.w || '_' || floor(x.r * w.people)::int END,
             CASE WHEN x.pos % 2 = 0 THEN 'user' ELSE 'assistant' END, x.t, 'm' || x.g,
             CASE WHEN x.pos % 2 = 0 THEN 'answered' ELSE 'sent' END, $3::timestamp + x.g * interval '3 seconds'
        FROM (SELECT $1::int + k::int - 1 AS g, ($1::int + k::int - 2) / ${SESSION_LENGTH} AS s, ($1::int + k::int - 2) % ${SESSION_LENGTH} AS pos, t, random() AS r
                FROM unnest($2::text[]) WITH ORDINALITY u(t, k) OFFSET 0) x
        JOIN bench_session b ON b.s = x.s JOIN bench_conv c ON c.idx = b.conv JOIN bench_ws w ON w.w = c.w`;
    let next = from;
    let done = 0;
    const worker = async (client: pg.Client) => {
      while (next <= to) {
        const first = next;
        const last = Math.min(to, first + BATCH - 1);
        next = last + 1;
        // Deterministic text: each batch from its own seed.
        const r = rng(first);
        const texts: string[] = [];
        for (let g = first; g <= last; g++) {
          const user = ((g - 1) % SESSION_LENGTH) % 2 === 0;
          texts.push(user ? zipfText(r, words, 4, 20) : zipfText(r, words, 6, 40));
        }
        await client.query(sql, [first, texts, START]);
        done += texts.length;
        progress?.(done);
      }
    };
    await Promise.all(clients.map(worker));
    await c.query(`SELECT setval(pg_get_serial_sequence('"Message"', 'id'), (SELECT max(id) FROM "Message"))`);
    return { sessionsSeconds, messagesSeconds: (performance.now() - t1) / 1000 };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/** The secondary indexes of "Message" (all but its primary key), as CREATE statements. */
export async function messageIndexes(url: string): Promise<{ name: string; def: string }[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'Message' AND indexname <> 'Message_pkey' ORDER BY indexname`,
    );
    return r.rows.map((x) => ({ name: x.indexname, def: x.indexdef }));
  } finally {
    await c.end();
  }
}

export async function dropIndexes(url: string, indexes: readonly { name: string }[]): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const i of indexes) await c.query(`DROP INDEX IF EXISTS "${i.name}"`);
  } finally {
    await c.end();
  }
}

/** Builds each index again (one at a time, 1 GB of maintenance memory); seconds per index. */
export async function createIndexes(url: string, indexes: readonly { name: string; def: string }[]): Promise<Record<string, number>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query("SET maintenance_work_mem = '1GB'");
    const out: Record<string, number> = {};
    for (const i of indexes) {
      const t0 = performance.now();
      await c.query(i.def);
      out[i.name] = Math.round((performance.now() - t0) / 100) / 10;
    }
    return out;
  } finally {
    await c.end();
  }
}
