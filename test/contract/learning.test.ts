/**
 * The learning loop (learning.ts) on every platform with reactions, on SQLite and PostgreSQL. The
 * console has no reactions; its corrections come through /cairn learn and plain replies.
 */
import { describe } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { learningContract } from "./learning.ts";
import { DiscordDriver } from "./discord-driver.ts";
import { SlackDriver } from "./slack-driver.ts";

forEachDatabase("learning loop", (getDb) => {
  describe("slack", () => learningContract(new SlackDriver(), getDb));
  describe("discord", () => learningContract(new DiscordDriver(), getDb));
});
