/**
 * The data folders cairn makes (the SQLite file's, the console log's, the journal's): created when
 * missing, and a folder that cannot be made is refused at once, with its code, never retried.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeFolders } from "../../src/ground/paths.ts";
import { openDatabase } from "../../src/db/client.ts";
import { databaseProblem } from "../../src/app/startup-errors.ts";

describe("makeFolders", () => {
  const dir = mkdtempSync(join(tmpdir(), "cairn-folders-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("makes every missing folder, and is content with one that exists", () => {
    const deep = join(dir, "a", "b", "c");
    makeFolders(deep);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(() => makeFolders(deep)).not.toThrow();
  });

  it("throws the refusal as it is, where a file stands in the way", () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    expect(() => makeFolders(join(file, "x", "y"))).toThrow(expect.objectContaining({ code: "ENOTDIR", syscall: "mkdir", path: join(file, "x") }));
  });

  it("says why the database cannot be opened: its folder could not be made", async () => {
    const file = join(dir, "another-file");
    writeFileSync(file, "");
    const url = `file:${join(file, "data", "cairn.db")}`;
    const err: unknown = await openDatabase(url).then(
      () => null,
      (e: unknown) => e,
    );
    expect(databaseProblem(url, err)).toBe(`could not create the folder ${join(file, "data")} for the SQLite file ${join(file, "data", "cairn.db")} (ENOTDIR): set DATABASE_URL to a file in a folder cairn may write.`);
  });
});
