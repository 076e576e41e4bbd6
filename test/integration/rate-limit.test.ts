/**
 * The per-person rate limit on the database (src/admission/rate-limit.ts), below the Core: what
 * counts, and the race two replicas used to lose, made deterministic with a transaction held open.
 */
import pg from "pg";
import { expect, it } from "vitest";
import { RateLimiter } from "../../src/admission/rate-limit.ts";
import { RateStore } from "../../src/admission/rate-store.ts";
import { HistoryStore, scopeOfPerson, type Place } from "../../src/history/store/store.ts";
import { ADMIN_URL, forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";

forEachDatabase("rate limit in the database", (getDb) => {
  const someone = (): PlaceOptions => ({ workspace: uniqueId("ws"), user: "U1", channel: "D1", isDm: true });
  const store = async (history: HistoryStore, at: Place, opts: PlaceOptions, text: string, sentAt: Date): Promise<number> => {
    const stored = await history.recordInbound(at, inboundFor(opts, text, uniqueId("m"), sentAt));
    if (!stored) throw new Error("not stored");
    return stored.id;
  };

  it("admits up to the limit in an hour, marks what it admits, and names when the oldest leaves", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const opts = someone();
    const { place: at } = await place(db, opts);
    const limiter = new RateLimiter(new RateStore(db), 2);
    const t0 = Date.parse("2026-12-02T10:00:00Z");
    const when = (minutes: number): Date => new Date(t0 + minutes * 60_000);

    const first = await store(history, at, opts, "one", when(0));
    expect(await limiter.take(scopeOfPerson(at.person), first, when(0))).toEqual({ ok: true });
    const second = await store(history, at, opts, "two", when(5));
    expect(await limiter.take(scopeOfPerson(at.person), second, when(5))).toEqual({ ok: true });
    const third = await store(history, at, opts, "three", when(10));
    expect(await limiter.take(scopeOfPerson(at.person), third, when(10))).toEqual({ ok: false, retryAfterMs: 50 * 60_000 });
    // Asking again about the same message does not admit it.
    expect((await limiter.take(scopeOfPerson(at.person), third, when(11))).ok).toBe(false);

    const rows = await db.prisma.message.findMany({ where: { authorId: at.person.id }, orderBy: { id: "asc" } });
    expect(rows.map((m) => [m.text, m.admitted])).toEqual([
      ["one", true],
      ["two", true],
      ["three", false],
    ]);
    // An hour after "one", there is room again.
    expect(await limiter.take(scopeOfPerson(at.person), third, when(60.5))).toEqual({ ok: true });
  });

  it("counts a message answered without passing the check (recovered after a crash), and not one that failed", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const opts = someone();
    const { place: at } = await place(db, opts);
    const limiter = new RateLimiter(new RateStore(db), 1);
    const now = new Date();
    const recovered = await store(history, at, opts, "answered by another process", now);
    await db.prisma.message.update({ where: { id: recovered }, data: { status: "answered" } });
    const next = await store(history, at, opts, "next", now);
    expect((await limiter.take(scopeOfPerson(at.person), next, now)).ok).toBe(false);

    const other = someone();
    const { place: theirs } = await place(db, other);
    const failed = await store(history, theirs, other, "the model failed", now);
    expect((await limiter.take(scopeOfPerson(theirs.person), failed, now)).ok).toBe(true);
    await db.prisma.message.update({ where: { id: failed }, data: { status: "failed" } });
    const retry = await store(history, theirs, other, "again", now);
    expect((await limiter.take(scopeOfPerson(theirs.person), retry, now)).ok).toBe(true);
  });

  it("does not let two replicas each admit a message when one was stored but not yet committed as the other counted", async (ctx) => {
    const db = getDb();
    // SQLite serializes writers to one file: a transaction cannot hold a stored row back from another writer.
    if (db.provider !== "postgresql") return ctx.skip();
    const history = new HistoryStore(db);
    const opts = someone();
    const { place: at } = await place(db, opts);
    const limiter = new RateLimiter(new RateStore(db), 1);
    const now = new Date();

    // Replica A stores message X: its id is taken, its transaction not yet committed.
    const [current] = await db.prisma.$queryRawUnsafe<{ name: string }[]>("SELECT current_database() AS name");
    const base = new URL(ADMIN_URL);
    base.pathname = `/${current!.name}`;
    const replicaA = new pg.Client({ connectionString: base.toString() });
    await replicaA.connect();
    try {
      await replicaA.query("BEGIN");
      const inserted = await replicaA.query<{ id: number }>(
        `INSERT INTO "Message" ("workspaceId", "conversationId", "authorId", role, text, "platformId", status, "createdAt")
         VALUES ($1, $2, $3, 'user', 'x', $4, 'received', $5) RETURNING id`,
        [at.workspace.id, at.conversation.id, at.person.id, uniqueId("m"), now.toISOString()],
      );
      const x = inserted.rows[0]!.id;
      // Replica B stores Y (a higher id) and counts while X is invisible to it: Y is admitted.
      const y = await store(history, at, opts, "y", now);
      expect(y).toBeGreaterThan(x);
      expect((await limiter.take(scopeOfPerson(at.person), y, now)).ok).toBe(true);
      await replicaA.query("COMMIT");
      // X, the earlier id, is counted against Y's admission: over a limit of one, it is refused.
      expect((await limiter.take(scopeOfPerson(at.person), x, now)).ok).toBe(false);
    } finally {
      await replicaA.end();
    }
    expect(await db.prisma.message.count({ where: { authorId: at.person.id, admitted: true } })).toBe(1);
  });
});
