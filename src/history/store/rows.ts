/**
 * HistoryStore's statements on the direct path (db/direct.ts), per provider, and the rows they
 * read made back into the types Prisma would have returned: store a message, read a session's
 * turns, find the workspace, person and conversation a message resolves to (creating the person
 * and conversation), a rename and the conversation's last message time. The rest of HistoryStore
 * (a new workspace, deliveries) stays on Prisma.
 *
 * Times: SQLite keeps Prisma's ISO text, read back with `new Date`; PostgreSQL's timestamp columns
 * are selected as epoch milliseconds, because pg would read a timestamp without zone as local time.
 */
import type { Conversation, Message, Person, Workspace } from "../../db/generated/sqlite/client.ts";
import { sqlTime, timeColumn, type SqlParam } from "../../db/direct.ts";
import { checkedOnRows } from "../../db/checked-on-rows.ts";
import { FLUSH_LATER } from "../../db/flush-later.ts";
import type { Provider } from "../../db/migrate.ts";

export interface HistorySql {
  /** Placeholders: the Message columns in MESSAGE_COLUMNS order; returns the new id. */
  insertMessage: string;
  /** A person's message: no row back when the conversation has this platform message already. */
  insertInbound: string;
  /**
   * `insertInbound` for many messages at once, in one statement: its parameters are
   * `db/insert-batch.ts`'s `manyParams` of the messages' values (MESSAGE_COLUMNS order): on
   * PostgreSQL one array per column, on SQLite one JSON array of rows. Returns id, conversation id
   * and platform id of each message stored; a duplicate returns no row.
   */
  insertInboundMany: string;
  /** `insertMessage` for many replies, as `insertInboundMany`; returns id and replyToId of each. */
  insertReplyMany: string;
  /**
   * `insertHeldReply` for many replies of one lease owner: the messages' parameters, then the owner.
   * Returns id and replyToId of each reply stored.
   */
  insertHeldReplyMany: string;
  /**
   * The same insert, made only while the message it answers (`replyToId`) is leased to the reply's
   * lease owner: a process whose turn was taken over stores nothing. Returns no row then.
   */
  insertHeldReply: string;
  /**
   * A session's person messages with ids in (after, through], each with its reply and context
   * block, in the conversation and workspace given. Placeholders: workspace id, conversation id,
   * session id, after, through, after, through. It seeks the (sessionId, id) index; the scope is
   * checked on the session's rows found there.
   */
  sessionMessages: string;
  /**
   * `sessionMessages` with one more column, the same on every row: a scalar subquery, so another
   * read of the same turn rides on this one's round trip. Its placeholders: PostgreSQL's from $8;
   * SQLite's `?` come before the WHERE's in the text, so their values go first.
   */
  sessionMessagesWith: (column: string) => string;
  /**
   * PostgreSQL only: `sessionMessagesWith` for several reads in one statement, over arrays (workspace
   * ids, conversation ids, session ids, afters, throughs, then the columns' own: person ids, times,
   * lease owners, times, message ids) read as `r` (ws, conv, sess, lo, hi, person, since, owner, at,
   * mid), each read's rows found as that read alone finds them (a LATERAL subquery). `column` is
   * written over `r`. Each row ends with its read's number, from 1; rows in the reads' order, each
   * read's by id.
   */
  sessionMessagesMany: ((column: string) => string) | null;
  /** Placeholders: workspace id, external id. */
  person: string;
  /**
   * A new person, PERSON_COLUMNS' values in order; no row back when the workspace has them already
   * (another message's insert won the race: read them with `person`).
   */
  insertPerson: string;
  /** A new conversation, CONVERSATION_COLUMNS' values in order; no row back when its key exists already. */
  insertConversation: string;
  /** Placeholder: the conversation key. */
  conversation: string;
  /**
   * PostgreSQL only (null on SQLite, where a statement is a call, not a round trip): `person` and
   * `insertPerson` in one statement, a data-modifying CTE taking `insertPerson`'s placeholders. The
   * row found or made, then a last column, true when made; no row when another insert won the race.
   */
  findOrInsertPerson: string | null;
  /** `conversation` and `insertConversation` the same way (PostgreSQL only). */
  findOrInsertConversation: string | null;
  /**
   * PostgreSQL only: `findOrInsertPerson` for many people at once, each placeholder an array of one
   * column's values (PERSON_COLUMNS order): each person's row, found or made, with the same last column.
   */
  findOrInsertPersonMany: string | null;
  /** `findOrInsertConversation` for many conversations at once, as `findOrInsertPersonMany`. */
  findOrInsertConversationMany: string | null;
  /** Placeholders: platform, external id. */
  workspace: string;
  /** A person's new display name. Placeholders: the name, the time (updatedAt), the person's id. */
  rename: string;
  /** Placeholders: the time, the conversation's id. */
  touchConversation: string;
  /**
   * A posted reply recorded: its platform id set and its Delivery rows written, all or nothing.
   * PostgreSQL, `one` statement (a data-modifying CTE). Placeholders: the first part's platform id,
   * the reply's id, its conversation, the channel, arrays of the rows' ids and platform ids, the
   * time. SQLite has no such CTE: `update` (the platform id, the reply's id, its conversation), then
   * `insert` (the channel, the time, a JSON array of [id, platform id] rows, the reply's id, its
   * conversation) in one transaction (DirectSql.chain). Either returns a row per delivery written;
   * none when the conversation has no such message. PostgreSQL's commit of it does not wait for the
   * disk (db/flush-later.ts): lost with the server, recovery finds the reply unposted.
   *
   * PostgreSQL's `many`: several replies' posts in one statement (delivery-batch.ts), over arrays of
   * their parts: reply id, conversation, channel, delivery id, platform id, time, the part's number
   * (0: the reply's own platform id). Returns the reply's id per delivery written.
   */
  recordDeliveries: { one: string; many: string } | { update: string; insert: string };
}

/** Written by HistoryStore's insertMessage in this order: every Message field but id. */
export const MESSAGE_COLUMNS = ["workspaceId", "conversationId", "sessionId", "authorId", "role", "text", "platformId", "status", "replyToId", "createdAt", "leaseOwner", "leaseUntil", "admitted", "link"] as const;
const PERSON_COLUMNS = ["id", "workspaceId", "externalId", "displayName", "isBot", "createdAt", "updatedAt"] as const;
const WORKSPACE_COLUMNS = ["id", "platform", "externalId", "name", "createdAt"] as const;
const CONVERSATION_COLUMNS = ["id", "workspaceId", "key", "channelId", "threadId", "isDm", "ownerId", "createdAt", "lastMessageAt", "kind", "reviewedMemoryThrough", "reviewedSkillsThrough"] as const;
const TIMES = new Set<string>(["createdAt", "updatedAt", "lastMessageAt", "leaseUntil"]);
/**
 * PostgreSQL types of the columns written here that are not text: an INSERT ... SELECT casts each
 * parameter (a bare one in a select list is typed text), and `unnest` takes typed arrays.
 */
const PG_TYPES: Record<string, string> = {
  replyToId: "integer",
  leaseUntil: "timestamp(3)",
  admitted: "boolean",
  isBot: "boolean",
  isDm: "boolean",
  createdAt: "timestamp(3)",
  updatedAt: "timestamp(3)",
  lastMessageAt: "timestamp(3)",
  reviewedMemoryThrough: "integer",
  reviewedSkillsThrough: "integer",
};

/** The turns of a session; `p` numbers a placeholder, `q` quotes a column. */
const sessionWhere = (p: (n: number) => string, q: (c: string) => string): string =>
  `(role = 'user' AND id > ${p(4)} AND id <= ${p(5)}) OR (role IN ('assistant', 'context') AND ${q("replyToId")} > ${p(6)} AND ${q("replyToId")} <= ${p(7)} AND (role = 'context' OR status <> 'failed'))`;

function sqlFor(provider: Provider): HistorySql {
  const pg = provider === "postgresql";
  const q = (c: string): string => (pg ? `"${c}"` : c);
  const p = (n: number): string => (pg ? `$${n}` : "?");
  const select = (columns: readonly string[]): string =>
    columns.map((c) => (TIMES.has(c) ? timeColumn(provider, q(c)) : q(c))).join(", ");
  const cast = (c: string, param: string): string => (pg && PG_TYPES[c] ? `CAST(${param} AS ${PG_TYPES[c]})` : param);
  // SQLite: the session read, on every turn, names its index, and its values reach the planner as
  // (SELECT ?), which it does not look into. better-sqlite3's SQLite is built with STAT4: once the
  // database has statistics (ANALYZE), a statement whose plan could turn on a bound value is planned
  // again at every run (about 25 us here, a third of reading a session's rows), and planned from
  // statistics without the values it read every message of the range (1.3 ms; bench/README.md,
  // "2026-12-07 (2)").
  const sessionFrom = pg ? q("Message") : `Message INDEXED BY Message_sessionId_id_idx`;
  const opaque = (n: number): string => (pg ? p(n) : "(SELECT ?)");
  // The scope's columns checked on the rows found, never used to find them (db/checked-on-rows.ts):
  // they cannot draw the planner off the session's index (SQLite, given statistics, took the
  // (conversationId, id) index for a session id of no row; PostgreSQL, without statistics, the
  // workspace's index and the conversation's together).
  const sessionRead = (extra: string, at = opaque): string =>
    `SELECT id, ${select(MESSAGE_COLUMNS)}${extra} FROM ${sessionFrom} WHERE ${checkedOnRows(provider, "workspaceId", at(1))} AND ${checkedOnRows(provider, "conversationId", at(2))} AND ${q("sessionId")} = ${at(3)} AND (${sessionWhere(at, q)}) ORDER BY id`;
  // A read's placeholders as the columns of `r`, its row among the reads (sessionMessagesMany).
  const ofRead = (n: number): string => ["r.ws", "r.conv", "r.sess", "r.lo", "r.hi", "r.lo", "r.hi"][n - 1]!;
  const reads = `unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::integer[], $6::text[], $7::timestamp(3)[], $8::text[], $9::timestamp(3)[], $10::integer[]) WITH ORDINALITY AS r(ws, conv, sess, lo, hi, person, since, owner, at, mid, i)`;
  const insertOf = (table: string, columns: readonly string[]): string => `INSERT INTO ${q(table)} (${columns.map(q).join(", ")}) VALUES (${columns.map((_, i) => p(i + 1)).join(", ")})`;
  // The find and the insert as one statement: the insert runs only when the find saw no row, and
  // does nothing when a concurrent insert won (then neither part returns a row).
  const findOrInsert = (table: string, columns: readonly string[], where: string, conflict: string): string | null => {
    if (!pg) return null;
    const found = `SELECT ${select(columns)}, false FROM ${q(table)} WHERE ${where}`;
    const made = `INSERT INTO ${q(table)} (${columns.map(q).join(", ")}) SELECT ${columns.map((c, i) => `CAST(${p(i + 1)} AS ${PG_TYPES[c] ?? "text"})`).join(", ")} WHERE NOT EXISTS (SELECT 1 FROM found) ON CONFLICT (${conflict}) DO NOTHING RETURNING ${select(columns)}, true`;
    return `WITH found AS (${found}), made AS (${made}) SELECT * FROM found UNION ALL SELECT * FROM made`;
  };
  // The same for many rows: `v` holds the rows asked for; each is found, or else made.
  const findOrInsertMany = (table: string, columns: readonly string[], keys: readonly string[], conflict: string): string | null => {
    if (!pg) return null;
    const v = `SELECT * FROM unnest(${columns.map((c, i) => `${p(i + 1)}::${PG_TYPES[c] ?? "text"}[]`).join(", ")}) AS v(${columns.map(q).join(", ")})`;
    const inTable = (alias: string): string => columns.map((c) => (TIMES.has(c) ? timeColumn(provider, `${alias}.${q(c)}`) : `${alias}.${q(c)}`)).join(", ");
    const same = keys.map((k) => `t.${q(k)} = v.${q(k)}`).join(" AND ");
    const found = `SELECT ${inTable("t")}, false FROM ${q(table)} t JOIN v ON ${same}`;
    const made = `INSERT INTO ${q(table)} (${columns.map(q).join(", ")}) SELECT * FROM v WHERE NOT EXISTS (SELECT 1 FROM ${q(table)} t WHERE ${same}) ON CONFLICT (${conflict}) DO NOTHING RETURNING ${select(columns)}, true`;
    return `WITH v AS (${v}), found AS (${found}), made AS (${made}) SELECT * FROM found UNION ALL SELECT * FROM made`;
  };
  // Many messages as rows `v` of their columns: PostgreSQL zips one array per column (unnest), SQLite
  // reads the rows of one JSON array (json_each); either way one statement text for any number.
  const manyRows = pg
    ? `unnest(${MESSAGE_COLUMNS.map((c, i) => `${p(i + 1)}::${PG_TYPES[c] ?? "text"}[]`).join(", ")}) AS v(${MESSAGE_COLUMNS.map(q).join(", ")})`
    : `(SELECT ${MESSAGE_COLUMNS.map((c, i) => `value ->> ${i} AS ${c}`).join(", ")} FROM json_each(?) ORDER BY key) AS v`;
  // WHERE true: SQLite reads an ON CONFLICT after a SELECT without WHERE as part of a join.
  const insertMany = `INSERT INTO ${q("Message")} (${MESSAGE_COLUMNS.map(q).join(", ")}) SELECT * FROM ${manyRows} WHERE true`;
  const heldOwner = pg ? p(MESSAGE_COLUMNS.length + 1) : "?";
  const insertRow = `INSERT INTO ${q("Message")} (${MESSAGE_COLUMNS.map(q).join(", ")}) VALUES (${MESSAGE_COLUMNS.map((_, i) => p(i + 1)).join(", ")})`;
  return {
    insertMessage: `${insertRow} RETURNING id`,
    // A duplicate (a platform's retry, another replica's copy) is no error: an error would be logged
    // by PostgreSQL and would cost the pool its connection (pg-pool drops a client whose query failed).
    insertInbound: `${insertRow} ON CONFLICT (${q("conversationId")}, ${q("platformId")}) DO NOTHING RETURNING id`,
    insertInboundMany: `${insertMany} ON CONFLICT (${q("conversationId")}, ${q("platformId")}) DO NOTHING RETURNING id, ${q("conversationId")}, ${q("platformId")}`,
    insertReplyMany: `${insertMany} RETURNING id, ${q("replyToId")}`,
    insertHeldReplyMany: `${insertMany} AND EXISTS (SELECT 1 FROM ${q("Message")} m WHERE m.id = v.${q("replyToId")} AND m.${q("leaseOwner")} = ${heldOwner}) RETURNING id, ${q("replyToId")}`,
    insertHeldReply: `INSERT INTO ${q("Message")} (${MESSAGE_COLUMNS.map(q).join(", ")}) SELECT ${MESSAGE_COLUMNS.map((c, i) => cast(c, p(i + 1))).join(", ")} WHERE EXISTS (SELECT 1 FROM ${q("Message")} WHERE id = ${p(MESSAGE_COLUMNS.length + 1)} AND ${q("leaseOwner")} = ${p(MESSAGE_COLUMNS.length + 2)}) RETURNING id`,
    sessionMessages: sessionRead(""),
    sessionMessagesWith: (column) => sessionRead(`, ${column}`),
    // OFFSET 0 keeps the subquery its own: each read seeks its session as it would alone.
    sessionMessagesMany: pg ? (column) => `SELECT m.*, r.i FROM ${reads} CROSS JOIN LATERAL (${sessionRead(`, ${column}`, ofRead)} OFFSET 0) m ORDER BY r.i, m.id` : null,
    person: `SELECT ${select(PERSON_COLUMNS)} FROM ${q("Person")} WHERE ${q("workspaceId")} = ${p(1)} AND ${q("externalId")} = ${p(2)}`,
    insertPerson: `${insertOf("Person", PERSON_COLUMNS)} ON CONFLICT (${q("workspaceId")}, ${q("externalId")}) DO NOTHING RETURNING ${select(PERSON_COLUMNS)}`,
    insertConversation: `${insertOf("Conversation", CONVERSATION_COLUMNS)} ON CONFLICT (${q("key")}) DO NOTHING RETURNING ${select(CONVERSATION_COLUMNS)}`,
    conversation: `SELECT ${select(CONVERSATION_COLUMNS)} FROM ${q("Conversation")} WHERE ${q("key")} = ${p(1)}`,
    // Placeholders as the inserts': the workspace and external id are $2 and $3, the key is $3.
    findOrInsertPerson: findOrInsert("Person", PERSON_COLUMNS, `${q("workspaceId")} = ${p(2)} AND ${q("externalId")} = ${p(3)}`, `${q("workspaceId")}, ${q("externalId")}`),
    findOrInsertConversation: findOrInsert("Conversation", CONVERSATION_COLUMNS, `${q("key")} = ${p(3)}`, q("key")),
    findOrInsertPersonMany: findOrInsertMany("Person", PERSON_COLUMNS, ["workspaceId", "externalId"], `${q("workspaceId")}, ${q("externalId")}`),
    findOrInsertConversationMany: findOrInsertMany("Conversation", CONVERSATION_COLUMNS, ["key"], q("key")),
    workspace: `SELECT ${select(WORKSPACE_COLUMNS)} FROM ${q("Workspace")} WHERE ${q("platform")} = ${p(1)} AND ${q("externalId")} = ${p(2)}`,
    rename: `UPDATE ${q("Person")} SET ${q("displayName")} = ${p(1)}, ${q("updatedAt")} = ${p(2)} WHERE id = ${p(3)}`,
    touchConversation: `UPDATE ${q("Conversation")} SET ${q("lastMessageAt")} = ${p(1)} WHERE id = ${p(2)}`,
    recordDeliveries: pg
      ? {
          one:
            `WITH reply AS (UPDATE "Message" SET "platformId" = $1 WHERE id = $2 AND "conversationId" = $3 RETURNING id, "workspaceId", "conversationId"), ${FLUSH_LATER.cte} ` +
            `INSERT INTO "Delivery" (id, "workspaceId", "conversationId", "messageId", "channelId", "platformId", "createdAt") ` +
            `SELECT d.id, reply."workspaceId", reply."conversationId", reply.id, $4, d.pid, CAST($7 AS timestamp(3)) FROM reply ${FLUSH_LATER.join} CROSS JOIN unnest($5::text[], $6::text[]) AS d(id, pid) RETURNING "messageId"`,
          many:
            `WITH v AS (SELECT * FROM unnest($1::integer[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamp(3)[], $7::integer[]) AS v(reply, conv, channel, id, pid, at, part)), ` +
            `reply AS (UPDATE "Message" m SET "platformId" = v.pid FROM v WHERE v.part = 0 AND m.id = v.reply AND m."conversationId" = v.conv RETURNING m.id, m."workspaceId", m."conversationId"), ${FLUSH_LATER.cte} ` +
            `INSERT INTO "Delivery" (id, "workspaceId", "conversationId", "messageId", "channelId", "platformId", "createdAt") ` +
            `SELECT v.id, reply."workspaceId", reply."conversationId", reply.id, v.channel, v.pid, v.at FROM v JOIN reply ON reply.id = v.reply AND reply."conversationId" = v.conv ${FLUSH_LATER.join} ORDER BY v.reply, v.part RETURNING "messageId"`,
        }
      : {
          update: `UPDATE Message SET platformId = ? WHERE id = ? AND conversationId = ?`,
          insert:
            `INSERT INTO Delivery (id, workspaceId, conversationId, messageId, channelId, platformId, createdAt) ` +
            `SELECT d.value ->> 0, m.workspaceId, m.conversationId, m.id, ?, d.value ->> 1, ? FROM Message m, json_each(?) d WHERE m.id = ? AND m.conversationId = ? ORDER BY d.key RETURNING messageId`,
        },
  };
}

export const HISTORY_SQL: Record<Provider, HistorySql> = { sqlite: sqlFor("sqlite"), postgresql: sqlFor("postgresql") };

/** A row's values in `columns` order for an insert: times as `sqlTime`, booleans as 1 and 0. */
function valuesOf<T extends object>(provider: Provider, columns: readonly (keyof T & string)[], row: T): SqlParam[] {
  return columns.map((c) => {
    const v: unknown = row[c];
    if (v instanceof Date) return sqlTime(provider, v);
    if (typeof v === "boolean") return v ? 1 : 0;
    return v as SqlParam;
  });
}

/** A new person's values, as `insertPerson` takes them. */
export const personParams = (provider: Provider, person: Person): SqlParam[] => valuesOf(provider, PERSON_COLUMNS, person);
/** A new conversation's values, as `insertConversation` takes them. */
export const conversationParams = (provider: Provider, conversation: Conversation): SqlParam[] => valuesOf(provider, CONVERSATION_COLUMNS, conversation);

/** A message's values in MESSAGE_COLUMNS order, as the insert statements take them. */
export function messageParams(provider: Provider, m: Omit<Message, "id">): SqlParam[] {
  return MESSAGE_COLUMNS.map((c) => {
    if (c === "createdAt" || c === "leaseUntil") return m[c] && sqlTime(provider, m[c]);
    // Both databases read 1 and 0 as booleans (SQLite keeps them so).
    if (c === "admitted") return m[c] ? 1 : 0;
    return m[c];
  });
}

/** A message of cairn's in a conversation, stored now: a reply (`replyToId`) or a post it started. */
export function assistantRow(
  conversation: Pick<Conversation, "id" | "workspaceId">,
  sessionId: string | null,
  text: string,
  status: "sent" | "failed",
  replyToId: number | null,
): Omit<Message, "id"> {
  const at = { workspaceId: conversation.workspaceId, conversationId: conversation.id };
  return { ...at, sessionId, authorId: null, role: "assistant", text, platformId: null, status, replyToId, createdAt: new Date(), leaseOwner: null, leaseUntil: null, admitted: false, link: null };
}

const timeOf = (v: unknown): Date => new Date(v as string | number);
/** SQLite keeps booleans as 0 and 1. */
const boolOf = (v: unknown): boolean => v === true || v === 1;

/** A Message from a row of `sessionMessages`. */
export function messageOf(r: readonly unknown[]): Message {
  return {
    id: Number(r[0]),
    workspaceId: r[1] as string,
    conversationId: r[2] as string,
    sessionId: r[3] as string | null,
    authorId: r[4] as string | null,
    role: r[5] as string,
    text: r[6] as string,
    platformId: r[7] as string | null,
    status: r[8] as string,
    replyToId: r[9] === null ? null : Number(r[9]),
    createdAt: timeOf(r[10]),
    leaseOwner: r[11] as string | null,
    leaseUntil: r[12] === null ? null : timeOf(r[12]),
    admitted: boolOf(r[13]),
    link: r[14] as string | null,
  };
}

export function personOf(r: readonly unknown[]): Person {
  return {
    id: r[0] as string,
    workspaceId: r[1] as string,
    externalId: r[2] as string,
    displayName: r[3] as string | null,
    isBot: boolOf(r[4]),
    createdAt: timeOf(r[5]),
    updatedAt: timeOf(r[6]),
  };
}

export function workspaceOf(r: readonly unknown[]): Workspace {
  return { id: r[0] as string, platform: r[1] as string, externalId: r[2] as string, name: r[3] as string | null, createdAt: timeOf(r[4]) };
}

export function conversationOf(r: readonly unknown[]): Conversation {
  return {
    id: r[0] as string,
    workspaceId: r[1] as string,
    key: r[2] as string,
    channelId: r[3] as string,
    threadId: r[4] as string | null,
    isDm: boolOf(r[5]),
    ownerId: r[6] as string | null,
    createdAt: timeOf(r[7]),
    lastMessageAt: timeOf(r[8]),
    kind: r[9] as string,
    reviewedMemoryThrough: r[10] === null ? null : Number(r[10]),
    reviewedSkillsThrough: r[11] === null ? null : Number(r[11]),
  };
}
