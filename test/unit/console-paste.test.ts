/**
 * The paste reader between stdin and readline: keystrokes pass, a bracketed paste is held whole
 * (markers cut anywhere by chunk boundaries, CR newlines, any length) behind a placeholder that
 * `expand` turns back into the pasted text, and bracketed paste follows raw mode.
 */
import { describe, expect, it } from "vitest";
import { PasteReader } from "../../src/platforms/console/paste.ts";

const START = "\u001b[200~";
const END = "\u001b[201~";

/** Feeds `chunks` through a reader and returns what readline would get, as one string. */
async function through(reader: PasteReader, chunks: string[]): Promise<string> {
  let out = "";
  reader.on("data", (d: Buffer) => (out += d.toString("utf8")));
  const ended = new Promise((resolve) => reader.on("end", resolve));
  for (const c of chunks) reader.write(Buffer.from(c, "utf8"));
  reader.end();
  await ended;
  return out;
}

describe("PasteReader", () => {
  it("passes keystrokes, arrows included, untouched", async () => {
    const reader = new PasteReader(null, () => {});
    expect(await through(reader, ["helo", "\u001b[D", "l\r"])).toBe("helo\u001b[Dl\r");
  });

  it("turns a multi-line paste into one placeholder, and expand gives back every line", async () => {
    const reader = new PasteReader(null, () => {});
    const lines = ["Deploy runbook:", "1. make release", "2. wait for the canary", "3. deployctl promote"];
    const out = await through(reader, [`/learn ${START}${lines.join("\r")}${END}`, "\r"]);
    expect(out).toBe("/learn [paste #1: 4 lines]\r");
    expect(reader.expand("/learn [paste #1: 4 lines]")).toBe(`/learn ${lines.join("\n")}`);
  });

  it("finds markers cut across chunks, one byte at a time, and multi-byte characters cut with them", async () => {
    const reader = new PasteReader(null, () => {});
    const text = `a ${START}é line\r\nand “another”${END} b`;
    const bytes = [...Buffer.from(text, "utf8")].map((b) => Buffer.from([b]).toString("latin1"));
    let out = "";
    reader.on("data", (d: Buffer) => (out += d.toString("utf8")));
    for (const b of bytes) reader.write(Buffer.from(b, "latin1"));
    reader.end();
    await new Promise((resolve) => reader.on("end", resolve));
    expect(out).toBe("a [paste #1: 2 lines] b");
    expect(reader.expand(out)).toBe("a é line\nand “another” b");
  });

  it("keeps a 10,000-character paste whole, and types a short one-line paste into the line without its control characters", async () => {
    const reader = new PasteReader(null, () => {});
    const long = "x".repeat(10_000);
    const out = await through(reader, [`${START}${long}${END}`, ` ${START}short\u001b[Aone${END}`]);
    expect(out).toBe("[paste #1: 10,000 chars] short[Aone");
    expect(reader.expand("[paste #1: 10,000 chars]")).toBe(long);
    // A placeholder the reader never made stays as typed.
    expect(reader.expand("[paste #9: 2 lines]")).toBe("[paste #9: 2 lines]");
  });

  it("follows raw mode: the terminal wraps pastes exactly while readline has it raw", () => {
    const modes: boolean[] = [];
    const bracketed: boolean[] = [];
    const reader = new PasteReader({ setRawMode: (m) => modes.push(m) }, (on) => bracketed.push(on));
    reader.setRawMode(true);
    reader.setRawMode(true);
    reader.setRawMode(false);
    expect(modes).toEqual([true, true, false]);
    expect(bracketed).toEqual([true, false]);
    expect(reader.isRaw).toBe(false);
  });
});
