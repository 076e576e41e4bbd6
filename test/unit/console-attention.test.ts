/**
 * Warnings kept out of the terminal chat: with `onProblem` the logger writes every line to its file
 * and none to stderr, and the console's notice says so in one line, at most once a minute.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/ground/log.ts";
import { Attention, NOTICE_EVERY_MS } from "../../src/platforms/console/attention.ts";

describe("the console's notice of a problem", () => {
  it("prints one line naming the log file, then nothing more for a minute, then again", () => {
    let now = 1_000_000;
    const said: string[] = [];
    const attention = new Attention("./data/cairn.log", (line) => said.push(line), () => now);
    attention.seen();
    attention.seen();
    now += NOTICE_EVERY_MS - 1;
    attention.seen();
    expect(said).toEqual(["(cairn: something went wrong — details in ./data/cairn.log)"]);
    now += 1;
    attention.seen();
    expect(said).toHaveLength(2);
  });

  it("goes where the sink is pointed now, and a sink that throws does not reach the logger", () => {
    const first: string[] = [];
    const later: string[] = [];
    let now = 0;
    const attention = new Attention("x.log", (line) => first.push(line), () => now);
    attention.seen();
    attention.sink = (line) => later.push(line);
    now += NOTICE_EVERY_MS;
    attention.seen();
    expect([first.length, later.length]).toEqual([1, 1]);
    attention.sink = () => {
      throw new Error("terminal closed");
    };
    now += NOTICE_EVERY_MS;
    expect(() => attention.seen()).not.toThrow();
  });
});

describe("a logger with a file and onProblem (the terminal chat)", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("writes every line to the file, tells onProblem of each warning and error, and writes nothing to stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-attention-"));
    dirs.push(dir);
    const file = join(dir, "cairn.log");
    const stderr = new PassThrough();
    let err = "";
    stderr.on("data", (d: Buffer) => (err += d.toString()));
    let problems = 0;
    const log = createLogger("info", { file, stderr, onProblem: () => problems++ });
    log.info("chatter");
    log.warn("a warning");
    log.error("an error");
    await vi.waitFor(() => expect(readFileSync(file, "utf8").split("\n").filter(Boolean)).toHaveLength(3));
    expect(readFileSync(file, "utf8")).toContain('"msg":"a warning"');
    expect(problems).toBe(2);
    expect(err).toBe("");
  });
});
