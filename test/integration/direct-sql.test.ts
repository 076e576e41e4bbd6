/**
 * The direct path (src/db/direct.ts): messages written and read below Prisma must be the rows Prisma
 * would write and read, and a direct statement is never part of another caller's transaction.
 */
import { expect, it } from "vitest";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { sqlTime } from "../../src/db/direct.ts";
import { readSnapshot, SessionManager } from "../../src/agent/sessions.ts";
import { SessionStore } from "../../src/agent/session-store.ts";
import pg from "pg";
import { ADMIN_URL, forEachDatabase, inboundFor, uniqueId, type Database, type PlaceOptions } from "../support/db.ts";

/** A workspace row written below Prisma (id, external id), returning its external id. */
function workspaceInsert(db: Database): string {
  return db.provider === "postgresql"
    ? `INSERT INTO "Workspace" (id, platform, "externalId") VALUES ($1, 'slack', $2) RETURNING "externalId"`
    : `INSERT INTO Workspace (id, platform, externalId, createdAt) VALUES (?, 'slack', ?, '2026-01-01T00:00:00.000+00:00') RETURNING externalId`;
}

forEachDatabase("direct SQL", (getDb) => {
  const opts = (): PlaceOptions => ({ workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false });

  it("stores messages that read back through Prisma field for field, times to the millisecond", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const o = opts();
    const sentAt = new Date(Date.UTC(2026, 1, 3, 4, 5, 6, 789));
    const inbound = inboundFor(o, "the deploy key rotates on fridays", uniqueId("m"), sentAt);
    const place = await history.resolve(inbound);
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const asked = await history.recordInbound(place, inbound, session.id);
    const reply = await history.recordReply(place, session.id, asked!.id, "noted: fridays", "sent");

    const viaPrisma = await db.prisma.message.findMany({ where: { sessionId: session.id }, orderBy: { id: "asc" } });
    // The trigger (migration message_outcome) marked the question answered when the reply went in.
    expect(viaPrisma).toEqual([{ ...asked, status: "answered" }, reply]);
    expect(viaPrisma[0]!.createdAt.toISOString()).toBe("2026-02-03T04:05:06.789Z");
    expect(reply.createdAt.getTime()).toBeGreaterThan(sentAt.getTime());

    // And what the direct read returns is what Prisma reads.
    const read = await history.sessionMessages(scopeOf(place), session.id, null, asked!.id);
    expect(read.map(({ author: _author, ...m }) => m)).toEqual(viaPrisma);
    expect(read[0]!.author?.id).toBe(place.person.id);
  });

  it("reads rows Prisma wrote, with the same ordering by turn and failed replies left out", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const o = opts();
    const place = await history.resolve(inboundFor(o, "hi"));
    const session = await db.prisma.chatSession.create({ data: { conversationId: place.conversation.id } });
    const base = { workspaceId: place.workspace.id, conversationId: place.conversation.id, sessionId: session.id };
    const q1 = await db.prisma.message.create({ data: { ...base, authorId: place.person.id, role: "user", text: "q1", platformId: uniqueId("p") } });
    const q2 = await db.prisma.message.create({ data: { ...base, authorId: place.person.id, role: "user", text: "q2", platformId: uniqueId("p") } });
    // Stored after q2 but answering q1: history orders by turn, not by id.
    await db.prisma.message.create({ data: { ...base, role: "assistant", text: "a1", status: "sent", replyToId: q1.id } });
    await db.prisma.message.create({ data: { ...base, role: "context", text: "c2", replyToId: q2.id } });
    await db.prisma.message.create({ data: { ...base, role: "assistant", text: "sorry", status: "failed", replyToId: q2.id } });
    const read = await history.sessionMessages(scopeOf(place), session.id, null, q2.id);
    expect(read.map((m) => m.text)).toEqual(["q1", "a1", "c2", "q2"]);
    expect((await history.sessionMessages(scopeOf(place), session.id, q1.id, q2.id)).map((m) => m.text)).toEqual(["c2", "q2"]);
  });

  it("finds the person and conversation a message comes from as Prisma reads them, DMs and bots included", async () => {
    const db = getDb();
    const o: PlaceOptions = { workspace: uniqueId("ws"), user: "UBOT", channel: "D1", isDm: true };
    const inbound = { ...inboundFor(o, "hello"), author: { externalId: "UBOT", displayName: "Build Bot", isBot: true } };
    const created = await new HistoryStore(db).resolve(inbound);
    // A second store has nothing cached: it finds both rows on the direct path.
    const found = await new HistoryStore(db).resolve(inbound);
    expect(found.person).toEqual(await db.prisma.person.findFirst({ where: { id: created.person.id } }));
    expect(found.conversation).toEqual(await db.prisma.conversation.findFirst({ where: { id: created.conversation.id } }));
    expect(found.person.isBot).toBe(true);
    expect(found.conversation.isDm).toBe(true);
    expect(found.conversation.ownerId).toBe(created.person.id);
  });

  it("saves a session's snapshot where Prisma reads it, and the cached session sees it", async () => {
    const db = getDb();
    const sessions = new SessionManager(new SessionStore(db), 60 * 60 * 1000);
    const place = await new HistoryStore(db).resolve(inboundFor(opts(), "hi"));
    const { session } = await sessions.current(scopeOf(place), new Date());
    const snapshot = { shared: "team memory: deploys on thursdays", profiles: { [place.person.id]: "likes short answers" } };
    await sessions.saveSnapshot(session.id, snapshot);
    const stored = await db.prisma.chatSession.findFirst({ where: { id: session.id } });
    expect(stored && readSnapshot(stored)).toEqual(snapshot);
    expect(readSnapshot(await sessions.get(scopeOf(place), session.id))).toEqual(snapshot);
    // Parsed once per text and shared by the session's turns: a new text reads as itself, and what
    // one turn read cannot be changed under another.
    const read = readSnapshot(stored!)!;
    expect(() => {
      read.profiles["someone-else"] = "leaked";
    }).toThrow(TypeError);
    const grown = { ...snapshot, profiles: { ...snapshot.profiles, "person-2": "prefers bullet points" } };
    await sessions.saveSnapshot(session.id, grown);
    expect(readSnapshot((await db.prisma.chatSession.findFirst({ where: { id: session.id } }))!)).toEqual(grown);
    expect(readSnapshot(stored!)).toEqual(snapshot);
  });

  it("reports a platform message stored twice as a retry (null), not an error", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const inbound = inboundFor(opts(), "once only");
    const place = await history.resolve(inbound);
    expect(await history.recordInbound(place, inbound)).not.toBeNull();
    expect(await history.recordInbound(place, inbound)).toBeNull();
    expect(await db.prisma.message.count({ where: { conversationId: place.conversation.id } })).toBe(1);
  });

  /** `work` started while another caller's transaction is open, which is then rolled back. */
  async function duringRollback<T>(work: () => Promise<T>): Promise<T> {
    const db = getDb();
    let opened!: () => void;
    const open = new Promise<void>((r) => (opened = r));
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    const tx = db.prisma
      .$transaction(async (t) => {
        await t.workspace.create({ data: { platform: "slack", externalId: uniqueId("inside") } });
        opened();
        await hold;
        throw new Error("rolled back on purpose");
      })
      .catch((err: Error) => err.message);
    await open;
    const done = work();
    setTimeout(release, 20);
    const result = await done;
    expect(await tx).toBe("rolled back on purpose");
    return result;
  }

  it("keeps a message stored while another caller's transaction is rolled back", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const inbound = inboundFor(opts(), "stored during a rollback");
    const place = await history.resolve(inbound);
    const msg = await duringRollback(() => history.recordInbound(place, inbound));
    expect(await db.prisma.message.findFirst({ where: { id: msg!.id } })).toMatchObject({ text: "stored during a rollback" });
  });

  it("keeps a burst of messages stored together while another caller's transaction is rolled back", async () => {
    const db = getDb();
    const history = new HistoryStore(db);
    const sent = await Promise.all(
      [1, 2, 3, 4].map(async (n) => {
        const inbound = inboundFor(opts(), `burst ${n} during a rollback`);
        return { inbound, place: await history.resolve(inbound) };
      }),
    );
    const msgs = await duringRollback(() => Promise.all(sent.map(({ place, inbound }) => history.recordInbound(place, inbound))));
    const rows = await db.prisma.message.findMany({ where: { id: { in: msgs.map((m) => m!.id) } } });
    expect(rows.map((r) => r.text).sort()).toEqual([1, 2, 3, 4].map((n) => `burst ${n} during a rollback`));
  });

  it("runs a statement once per parameter list in one transaction: the rows of each, or nothing at all", async () => {
    const db = getDb();
    const insert = workspaceInsert(db);
    const a = uniqueId("each");
    const rows = await db.direct.each(insert, [
      [`${a}-1`, `${a}-x1`],
      [`${a}-2`, `${a}-x2`],
    ]);
    expect(rows).toEqual([[[`${a}-x1`]], [[`${a}-x2`]]]);
    // The second list repeats a primary key: the first list's row goes too.
    const b = uniqueId("each");
    await expect(
      db.direct.each(insert, [
        [`${b}-1`, `${b}-x1`],
        [`${a}-1`, `${b}-x2`],
      ]),
    ).rejects.toThrow();
    expect(await db.prisma.workspace.count({ where: { id: { startsWith: b } } })).toBe(0);
    expect(await db.prisma.workspace.count({ where: { id: { startsWith: a } } })).toBe(2);
  });

  it("runs several statements in order in one transaction: the rows of each, or nothing at all", async () => {
    const db = getDb();
    const insert = workspaceInsert(db);
    const rename = db.provider === "postgresql" ? `UPDATE "Workspace" SET name = $1 WHERE id = $2` : `UPDATE Workspace SET name = ? WHERE id = ?`;
    const a = uniqueId("chain");
    const rows = await db.direct.chain([
      [insert, [`${a}-1`, `${a}-x1`]],
      [rename, ["the first", `${a}-1`]],
      [insert, [`${a}-2`, `${a}-x2`]],
    ]);
    expect(rows).toEqual([[[`${a}-x1`]], [], [[`${a}-x2`]]]);
    expect((await db.prisma.workspace.findUnique({ where: { id: `${a}-1` } }))?.name).toBe("the first");
    // The last statement repeats a primary key: the insert and the rename before it go too.
    const b = uniqueId("chain");
    await expect(
      db.direct.chain([
        [insert, [`${b}-1`, `${b}-x1`]],
        [rename, ["renamed, then rolled back", `${a}-2`]],
        [insert, [`${a}-1`, `${b}-x2`]],
      ]),
    ).rejects.toThrow();
    expect(await db.prisma.workspace.count({ where: { id: { startsWith: b } } })).toBe(0);
    expect((await db.prisma.workspace.findUnique({ where: { id: `${a}-2` } }))?.name).toBeNull();
  });

  it("writes times as Prisma does, so both kinds of row compare and sort alike", async () => {
    const db = getDb();
    const at = new Date(Date.UTC(2026, 10, 29, 23, 59, 59, 1));
    const ws = await db.prisma.workspace.create({ data: { platform: "slack", externalId: uniqueId("t"), createdAt: at } });
    const same = db.provider === "sqlite" ? `SELECT count(*) FROM Workspace WHERE id = ? AND createdAt = ?` : `SELECT count(*) FROM "Workspace" WHERE id = $1 AND "createdAt" = $2`;
    const rows = await db.direct.rows(same, [ws.id, sqlTime(db.provider, at)]);
    expect(Number(rows[0]![0])).toBe(1);
  });
});

/**
 * PostgreSQL: pg-pool's own `query` closes a connection whose statement failed; with replicas every
 * duplicate delivery was such a failure, and each cost a new connection (a server process, the
 * prepared statements again): 184 new connections in a 10-second load of two replicas.
 */
forEachDatabase("direct SQL connections", (getDb) => {
  it("keeps its connection after a statement fails, and drops one the server ended", async () => {
    const db = getDb();
    if (db.provider !== "postgresql") return;
    const pid = async () => Number((await db.direct.rows("SELECT pg_backend_pid()", []))[0]![0]);
    const first = await pid();
    // A duplicate is no error at all on the path a person's message takes.
    const history = new HistoryStore(db);
    const inbound = inboundFor({ workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false }, "twice", uniqueId("m"));
    const place = await history.resolve(inbound);
    expect(await history.recordInbound(place, inbound)).not.toBeNull();
    expect(await history.recordInbound(place, inbound)).toBeNull();
    // A statement PostgreSQL refuses leaves the connection as it was.
    await expect(db.direct.rows("SELECT 1 / 0", [])).rejects.toThrow(/division by zero/);
    expect(await pid()).toBe(first);
    // So does one Prisma sends (its adapter queries the same pool): here a unique violation.
    const ws = { platform: "slack", externalId: uniqueId("T") };
    await db.prisma.workspace.create({ data: ws });
    await expect(db.prisma.workspace.create({ data: ws })).rejects.toThrow();
    expect(await pid()).toBe(first);
    // A connection the server ended is not used again (the pool drops it when the server says so, or
    // when a statement on it fails for that): statements go on, on a new one.
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend($1)", [first]);
    await admin.end();
    await db.direct.rows("SELECT 1", []).catch(() => null);
    const next = await pid();
    expect(next).not.toBe(first);
    expect(await pid()).toBe(next);
  });

  it("prepares a statement afresh on a new connection once a migration changed what it returns", async () => {
    const db = getDb();
    if (db.provider !== "postgresql") return;
    const table = `"probe_${uniqueId("t").replace(/\W/g, "_")}"`;
    await db.prisma.$executeRawUnsafe(`CREATE TABLE ${table} (a integer)`);
    await db.prisma.$executeRawUnsafe(`INSERT INTO ${table} VALUES (1)`);
    expect(await db.direct.rows(`SELECT * FROM ${table}`, [])).toEqual([[1]]);
    await db.prisma.$executeRawUnsafe(`ALTER TABLE ${table} ADD COLUMN b integer DEFAULT 2`);
    // The connection's prepared statement no longer fits: refused once, then prepared again.
    const first = await db.direct.rows(`SELECT * FROM ${table}`, []).catch((err: unknown) => err);
    const again = await db.direct.rows(`SELECT * FROM ${table}`, []);
    expect(again).toEqual([[1, 2]]);
    if (first instanceof Error) expect(first.message).toMatch(/cached plan must not change result type/);
    await db.prisma.$executeRawUnsafe(`DROP TABLE ${table}`);
  });
});
