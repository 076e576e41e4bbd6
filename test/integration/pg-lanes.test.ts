/**
 * The direct path's pipelined connections on PostgreSQL (src/db/pg-lanes.ts): many statements at
 * once on a few connections, each answered with its own rows; one the server refuses fails alone;
 * a connection the server ends fails only what was under way on it, and the next statements go on
 * a new one; searches (`scan`) take a pooled connection of their own.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import pg from "pg";
import { PgLanes } from "../../src/db/pg-lanes.ts";
import { ADMIN_URL, freshPostgres, postgresSuite } from "../support/db.ts";

postgresSuite()("pipelined connections for short statements", () => {
  let url = "";
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    ({ url, drop } = await freshPostgres());
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query("CREATE TABLE lane_probe (id serial PRIMARY KEY, v integer UNIQUE)");
    await c.end();
  });
  afterAll(async () => drop());

  const pid = { name: "pid", text: "SELECT pg_backend_pid()", values: [], rowMode: "array" as const };

  it("answers 600 statements sent at once on 4 connections, each with its own rows, in the order each caller sent them", async () => {
    const lanes = new PgLanes(pg.Client, { connectionString: url }, 4);
    try {
      const results = await Promise.all(Array.from({ length: 600 }, (_, i) => lanes.query({ name: "echo", text: "SELECT $1::integer * 2, pg_backend_pid()", values: [i], rowMode: "array" })));
      expect(results.map((r) => r.rows[0]![0])).toEqual(Array.from({ length: 600 }, (_, i) => i * 2));
      const backends = new Set(results.map((r) => r.rows[0]![1]));
      expect(backends.size).toBeLessThanOrEqual(4);
      expect(backends.size).toBeGreaterThan(1);
      // One caller's statements, one after another, see each other's writes.
      const a = await lanes.query({ name: "ins", text: "INSERT INTO lane_probe (v) VALUES ($1) RETURNING id", values: [1], rowMode: "array" });
      const read = await lanes.query({ name: "get", text: "SELECT v FROM lane_probe WHERE id = $1", values: [a.rows[0]![0]], rowMode: "array" });
      expect(read.rows).toEqual([[1]]);
    } finally {
      await lanes.end();
    }
  });

  it("fails only the statement the server refuses; those beside it on its connection are answered", async () => {
    const lanes = new PgLanes(pg.Client, { connectionString: url }, 1);
    try {
      const before = (await lanes.query(pid)).rows[0]![0];
      const sent = [
        lanes.query({ name: "ins", text: "INSERT INTO lane_probe (v) VALUES ($1) RETURNING id", values: [10], rowMode: "array" }),
        lanes.query({ name: "ins", text: "INSERT INTO lane_probe (v) VALUES ($1) RETURNING id", values: [10], rowMode: "array" }),
        lanes.query({ text: "SELECT 1 / 0", rowMode: "array" }),
        lanes.query({ name: "ins", text: "INSERT INTO lane_probe (v) VALUES ($1) RETURNING id", values: [11], rowMode: "array" }),
      ];
      const [first, duplicate, divided, after] = await Promise.allSettled(sent);
      expect(first?.status).toBe("fulfilled");
      expect(duplicate).toMatchObject({ status: "rejected", reason: { code: "23505" } });
      expect(divided).toMatchObject({ status: "rejected", reason: { code: "22012" } });
      expect(after?.status).toBe("fulfilled");
      // Refused statements do not cost the connection, and neither row was lost to them.
      expect((await lanes.query(pid)).rows[0]![0]).toBe(before);
      const rows = await lanes.query({ text: "SELECT v FROM lane_probe WHERE v IN (10, 11) ORDER BY v", rowMode: "array" });
      expect(rows.rows).toEqual([[10], [11]]);
    } finally {
      await lanes.end();
    }
  });

  it("goes on, on a new connection, after the server ended the one in use", async () => {
    const lanes = new PgLanes(pg.Client, { connectionString: url }, 1);
    try {
      const first = (await lanes.query(pid)).rows[0]![0] as number;
      const admin = new pg.Client({ connectionString: ADMIN_URL });
      await admin.connect();
      // A statement under way when the server ends its process fails; the next ones do not.
      const slow = lanes.query({ text: "SELECT pg_sleep(2)", rowMode: "array" }).then(() => "answered", (err: unknown) => err);
      await new Promise((r) => setTimeout(r, 100));
      await admin.query("SELECT pg_terminate_backend($1)", [first]);
      await admin.end();
      expect(await slow).toMatchObject({ code: "57P01" });
      const next = (await lanes.query(pid)).rows[0]![0];
      expect(next).not.toBe(first);
      expect((await lanes.query(pid)).rows[0]![0]).toBe(next);
    } finally {
      await lanes.end();
    }
  });

  it("opens its connections when asked, before any statement, and answers on them", async () => {
    const name = `lanes-${process.pid}-${Date.now()}`;
    const lanes = new PgLanes(pg.Client, { connectionString: url, application_name: name }, 3);
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      const connected = async (): Promise<number[]> => (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid", [name])).rows.map((r) => r.pid);
      expect(await connected()).toEqual([]);
      await lanes.openAll();
      const pids = await connected();
      expect(pids).toHaveLength(3);
      // Statements at once spread over the connections already open: no new one is made.
      const answered = await Promise.all(Array.from({ length: 9 }, () => lanes.query(pid)));
      expect(new Set(answered.map((r) => r.rows[0]![0] as number))).toEqual(new Set(pids));
      expect(await connected()).toEqual(pids);
    } finally {
      await admin.end();
      await lanes.end();
    }
  });

  it("refuses statements once closed", async () => {
    const lanes = new PgLanes(pg.Client, { connectionString: url }, 2);
    await lanes.query(pid);
    await lanes.end();
    await expect(lanes.query(pid)).rejects.toThrow(/closed/);
  });
});
