/**
 * The adapter contract (contract.ts) for every platform cairn runs on, on SQLite and PostgreSQL:
 * one driver per platform, one fake platform, fake model and core per driver and database.
 */
import { describe } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { adapterContract, type Driver } from "./contract.ts";
import { ConsoleDriver } from "./console-driver.ts";
import { DiscordDriver } from "./discord-driver.ts";
import { SlackDriver } from "./slack-driver.ts";

const DRIVERS: [string, () => Driver][] = [
  ["slack", () => new SlackDriver()],
  ["discord", () => new DiscordDriver()],
  ["console", () => new ConsoleDriver()],
];

forEachDatabase("adapter contract", (getDb) => {
  for (const [name, make] of DRIVERS) {
    describe(name, () => adapterContract(make(), getDb));
  }
});
