/**
 * A PostgreSQL statement whose commit does not wait for its write-ahead log to reach the disk:
 * `synchronous_commit` off for its own transaction only (set_config's third argument), set from
 * inside the statement, so it costs no round trip. The rows are visible to every connection the
 * moment it commits, as always; only their durability comes later (PostgreSQL's WAL writer flushes
 * within three `wal_writer_delay`s, 600 ms by default, and so does any synchronous commit after it).
 * What is lost is lost only if the database server or its machine stops in that window (or it
 * fails over to a standby that had not received them: the commit does not wait for a synchronous
 * standby either), never when cairn does.
 *
 * For the writes a turn ends with, which cairn can redo: its reply with its trace, and the reply's
 * post recorded. Lost, the message looks unanswered or its reply unposted after the server's
 * restart, and crash recovery (turn/recovery.ts) answers it again, or records the post it finds
 * on the platform (a second reply at worst). Never for a person's message (the inbound journal
 * lets go of it once it is stored) nor a queued job. SQLite's commits
 * are of this kind already: WAL with `synchronous = NORMAL` survives a process crash, not a power
 * cut (db/client.ts).
 *
 * Use: `WITH …, ${FLUSH_LATER.cte} SELECT … FROM … ${FLUSH_LATER.join}`. A WITH query PostgreSQL
 * is not asked for is never run: the join is what runs it (one row, so it multiplies nothing).
 */
export const FLUSH_LATER = {
  cte: `flush_later AS (SELECT set_config('synchronous_commit', 'off', true))`,
  join: "CROSS JOIN flush_later",
} as const;
