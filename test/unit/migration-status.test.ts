import { describe, expect, it } from "vitest";
import { compareMigrations } from "../../src/db/migration-status.ts";
import { migrationLine } from "../../src/doctor/database-check.ts";

const file = (name: string, checksum = `sum-${name}`) => ({ name, sql: "", checksum });
const row = (name: string, checksum = `sum-${name}`, finished = true) => ({ name, checksum, finished });

describe("which migrations a database has (cairn doctor)", () => {
  it("passes pending ones (cairn applies them at start), and says all is applied when it is", () => {
    const files = [file("1_init"), file("2_index"), file("3_table")];
    const status = compareMigrations(files, [row("1_init"), row("2_index")]);
    expect(status).toEqual({ applied: ["1_init", "2_index"], pending: ["3_table"], unknown: [], changed: [], unfinished: [] });
    expect(migrationLine(status)).toEqual({ ok: true, label: "migrations", detail: "1 migration not applied yet (3_table): will be applied at start" });
    expect(migrationLine(compareMigrations(files, []))).toEqual({ ok: true, label: "migrations", detail: "a new database: all 3 will be applied at start" });
    expect(migrationLine(compareMigrations(files, files.map((f) => row(f.name))))).toEqual({ ok: true, label: "migrations", detail: "all 3 applied, none pending" });
  });

  it("names migrations edited after they were applied, started and never finished, or from a newer cairn", () => {
    const files = [file("1_init"), file("2_index")];
    expect(migrationLine(compareMigrations(files, [row("1_init", "other"), row("2_index")]))).toMatchObject({ ok: false, detail: "1_init changed after it was applied (checksum differs)" });
    const unfinished = compareMigrations(files, [row("1_init"), row("2_index", "sum-2_index", false)]);
    expect(unfinished).toMatchObject({ pending: ["2_index"], unfinished: ["2_index"] });
    expect(migrationLine(unfinished).detail).toBe("2_index started and never finished");
    const newer = compareMigrations(files, [row("1_init"), row("2_index"), row("3_future")]);
    expect(migrationLine(newer)).toMatchObject({ ok: false, detail: "the database has 1 migration this build of cairn does not: 3_future" });
    // A pending one does not hide one this build does not know: still a problem.
    expect(migrationLine(compareMigrations(files, [row("1_init"), row("3_future")]))).toMatchObject({ ok: false, detail: "the database has 1 migration this build of cairn does not: 3_future" });
  });
});
