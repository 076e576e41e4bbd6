import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { checkConfig, ConfigError, configSchema, loadConfig } from "../../src/app/config.ts";
import { agentSettings } from "../../src/app/settings.ts";

describe("config", () => {
  it("applies defaults to an empty environment", () => {
    const cfg = loadConfig({});
    expect(cfg.DATABASE_URL).toBe("file:./data/cairn.db");
    expect(cfg.CAIRN_MODEL).toMatch(/^claude-sonnet-/);
    expect(cfg.CAIRN_SUMMARY_MODEL).toMatch(/^claude-haiku-/);
    // The review runs on the main model unless one is named.
    expect(cfg.CAIRN_REVIEW_MODEL).toBeUndefined();
    expect(cfg.CAIRN_CORRECTION_EMOJI).toEqual(["👎", "❌"]);
    expect(cfg.CAIRN_REVIEW_EVERY_TURNS).toBe(10);
    expect(cfg.CAIRN_SESSION_IDLE_MINUTES).toBe(120);
    expect(cfg.CAIRN_TOOL_ITERATIONS).toBe(20);
    expect(cfg.ANTHROPIC_API_KEY).toBeUndefined();
    expect(cfg.CAIRN_ADMINS).toEqual([]);
  });

  it("coerces numbers and splits lists", () => {
    const cfg = loadConfig({ CAIRN_MEMORY_TEAM_CHARS: "3000", CAIRN_ADMINS: "slack:U1, discord:42 ,", ANTHROPIC_API_KEY: " k " });
    expect(cfg.CAIRN_MEMORY_TEAM_CHARS).toBe(3000);
    expect(cfg.CAIRN_ADMINS).toEqual(["slack:U1", "discord:42"]);
    expect(cfg.ANTHROPIC_API_KEY).toBe("k");
  });

  it("reads who may share with the whole team alone: approval by default, open on request, teachers as platform-prefixed ids", () => {
    const def = loadConfig({});
    expect(def.CAIRN_TEAM_WRITES).toBe("approval");
    expect(def.CAIRN_TEACHERS).toEqual([]);
    const cfg = loadConfig({ CAIRN_TEAM_WRITES: "Open", CAIRN_TEACHERS: "slack:U1, discord:42" });
    expect(cfg.CAIRN_TEAM_WRITES).toBe("open");
    expect(cfg.CAIRN_TEACHERS).toEqual(["slack:U1", "discord:42"]);
    const bad = checkConfig({ CAIRN_TEAM_WRITES: "sometimes", CAIRN_TEACHERS: "U1" });
    expect(bad.problems.join("\n")).toMatch(/CAIRN_TEAM_WRITES: expected approval \(the default\) or open/);
    expect(bad.problems.join("\n")).toMatch(/CAIRN_TEACHERS.*expected platform-prefixed ids/);
  });

  it("screens shared writes unless CAIRN_SCREEN=off, with the summary model unless one is named", () => {
    const on = agentSettings(loadConfig({}));
    expect(on.screen).toEqual({ enabled: true });
    const named = agentSettings(loadConfig({ CAIRN_SCREEN: "ON", CAIRN_SCREEN_MODEL: "claude-haiku-5-5" }));
    expect(named.screen).toEqual({ enabled: true, model: "claude-haiku-5-5" });
    expect(agentSettings(loadConfig({ CAIRN_SCREEN: "off" })).screen).toEqual({ enabled: false });
    expect(checkConfig({ CAIRN_SCREEN: "maybe" }).problems.join("\n")).toMatch(/CAIRN_SCREEN: expected on \(the default\) or off/);
  });

  it("names every wrong variable and what it expects", () => {
    let caught: unknown;
    try {
      loadConfig({ DATABASE_URL: "mysql://x", CAIRN_TOOL_ITERATIONS: "lots", ANTHROPIC_BASE_URL: "not a url" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const msg = (caught as ConfigError).message;
    expect(msg).toContain("DATABASE_URL");
    expect(msg).toContain("postgresql://");
    expect(msg).toContain("CAIRN_TOOL_ITERATIONS");
    expect(msg).toContain('"lots"');
    expect(msg).toContain("ANTHROPIC_BASE_URL");
    expect((caught as ConfigError).problems).toHaveLength(3);
  });

  it("says a wrong number in words: not a whole number, or out of its range; empty is its default", () => {
    const said = (value: string): string[] => checkConfig({ CAIRN_MAX_CONCURRENCY: value }).problems;
    expect(said("lots")).toEqual(['CAIRN_MAX_CONCURRENCY must be a whole number, got "lots"']);
    expect(said("2.5")).toEqual(['CAIRN_MAX_CONCURRENCY must be a whole number, got "2.5"']);
    expect(said(" 5000 ")).toEqual(["CAIRN_MAX_CONCURRENCY must be between 1 and 1024, got 5000"]);
    expect(said("0")).toEqual(["CAIRN_MAX_CONCURRENCY must be between 1 and 1024, got 0"]);
    // Empty is unset, as for every other setting (it used to read as 0).
    expect(checkConfig({ CAIRN_MAX_CONCURRENCY: "", CAIRN_REVIEW_EVERY_TURNS: " " }).config).toMatchObject({ CAIRN_MAX_CONCURRENCY: 64, CAIRN_REVIEW_EVERY_TURNS: 10 });
    expect(loadConfig({ CAIRN_MAX_CONCURRENCY: " 8 " }).CAIRN_MAX_CONCURRENCY).toBe(8);
  });

  it("reads the operator's model prices as JSON, and says how to write them when they are not", () => {
    expect(checkConfig({}).config?.CAIRN_MODEL_PRICES).toBeUndefined();
    expect(checkConfig({ CAIRN_MODEL_PRICES: '{"claude-sonnet-5-5": {"input": 3, "output": 15}}' }).config?.CAIRN_MODEL_PRICES).toEqual({ "claude-sonnet-5-5": { input: 3, output: 15 } });
    for (const bad of ["{claude: 3}", '{"claude-x": {"input": -1, "output": 2}}', '{"claude-x": 3}']) {
      expect(checkConfig({ CAIRN_MODEL_PRICES: bad }).problems.join("\n")).toMatch(/CAIRN_MODEL_PRICES\S* must be JSON like/);
    }
  });

  it("refuses platform settings that do not work together", () => {
    expect(() => loadConfig({ SLACK_BOT_TOKEN: "xoxb-1" })).toThrow(/neither SLACK_APP_TOKEN \(Socket Mode\) nor SLACK_SIGNING_SECRET/);
    expect(() => loadConfig({ SLACK_APP_TOKEN: "xapp-1" })).toThrow(/without SLACK_BOT_TOKEN/);
    expect(() => loadConfig({ DISCORD_TOKEN: "t" })).toThrow(/DISCORD_APPLICATION_ID/);
    expect(loadConfig({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s" }).SLACK_BOT_TOKEN).toBe("xoxb-1");
  });

  it("lists every problem at once: invalid variables and, among the valid ones, those that disagree", () => {
    const check = checkConfig({ CAIRN_MAX_CONCURRENCY: "lots", DISCORD_TOKEN: "t", CAIRN_CURATOR_STALE_DAYS: "40", DISCORD_GUILD_ID: "x" });
    expect(check.problems).toHaveLength(4);
    expect(check.problems[0]).toBe('CAIRN_MAX_CONCURRENCY must be a whole number, got "lots"');
    expect(check.problems[1]).toMatch(/^DISCORD_GUILD_ID: expected a Discord id/);
    expect(check.problems.slice(2)).toEqual([
      "DISCORD_TOKEN is set without DISCORD_APPLICATION_ID: copy the application id from the developer portal",
      "CAIRN_CURATOR_ARCHIVE_DAYS must be more than CAIRN_CURATOR_STALE_DAYS: a skill goes stale before it is archived",
    ]);
    expect([...check.invalid]).toEqual(["CAIRN_MAX_CONCURRENCY", "DISCORD_GUILD_ID"]);
    // The rest of the settings are read, the invalid ones at their defaults.
    expect(check.config).toMatchObject({ CAIRN_MAX_CONCURRENCY: 64, DISCORD_TOKEN: "t", CAIRN_CURATOR_STALE_DAYS: 40 });
    // A disagreement about a variable that is itself invalid is not said twice.
    expect(checkConfig({ DISCORD_TOKEN: "t", DISCORD_APPLICATION_ID: "nope" }).problems).toEqual([expect.stringMatching(/^DISCORD_APPLICATION_ID: expected a Discord id/)]);
  });

  it("reads the schedules: defaults, six-field expressions, zones; a bad expression or zone stops start-up naming the variable", () => {
    expect(loadConfig({})).toMatchObject({ CAIRN_CURATOR_CRON: "0 3 * * 0", CAIRN_REPORT_CRON: "0 9 * * 1", CAIRN_TIMEZONE: "UTC" });
    expect(loadConfig({ CAIRN_CURATOR_CRON: "*/2 * * * * *", CAIRN_REPORT_CRON: "", CAIRN_TIMEZONE: "europe/paris" })).toMatchObject({
      CAIRN_CURATOR_CRON: "*/2 * * * * *",
      CAIRN_REPORT_CRON: "0 9 * * 1",
      CAIRN_TIMEZONE: "Europe/Paris",
    });
    let caught: unknown;
    try {
      loadConfig({ CAIRN_CURATOR_CRON: "0 25 * * *", CAIRN_REPORT_CRON: "every monday", CAIRN_TIMEZONE: "Mars/Olympus" });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const [curator, report, zone] = (caught as ConfigError).problems;
    expect(curator).toBe('CAIRN_CURATOR_CRON: expected a cron expression like "0 3 * * 0" (minute hour day-of-month month weekday, optionally seconds first): 25 is a invalid expression for hour (got "0 25 * * *")');
    expect(report).toMatch(/^CAIRN_REPORT_CRON: expected a cron expression .*\(got "every monday"\)$/);
    expect(zone).toBe('CAIRN_TIMEZONE: expected an IANA time zone like Europe/Paris, America/New_York or UTC (got "Mars/Olympus")');
  });

  it("reads the health port and host: unset is none, a wrong port is named, PORT itself in Slack's HTTP mode is refused", () => {
    for (const env of [{}, { CAIRN_HEALTH_PORT: "", CAIRN_HEALTH_HOST: "" }]) {
      const cfg = loadConfig(env);
      expect([cfg.CAIRN_HEALTH_PORT, cfg.CAIRN_HEALTH_HOST]).toEqual([undefined, undefined]);
    }
    expect(loadConfig({ CAIRN_HEALTH_PORT: " 9464 ", CAIRN_HEALTH_HOST: "127.0.0.1" })).toMatchObject({ CAIRN_HEALTH_PORT: 9464, CAIRN_HEALTH_HOST: "127.0.0.1" });
    for (const bad of ["metrics", "0", "70000", "80.5"]) {
      expect(() => loadConfig({ CAIRN_HEALTH_PORT: bad }), bad).toThrow(new RegExp(`CAIRN_HEALTH_PORT: expected a port.*\\(got "${bad}"\\)`));
    }
    const http = { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s", PORT: "3000" };
    expect(() => loadConfig({ ...http, CAIRN_HEALTH_PORT: "3000" })).toThrow(/CAIRN_HEALTH_PORT is PORT/);
    expect(loadConfig({ ...http, CAIRN_HEALTH_PORT: "9464" }).CAIRN_HEALTH_PORT).toBe(9464);
    // Without Slack's HTTP mode nothing else listens on PORT.
    expect(loadConfig({ CAIRN_HEALTH_PORT: "3000" }).CAIRN_HEALTH_PORT).toBe(3000);
  });

  it("documents every variable of the schema in .env.example", () => {
    const example = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
    for (const key of Object.keys(configSchema.shape)) expect(example, key).toMatch(new RegExp(`^#? ?${key}=`, "m"));
  });
});
