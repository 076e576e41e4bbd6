/**
 * The probe set written before the trust-boundary rules changed (test/fixtures/threats/probes/,
 * 16 languages): what the pattern scanner is responsible for, it must do on every line. Every secret
 * is gone from what would be stored, except a bare hex string (the same shape as a commit id or a
 * checksum, which the benign set keeps); every harmless line, public keys included, is stored as
 * written. Lines that ask cairn to behave differently (standing instructions, planted authority, ...)
 * are the screen's and the approval's to stop: `npm run bench -- probes` reports them.
 */
import { describe, expect, it } from "vitest";
import { loadProbes } from "../../bench/probes.ts";
import { scanForWrite } from "../../src/safety/scanner.ts";

describe("probe set", () => {
  const hostile = loadProbes("hostile");
  const benign = loadProbes("benign");

  it("is the size the issue asks for, in at least ten languages", () => {
    expect(hostile.length).toBeGreaterThanOrEqual(100);
    expect(benign.length).toBeGreaterThanOrEqual(100);
    expect(new Set([...hostile, ...benign].map((l) => l.lang)).size).toBeGreaterThanOrEqual(10);
  });

  it("removes every secret a probe line carries, and says what it removed", () => {
    const lines = hostile.filter((l) => l.expect === "redact" && !(l.secrets ?? []).every((s) => /^[0-9a-f]+$/i.test(s)));
    expect(lines.length).toBeGreaterThan(50);
    const missed = lines.flatMap((l) => {
      const v = scanForWrite(l.text);
      if (!v.ok) return [];
      const left = (l.secrets ?? []).filter((s) => v.text.includes(s));
      return left.length > 0 || v.redactions.length === 0 ? [`${l.lang}: ${l.text}`] : [];
    });
    expect(missed).toEqual([]);
  });

  it("stores every harmless probe line as written", () => {
    const altered = benign.flatMap((l) => {
      const v = scanForWrite(l.text);
      return v.ok && v.text === l.text ? [] : [`${l.category}/${l.lang}: ${l.text}`];
    });
    expect(altered).toEqual([]);
  });
});
