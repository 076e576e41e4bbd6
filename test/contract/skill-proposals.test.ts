/**
 * Team skills improved by proposal (skill-proposals.ts) on Slack and Discord, on SQLite and
 * PostgreSQL. The console has no reactions and no channels: a review there (a DM) only suggests.
 */
import { describe } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { skillProposalContract } from "./skill-proposals.ts";
import { DiscordDriver } from "./discord-driver.ts";
import { SlackDriver } from "./slack-driver.ts";

forEachDatabase("team skill proposals", (getDb) => {
  describe("slack", () => skillProposalContract(new SlackDriver(), getDb));
  describe("discord", () => skillProposalContract(new DiscordDriver(), getDb));
});
