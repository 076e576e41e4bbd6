/**
 * A few PostgreSQL connections in pipeline mode for the direct path's short statements: each
 * statement is written at once, behind those still under way on its connection, instead of
 * waiting for a connection of its own. In a burst (200 new conversations) a pooled connection runs
 * one statement per round trip, and each round trip wakes the server's process and this one: on a
 * 2-core machine those wake-ups, not the statements, were most of the burst's time (a loopback
 * write took 46-130 µs). Pipelined, the server runs what is queued back to back and the answers
 * come back several to a read: 8,000 short statements from 200 callers took 276 ms on 4 lanes
 * (231 on 8) against 443 ms on a pool of 10, at about half the CPU here (bench/README.md).
 *
 * Each statement is its own implicit transaction (its own Sync): one refused does not touch the
 * others on its lane. A lane whose connection is lost fails what is under way on it, as a pooled
 * connection would, and is opened afresh for the next statement. A lane holding a prepared
 * statement that no longer fits the schema (pg-pool.ts, STALE_STATEMENT) is retired once what is
 * under way on it is done, and a new one takes its place. Long statements (searches) do not come
 * here: one would hold up every statement behind it on its lane (direct.ts, `scan`).
 */
import type pg from "pg";
import { connectionLost, type StatementConfig } from "./pg-pool.ts";

interface Lane {
  client: pg.Client;
  ready: Promise<void>;
  /** Statements sent and not yet answered. */
  pending: number;
  /** Lost or retired: no new statement goes to it. */
  closed: boolean;
}

export class PgLanes {
  private readonly lanes: (Lane | null)[];
  private ended = false;

  /** `Client`: pg's, passed in so that SQLite deployments never load pg. */
  constructor(
    private readonly Client: typeof pg.Client,
    private readonly config: pg.ClientConfig,
    count: number,
  ) {
    this.lanes = Array.from({ length: count }, () => null);
  }

  async query(config: StatementConfig): Promise<pg.QueryResult> {
    if (this.ended) throw new Error("the database connections are closed");
    const lane = this.pick();
    lane.pending++;
    try {
      await lane.ready;
      return await lane.client.query(config);
    } catch (err) {
      // A statement the server refused leaves the lane as it was; anything else closes it.
      if (connectionLost(err)) this.close(lane);
      throw err;
    } finally {
      lane.pending--;
      if (lane.closed && lane.pending === 0) void lane.client.end().catch(() => {});
    }
  }

  /**
   * Opens every lane now: when the database is opened, not inside the first turns' statements (in
   * a burst right after start, connecting took 40 ms of its first round here). A lane that cannot
   * connect is left closed, and the next statement opens it again, as it would have anyway.
   */
  async openAll(): Promise<void> {
    const ready = this.lanes.map((lane, i) => {
      const open = lane && !lane.closed ? lane : (this.lanes[i] = this.open());
      return open.ready.catch(() => {});
    });
    await Promise.all(ready);
  }

  /** The first idle lane, else the one with the fewest statements under way; a missing or closed one is opened. */
  private pick(): Lane {
    let best = -1;
    for (let i = 0; i < this.lanes.length; i++) {
      const lane = this.lanes[i];
      if (!lane || lane.closed) {
        const opened = this.open();
        this.lanes[i] = opened;
        return opened;
      }
      if (lane.pending === 0) return lane;
      if (best < 0 || lane.pending < this.lanes[best]!.pending) best = i;
    }
    return this.lanes[best]!;
  }

  private open(): Lane {
    const client = new this.Client({ ...this.config, pipeline: true });
    const lane: Lane = { client, ready: Promise.resolve(), pending: 0, closed: false };
    // A socket that dies emits 'error'; the statements under way reject on their own.
    client.on("error", () => this.close(lane));
    client.on("end", () => this.close(lane));
    lane.ready = client.connect().then(
      () => undefined,
      (err: unknown) => {
        this.close(lane);
        throw err;
      },
    );
    return lane;
  }

  private close(lane: Lane): void {
    if (lane.closed) return;
    lane.closed = true;
    const i = this.lanes.indexOf(lane);
    if (i >= 0) this.lanes[i] = null;
    if (lane.pending === 0) void lane.client.end().catch(() => {});
  }

  async end(): Promise<void> {
    this.ended = true;
    const open = this.lanes.filter((l): l is Lane => l !== null);
    this.lanes.fill(null);
    await Promise.all(open.map((l) => l.ready.then(() => l.client.end()).catch(() => {})));
  }
}
