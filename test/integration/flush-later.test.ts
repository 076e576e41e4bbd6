/**
 * Commits that do not wait for the disk (src/db/flush-later.ts), PostgreSQL only: a turn's end (the
 * reply with its trace) and its post recorded set `synchronous_commit` off for their own
 * transaction; a person's message keeps the server's setting. Each statement is run here inside a
 * transaction of its own on one connection, so the setting it leaves for its commit can be read
 * before that commit, and again after it: nothing leaks to the next statement on the connection.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { openDatabase, type Database } from "../../src/db/client.ts";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore } from "../../src/history/store/store.ts";
import { TurnEndStore } from "../../src/turn/turn-end-store.ts";
import { freshPostgres, inboundFor, postgresSuite, uniqueId, type PlaceOptions } from "../support/db.ts";

postgresSuite()("commits that do not wait for the disk", () => {
  let db: Database | null = null;
  let client: pg.Client | null = null;
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const fresh = await freshPostgres();
    drop = fresh.drop;
    db = await openDatabase(fresh.url);
    client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.close();
    await drop();
  });

  /** Each statement in its own transaction on `client`: the setting at its commit, and after it. */
  function observed() {
    const c = client!;
    const seen: { sql: string; atCommit: string; after: string }[] = [];
    const setting = async (): Promise<string> => String((await c.query("SELECT current_setting('synchronous_commit') AS s")).rows[0].s);
    const rows = async (sql: string, params: readonly SqlParam[]): Promise<unknown[][]> => {
      await c.query("BEGIN");
      const result = await c.query({ text: sql, values: [...params], rowMode: "array" });
      const atCommit = await setting();
      await c.query("COMMIT");
      seen.push({ sql, atCommit, after: await setting() });
      return result.rows as unknown[][];
    };
    return { direct: { ...db!.direct, rows }, seen };
  }

  /** A conversation's stores whose statements are observed, and a session in it. */
  async function setUp() {
    const base = db!;
    const { direct, seen } = observed();
    const history = new HistoryStore({ ...base, direct });
    const ends = new TurnEndStore({ provider: base.provider, direct }, history);
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const place = await history.resolve(inboundFor(o, "q1"));
    const session = await base.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    return { base, seen, history, ends, o, place, session };
  }
  const leaseOf = (owner: string) => ({ owner, until: new Date(Date.now() + 60_000) });

  it("commits a turn's end and its post without waiting for the disk, and a person's message as the server does", async () => {
    const { base, seen, history, ends, o, place, session } = await setUp();
    const lease = leaseOf("this-process");

    seen.length = 0;
    const q1 = (await history.recordInbound(place, inboundFor(o, "how do we deploy?"), session.id, lease))!;
    expect(seen.map((s) => s.atCommit)).toEqual(["on"]);

    seen.length = 0;
    const { reply, traced } = await ends.record(place, session.id, q1.id, "with the pipeline", "sent", lease, { toolCalls: [], lessonIds: ["lesson-1"] });
    expect(traced).toBe(true);
    expect(seen.map((s) => [s.atCommit, s.after])).toEqual([["off", "on"]]);

    seen.length = 0;
    await history.recordDeliveries(place.conversation.id, reply!.id, "C1", ["171.001"]);
    expect(seen.map((s) => [s.atCommit, s.after])).toEqual([["off", "on"]]);

    // Committed rows are every connection's at once: the flush is what waits, not the commit.
    expect(await base.prisma.message.findUnique({ where: { id: reply!.id } })).toMatchObject({ text: "with the pipeline", platformId: "171.001" });
    expect(await base.prisma.replyTrace.findUnique({ where: { messageId: reply!.id } })).toMatchObject({ lessons: JSON.stringify(["lesson-1"]) });
    expect(await base.prisma.delivery.count({ where: { messageId: reply!.id } })).toBe(1);
  });

  it("stores a reply refused under another process's lease as before: nothing, and the connection's setting untouched", async () => {
    const { base, seen, history, ends, o, place, session } = await setUp();
    const q1 = (await history.recordInbound(place, inboundFor(o, "q1"), session.id, leaseOf("other-process")))!;

    seen.length = 0;
    const ended = await ends.record(place, session.id, q1.id, "late", "sent", leaseOf("this-process"), { toolCalls: [], lessonIds: [] });
    expect(ended).toEqual({ reply: null, traced: false });
    expect(seen.map((s) => s.after)).toEqual(["on"]);
    expect(await base.prisma.message.count({ where: { replyToId: q1.id } })).toBe(0);
  });
});
