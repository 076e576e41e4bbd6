/**
 * The blast radius of a team write (team-reach.ts) on Slack and Discord, on SQLite and PostgreSQL,
 * in approval mode (the default) and in open mode. The console has no channels and no reactions.
 */
import { describe } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { teamReachContract } from "./team-reach.ts";
import { DiscordDriver } from "./discord-driver.ts";
import { SlackDriver } from "./slack-driver.ts";

forEachDatabase("team write reach", (getDb) => {
  describe("slack", () => teamReachContract(new SlackDriver(), getDb, "approval"));
  describe("discord", () => teamReachContract(new DiscordDriver(), getDb, "approval"));
  describe("slack, CAIRN_TEAM_WRITES=open", () => teamReachContract(new SlackDriver(), getDb, "open"));
  describe("discord, CAIRN_TEAM_WRITES=open", () => teamReachContract(new DiscordDriver(), getDb, "open"));
});
