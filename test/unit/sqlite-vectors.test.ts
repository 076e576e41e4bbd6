/**
 * Vector distance on SQLite: sqlite-vec loaded into a connection, and the JavaScript stand-ins used
 * where it cannot load, give the same distances for the int8 vectors cairn keeps.
 */
import BetterSqlite3 from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { defineJavascriptVectorFunctions, loadVectorFunctions } from "../../src/db/sqlite-vectors.ts";
import { quantize } from "../../src/ground/vector.ts";

describe("SQLite vector functions", () => {
  it("sqlite-vec and the JavaScript stand-ins agree on cosine distance", () => {
    const native = new BetterSqlite3(":memory:");
    const stand = new BetterSqlite3(":memory:");
    expect(loadVectorFunctions(native)).toBe("sqlite-vec");
    defineJavascriptVectorFunctions(stand);
    let s = 7;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
    const sql = "SELECT vec_distance_cosine(vec_int8(?), vec_int8(?))";
    for (let i = 0; i < 50; i++) {
      const a = Buffer.from(quantize(Array.from({ length: 64 }, rand)));
      const b = Buffer.from(quantize(Array.from({ length: 64 }, rand)));
      const d1 = native.prepare(sql).pluck().get(a, b) as number;
      const d2 = stand.prepare(sql).pluck().get(a, b) as number;
      expect(d2).toBeCloseTo(d1, 5);
    }
    native.close();
    stand.close();
  });
});
