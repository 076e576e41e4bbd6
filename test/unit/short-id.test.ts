/**
 * How ids are shown short (src/ground/short-id.ts) and which command arguments are looked up as
 * short ids (src/commands/short-id.ts). The lookups themselves, in the asker's scope, are proven on
 * both databases by test/e2e/short-ids.test.ts.
 */
import { describe, expect, it } from "vitest";
import { looksLikeCuid, shortId, shortIds, uniquePrefix } from "../../src/ground/short-id.ts";
import { ambiguousReply, idArgs } from "../../src/commands/short-id.ts";

// Three cuids made in the same instant share their first 9 characters (the time), as real ones do.
const A = "cmx96wkn00004yt7dopl1kk6k";
const B = "cmx96wkn00005yt7dvaconamx";
const C = "cmx97abc00001yt7dzzzzzzzz";

describe("short forms", () => {
  it("shows 8 characters when they tell the ids of one answer apart, more when they do not", () => {
    const short = shortIds([A, B, C]);
    expect(short(C)).toBe("cmx97abc");
    expect(short(A)).toBe("cmx96wkn00004");
    expect(short(B)).toBe("cmx96wkn00005");
    // Each short form starts its id and no other of the answer's.
    for (const id of [A, B, C]) expect([A, B, C].filter((x) => x.startsWith(short(id)))).toEqual([id]);
  });

  it("never cuts below 8 characters, nor past the id", () => {
    expect(uniquePrefix(C, [])).toBe("cmx97abc");
    expect(uniquePrefix("abc", ["abd"])).toBe("abc");
    expect(shortId(A)).toBe("cmx96wkn");
  });

  it("knows a generated id from a name, a number or a platform's id", () => {
    expect(looksLikeCuid(A)).toBe(true);
    for (const s of ["deploy-web", "1700000000.000100", "123456789012345678", A.slice(0, 8)]) expect(looksLikeCuid(s)).toBe(false);
  });
});

describe("which arguments are ids", () => {
  it("finds the id of each command, whatever words come before it", () => {
    expect(idArgs("forget", ["cmx96wkn"])).toEqual([{ index: 0, kinds: ["entry"] }]);
    expect(idArgs("forget", ["me", "confirm"])).toEqual([]);
    expect(idArgs("keep", ["new", "cmx96wkn"])).toEqual([{ index: 1, kinds: ["entry"] }]);
    expect(idArgs("keep", ["cmx96wkn"])).toEqual([{ index: 0, kinds: ["entry"] }]);
    expect(idArgs("verify", ["a1234567", "b1234567"]).map((s) => s.index)).toEqual([0, 1]);
    expect(idArgs("approve", ["x"])[0]!.kinds).toEqual(["entry", "proposal"]);
    expect(idArgs("rollback", ["x"])[0]!.kinds).toEqual(["revision"]);
    expect(idArgs("why", ["x"])[0]!.kinds).toEqual(["post"]);
    expect(idArgs("history", ["persona"])).toEqual([]);
    expect(idArgs("teachers", ["add", "U12345678"])).toEqual([]);
  });

  it("answers an ambiguous prefix with each candidate's short form and words, changing nothing", () => {
    const reply = ambiguousReply("cmx96wkn", [
      { id: A, words: "team fact: The office opens at 9" },
      { id: B, words: "team fact: Lunch is at noon" },
    ]);
    expect(reply).toMatchObject({ ephemeral: true, outcome: "not_found" });
    expect(reply.text.split("\n")).toEqual([
      "`cmx96wkn` is the start of more than one id you can see. Nothing was changed; send the command again with one of these:",
      "- `cmx96wkn00004` team fact: The office opens at 9",
      "- `cmx96wkn00005` team fact: Lunch is at noon",
    ]);
  });
});
