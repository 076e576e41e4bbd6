import { describe, expect, it } from "vitest";
import { deadHere, machineKey, newOwner, parseOwner } from "../../src/turn/lease-owner.ts";

describe("lease owners", () => {
  it("name this machine, the pid and a random part, and parse back", () => {
    const owner = newOwner("host-a/4026531836", 4242);
    expect(parseOwner(owner)).toEqual({ machine: "host-a/4026531836", pid: 4242 });
    expect(newOwner("host-a/1", 4242)).not.toBe(newOwner("host-a/1", 4242));
    // A host name with colons (an IPv6-ish name) still parses from the right.
    expect(parseOwner("fe80::1/7:99:abcdef01")).toEqual({ machine: "fe80::1/7", pid: 99 });
    expect(parseOwner("dead-host:1")).toBeNull();
    expect(parseOwner("anything")).toBeNull();
  });

  it("call an owner dead only on this machine, with a pid that no longer runs", () => {
    const here = machineKey();
    const runs = (pid: number) => pid === 100;
    expect(deadHere(`${here}:200:0123abcd`, here, runs)).toBe(true);
    expect(deadHere(`${here}:100:0123abcd`, here, runs)).toBe(false);
    expect(deadHere(`elsewhere/1:200:0123abcd`, here, runs)).toBe(false);
    expect(deadHere("not-an-owner", here, runs)).toBe(false);
    // This process is never dead to itself.
    expect(deadHere(`${here}:${process.pid}:0123abcd`, here, () => false)).toBe(false);
    // The real check: this process runs.
    expect(deadHere(`${here}:${process.ppid}:0123abcd`)).toBe(false);
  });
});
