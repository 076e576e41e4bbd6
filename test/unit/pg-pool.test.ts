import { describe, expect, it } from "vitest";
import { connectionLost } from "../../src/db/pg-pool.ts";

/** An error as pg reports one from the server. */
const fromServer = (severity: string, code: string): Error => Object.assign(new Error(`${severity} ${code}`), { severity, code });

describe("which failed statements cost their connection", () => {
  it("keeps the connection after the server refused a statement", () => {
    expect(connectionLost(undefined)).toBeUndefined();
    expect(connectionLost(fromServer("ERROR", "23505"))).toBeUndefined(); // unique violation
    expect(connectionLost(fromServer("ERROR", "22012"))).toBeUndefined(); // division by zero
    expect(connectionLost(fromServer("ERROR", "55P03"))).toBeUndefined(); // lock not available
  });

  it("closes it when it may be gone, or holds a statement that no longer fits the schema", () => {
    expect(connectionLost(fromServer("FATAL", "57P01"))).toBeInstanceOf(Error); // terminated by an admin
    expect(connectionLost(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBeInstanceOf(Error);
    expect(connectionLost(fromServer("ERROR", "0A000"))).toBeInstanceOf(Error); // cached plan must not change result type
    expect(connectionLost(fromServer("ERROR", "26000"))).toBeInstanceOf(Error); // prepared statement does not exist
    expect(connectionLost("a string thrown")).toBeInstanceOf(Error);
  });
});
