/**
 * Vector distance on SQLite: sqlite-vec (prebuilt in npm, loaded into the connection) compares int8
 * vectors in C inside the statement that applies the asker's scope, so a search reads no vector into
 * JavaScript. Where the extension cannot load (a platform without a prebuilt build), the same two
 * functions are defined in JavaScript: one statement for both, slower by the per-row call.
 */
import type BetterSqlite3 from "better-sqlite3";
import { createRequire } from "node:module";
import { cosine } from "../ground/vector.ts";

export type VectorFunctions = "sqlite-vec" | "javascript";

export function loadVectorFunctions(client: BetterSqlite3.Database): VectorFunctions {
  try {
    const sqliteVec = createRequire(import.meta.url)("sqlite-vec") as { load(db: BetterSqlite3.Database): void };
    sqliteVec.load(client);
    return "sqlite-vec";
  } catch {
    defineJavascriptVectorFunctions(client);
    return "javascript";
  }
}

/** sqlite-vec's two functions as cairn calls them (int8 blobs, cosine distance), in JavaScript. */
export function defineJavascriptVectorFunctions(client: BetterSqlite3.Database): void {
  const bytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? v : new Uint8Array(0));
  client.function("vec_int8", { deterministic: true }, (v: unknown) => Buffer.from(bytes(v)));
  client.function("vec_distance_cosine", { deterministic: true }, (a: unknown, b: unknown) => 1 - cosine(bytes(a), bytes(b)));
}
