/** Start-up problems said as one sentence with what to fix, from the errors the drivers really raise. */
import net from "node:net";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.ts";
import { databaseProblem, listenProblem } from "../../src/app/startup-errors.ts";
import { uniqueId } from "../support/db.ts";

const failureOf = async (url: string): Promise<unknown> => {
  try {
    const db = await openDatabase(url);
    await db.close();
  } catch (err) {
    return err;
  }
  throw new Error(`expected ${url} to fail`);
};

describe("start-up problems", () => {
  it("names an unreachable PostgreSQL and a missing database", async () => {
    const down = "postgresql://postgres@127.0.0.1:1/cairn";
    expect(databaseProblem(down, await failureOf(down))).toBe(
      "could not reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED): start it, or point DATABASE_URL at a running server.",
    );
    const name = uniqueId("cairn_missing").toLowerCase();
    const missing = `postgresql://postgres@127.0.0.1:5432/${name}`;
    expect(databaseProblem(missing, await failureOf(missing))).toBe(`PostgreSQL at 127.0.0.1:5432 has no database "${name}": create it (createdb ${name}) or fix DATABASE_URL.`);
  });

  it("names an SQLite path that cannot be opened", async () => {
    const url = "file:/sys/cairn.db";
    expect(databaseProblem(url, await failureOf(url))).toMatch(/^could not open the SQLite file \/sys\/cairn\.db \((?:SQLITE_CANTOPEN|EACCES|EROFS|ENOENT|EPERM)\): make sure its folder exists and is writable/);
  });

  it("names a port in use", async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const port = (holder.address() as net.AddressInfo).port;
    const second = net.createServer();
    const err = await new Promise<unknown>((resolve) => {
      second.once("error", resolve);
      second.listen(port, "127.0.0.1");
    });
    holder.close();
    expect(listenProblem(err, port)).toBe(`port ${port} is already in use: stop what holds it, or set PORT to a free one.`);
    expect(listenProblem(new Error("something else"), port)).toBeNull();
  });
});
