/**
 * The learning loop (learning.ts) on every platform, on SQLite and PostgreSQL. The console has no
 * reactions and no channels: there it is a correction typed in words, in the DM.
 */
import { describe } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { learningContract } from "./learning.ts";
import { DiscordDriver } from "./discord-driver.ts";
import { SlackDriver } from "./slack-driver.ts";
import { ConsoleDriver } from "./console-driver.ts";

forEachDatabase("learning loop", (getDb) => {
  describe("slack", () => learningContract(new SlackDriver(), getDb));
  describe("discord", () => learningContract(new DiscordDriver(), getDb));
  // No reactions: a correction typed in words is how the console teaches.
  describe("console", () => learningContract(new ConsoleDriver(), getDb));
});
