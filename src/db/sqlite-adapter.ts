/**
 * Prisma's better-sqlite3 adapter as cairn runs it: compiled statements are kept
 * (`sqlite-statements.ts`) and transactions hold the connection's gate (`sqlite-gate.ts`), so no
 * other query runs inside a transaction it is not part of.
 */
import BetterSqlite3 from "better-sqlite3";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { cacheStatements } from "./sqlite-statements.ts";
import { TransactionGate } from "./sqlite-gate.ts";
import { loadVectorFunctions, type VectorFunctions } from "./sqlite-vectors.ts";

type Adapter = Awaited<ReturnType<PrismaBetterSqlite3["connect"]>>;
type Transaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

/** Makes the adapter's own statements wait at the gate, and its transactions hold it. */
function gated(adapter: Adapter, gate: TransactionGate): Adapter {
  const queryRaw = adapter.queryRaw.bind(adapter);
  const executeRaw = adapter.executeRaw.bind(adapter);
  const executeScript = adapter.executeScript.bind(adapter);
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.queryRaw = async (query) => {
    await gate.pass();
    return queryRaw(query);
  };
  adapter.executeRaw = async (query) => {
    await gate.pass();
    return executeRaw(query);
  };
  adapter.executeScript = async (script) => {
    await gate.pass();
    return executeScript(script);
  };
  adapter.startTransaction = async (isolationLevel) => {
    await gate.lock();
    let tx: Transaction;
    try {
      tx = await startTransaction(isolationLevel);
    } catch (err) {
      gate.unlock();
      throw err;
    }
    // Prisma sends COMMIT or ROLLBACK through the transaction, then calls one of these.
    const commit = tx.commit.bind(tx);
    const rollback = tx.rollback.bind(tx);
    tx.commit = () => commit().finally(() => gate.unlock());
    tx.rollback = () => rollback().finally(() => gate.unlock());
    return tx;
  };
  return adapter;
}

export class SqliteAdapter extends PrismaBetterSqlite3 {
  readonly gate = new TransactionGate();
  private client: BetterSqlite3.Database | null = null;
  /** Where vector distance is computed (sqlite-vectors.ts), once connected. */
  vectorFunctions: VectorFunctions | null = null;

  override async connect(): Promise<Adapter> {
    const adapter = await super.connect();
    const client: unknown = Reflect.get(adapter, "client");
    // Direct statements (direct.ts) need the connection: an adapter that stops exposing it fails loudly here.
    if (!(client instanceof BetterSqlite3)) throw new Error("@prisma/adapter-better-sqlite3 no longer exposes its connection (adapter.client)");
    cacheStatements(client);
    this.vectorFunctions = loadVectorFunctions(client);
    this.client = client;
    return gated(adapter, this.gate);
  }

  /** The connection Prisma's statements run on, once Prisma has connected. */
  connection(): BetterSqlite3.Database {
    if (!this.client) throw new Error("the SQLite connection is not open yet");
    return this.client;
  }
}
