/**
 * `cairn doctor` run as a person runs it: `node --import tsx src/cli.ts doctor`, a child process
 * with only the environment given, against the fake Anthropic, Slack and Discord servers and a test
 * database. Exit code 0 only when all is well; otherwise the line that says what is wrong and how
 * to fix it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import pgDriver from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/db/client.ts";
import { loadMigrations } from "../../src/db/migrate.ts";
import { DEFAULT_DIMENSIONS, startFakeEmbeddings } from "../fakes/embeddings.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { APP_TOKEN, BOT_TOKEN, startFakeSlack, type FakeSlack } from "../fakes/slack.ts";
import { startFakeDiscord, type FakeDiscord } from "../fakes/discord.ts";
import { BOT_SCOPES } from "../../src/platforms/slack/scopes.ts";
import { freshPostgres, postgresSuite } from "../support/db.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = pathToFileURL(join(root, "node_modules/tsx/dist/loader.mjs")).href;

interface Run {
  code: number | null;
  lines: string[];
  stderr: string;
}

// Each run starts a Node process that compiles the sources: seconds on a busy machine.
describe("cairn doctor", { timeout: 90_000 }, () => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let dir: string;
  let sqliteUrl: string;

  /**
   * Runs the doctor in an empty folder (no .env there) with `env` and nothing else of this
   * process's environment but PATH and HOME.
   */
  const doctor = (env: Record<string, string>, args: string[] = []): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", tsx, join(root, "src/cli.ts"), "doctor", ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, lines: stdout.trim().split("\n"), stderr }));
    });

  /** Everything configured, and well. */
  const healthy = (): Record<string, string> => ({
    DATABASE_URL: sqliteUrl,
    ANTHROPIC_API_KEY: anthropic.apiKey,
    ANTHROPIC_BASE_URL: anthropic.url,
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_APP_TOKEN: APP_TOKEN,
    SLACK_API_URL: slack.apiUrl,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.apiUrl,
  });
  const line = (run: Run, start: string): string | undefined => run.lines.find((l) => l.startsWith(start));

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: "." });
    slack = await startFakeSlack();
    discord = await startFakeDiscord();
    dir = mkdtempSync(join(tmpdir(), "cairn-doctor-"));
    sqliteUrl = `file:${join(dir, "cairn.db")}`;
    // A database cairn has started on once: every migration applied.
    await (await openDatabase(sqliteUrl)).close();
  });
  afterAll(async () => {
    await Promise.all([anthropic?.close(), slack?.close(), discord?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits 0 when all is well, one ✓ line per check", async () => {
    const run = await doctor(healthy());
    expect(run.stderr).toBe("");
    expect(run.lines).toEqual([
      "✓ settings: 9 set, all valid; SQLite; Slack (Socket Mode) and Discord",
      `✓ database: SQLite ${join(dir, "cairn.db")}: opened`,
      `✓ migrations: all ${loadMigrations("sqlite").length} applied, none pending`,
      expect.stringMatching(new RegExp(`^✓ model claude-sonnet-\\S+: answered at ${anthropic.url} \\(.* s; CAIRN_MODEL\\)$`)),
      expect.stringMatching(/^✓ model claude-haiku-\S+: answered at .*CAIRN_SUMMARY_MODEL\)$/),
      "✓ Slack bot token: cairn in Fake Team (TFAKE)",
      `✓ Slack scopes: all ${Object.keys(BOT_SCOPES).length} scopes slack/manifest.yml asks for are granted`,
      "✓ Slack app token: Socket Mode: SLACK_APP_TOKEN accepted (apps.connections.open)",
      `✓ Discord bot token: logged in as cairn (${discord.bot.id})`,
      `✓ Discord application: cairn (${discord.applicationId})`,
      "✓ Discord Message Content intent: on",
      "All checks passed: cairn is ready to start.",
    ]);
    expect(run.code).toBe(0);
    // One tiny request per model: max_tokens 1.
    expect(anthropic.requests.slice(-2).map((r) => r.body.max_tokens)).toEqual([1, 1]);
  });

  it("checks the embeddings endpoint when one is set: the length of its vectors, or what to fix", async () => {
    const embeddings = await startFakeEmbeddings();
    try {
      const base = { DATABASE_URL: sqliteUrl, ANTHROPIC_API_KEY: anthropic.apiKey, ANTHROPIC_BASE_URL: anthropic.url, CAIRN_EMBEDDINGS_URL: embeddings.url, CAIRN_EMBEDDINGS_MODEL: "nomic-embed-text" };
      const well = await doctor(base);
      expect(line(well, "✓ embeddings nomic-embed-text")).toBe(`✓ embeddings nomic-embed-text: ${embeddings.url} answers with vectors of ${DEFAULT_DIMENSIONS} dimensions`);
      expect(well.code).toBe(0);
      expect(embeddings.requests.at(-1)).toMatchObject({ model: "nomic-embed-text", input: ["cairn doctor"], authorization: null });
      // A model that ignores the length asked for: named, with the setting to change.
      embeddings.forceDimensions = 384;
      const odd = await doctor({ ...base, CAIRN_EMBEDDINGS_DIMENSIONS: "256", CAIRN_EMBEDDINGS_API_KEY: "k1" });
      expect(line(odd, "✗ embeddings nomic-embed-text")).toBe(
        "✗ embeddings nomic-embed-text: nomic-embed-text answered a vector of 384 dimensions where 256 were expected: set CAIRN_EMBEDDINGS_DIMENSIONS to what the model gives, or unset it. Fix: set CAIRN_EMBEDDINGS_DIMENSIONS to the length the model gives, or unset it",
      );
      expect(embeddings.requests.at(-1)).toMatchObject({ dimensions: 256, authorization: "Bearer k1" });
      expect(odd.code).toBe(1);
      embeddings.forceDimensions = null;
      embeddings.requireKey = "right";
      const refused = await doctor({ ...base, CAIRN_EMBEDDINGS_API_KEY: "wrong" });
      expect(line(refused, "✗ embeddings")).toMatch(/refused the key \(401\).*Fix: set CAIRN_EMBEDDINGS_API_KEY to a key the endpoint accepts$/);
      // A URL without its model is a settings problem, said before any request.
      const half = await doctor({ DATABASE_URL: sqliteUrl, ANTHROPIC_API_KEY: anthropic.apiKey, ANTHROPIC_BASE_URL: anthropic.url, CAIRN_EMBEDDINGS_URL: embeddings.url });
      expect(half.lines.join("\n")).toContain("CAIRN_EMBEDDINGS_URL is set without CAIRN_EMBEDDINGS_MODEL");
      expect(half.code).toBe(1);
    } finally {
      await embeddings.close();
    }
  });

  it("names each refused token and how to get a good one", async () => {
    const run = await doctor({ ...healthy(), ANTHROPIC_API_KEY: "sk-ant-wrong", SLACK_BOT_TOKEN: "xoxb-wrong", SLACK_APP_TOKEN: "xapp-wrong", DISCORD_TOKEN: "wrong.token" });
    expect(run.code).toBe(1);
    expect(line(run, "✗ model claude-sonnet")).toMatch(/refused ANTHROPIC_API_KEY \(401 authentication_error\)\. Fix: set ANTHROPIC_API_KEY to a valid key/);
    expect(line(run, "✗ Slack bot token")).toBe(
      "✗ Slack bot token: Slack refused SLACK_BOT_TOKEN (invalid_auth). Fix: copy the Bot User OAuth Token (xoxb-...) from the app's OAuth & Permissions page; install the app to the workspace first",
    );
    expect(line(run, "✗ Slack app token")).toMatch(/Slack refused SLACK_APP_TOKEN \(invalid_auth\)\. Fix: create an app-level token with the connections:write scope/);
    expect(line(run, "✗ Discord bot token")).toMatch(/Discord refused DISCORD_TOKEN \(401 Unauthorized\)\. Fix: reset the token under Bot in the developer portal/);
    expect(run.lines.at(-1)).toBe("5 problems found: fix them, then run the doctor again.");
  });

  it("names a scope the Slack token lacks and a Message Content intent switched off", async () => {
    slack.setScopes(Object.keys(BOT_SCOPES).filter((s) => s !== "reactions:write"));
    const intentsOff = await startFakeDiscord({ privilegedIntents: false });
    try {
      const run = await doctor({ ...healthy(), DISCORD_TOKEN: intentsOff.token, DISCORD_APPLICATION_ID: intentsOff.applicationId, DISCORD_API_URL: intentsOff.apiUrl });
      expect(run.code).toBe(1);
      expect(line(run, "✗ Slack scopes")).toBe(
        "✗ Slack scopes: the bot token lacks 1 of the scopes slack/manifest.yml asks for: reactions:write (reactions.add / reactions.remove: the 👀 while working). " +
          "Fix: add them under OAuth & Permissions, Bot Token Scopes (or paste slack/manifest.yml into the app's App Manifest), then reinstall the app to the workspace so the token gets them",
      );
      expect(line(run, "✗ Discord Message Content intent")).toMatch(/the Message Content intent is off.*Fix: in the developer portal .* switch on Message Content Intent and save$/);
      expect(run.lines.filter((l) => l.startsWith("✗"))).toHaveLength(2);
    } finally {
      slack.setScopes(Object.keys(BOT_SCOPES));
      await intentsOff.close();
    }
  });

  it("names an unreachable database, and gives up on a silent model endpoint after --timeout", async () => {
    // Accepts connections and never answers.
    const silent = net.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      const run = await doctor({ ...healthy(), DATABASE_URL: "postgresql://postgres@127.0.0.1:1/cairn", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` }, ["--timeout", "1500"]);
      expect(run.code).toBe(1);
      expect(line(run, "✗ database")).toBe("✗ database: could not reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED): start it, or point DATABASE_URL at a running server");
      expect(line(run, "✗ model claude-sonnet")).toMatch(new RegExp(`no answer from http://127.0.0.1:${port} within 1\\.5 s\\. Fix: check ANTHROPIC_BASE_URL`));
    } finally {
      silent.close();
    }
  });

  it("passes a new SQLite file, and creates neither it nor its folder", async () => {
    const folder = join(dir, "new");
    const run = await doctor({ ...healthy(), DATABASE_URL: `file:${join(folder, "cairn.db")}` });
    expect(line(run, "✓ database")).toBe(`✓ database: SQLite ${join(folder, "cairn.db")} does not exist yet: cairn creates it at start (${dir} is writable)`);
    expect(line(run, "✓ migrations")).toBe(`✓ migrations: a new database: all ${loadMigrations("sqlite").length} will be applied at start`);
    expect(run.lines.at(-1)).toBe("All checks passed: cairn is ready to start.");
    expect(run.code).toBe(0);
    expect(existsSync(folder)).toBe(false);
  });

  it("passes a pending migration without applying it; one the build does not know is a problem", async () => {
    const url = `file:${join(dir, "behind.db")}`;
    await (await openDatabase(url)).close();
    const last = loadMigrations("sqlite").at(-1)!.name;
    // As if the database were left by the build before the last migration.
    const raw = new BetterSqlite3(url.slice("file:".length));
    raw.prepare(`DELETE FROM "_prisma_migrations" WHERE migration_name = ?`).run(last);
    raw.close();

    const run = await doctor({ ...healthy(), DATABASE_URL: url });
    expect(line(run, "✓ migrations")).toBe(`✓ migrations: 1 migration not applied yet (${last}): will be applied at start`);
    expect(run.code).toBe(0);
    const after = new BetterSqlite3(url.slice("file:".length));
    expect(after.prepare(`SELECT count(*) AS n FROM "_prisma_migrations" WHERE migration_name = ?`).get(last)).toEqual({ n: 0 });
    // As if a newer cairn had migrated it: this build must not start on it.
    after.prepare(`INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ('x', 'x', CURRENT_TIMESTAMP, '99999999999999_future', 1)`).run();
    after.close();
    const newer = await doctor({ ...healthy(), DATABASE_URL: url });
    expect(line(newer, "✗ migrations")).toMatch(/^✗ migrations: the database has 1 migration this build of cairn does not: 99999999999999_future\. Fix: /);
    expect(newer.code).toBe(1);
  });

  it("lists every invalid setting at once, and skips the checks that read one", async () => {
    const run = await doctor({ ...healthy(), CAIRN_MAX_CONCURRENCY: "lots", ANTHROPIC_BASE_URL: "not a url", CAIRN_CURATOR_STALE_DAYS: "60" });
    expect(run.code).toBe(1);
    const settings = run.lines.filter((l) => l.startsWith("✗ settings"));
    expect(settings).toHaveLength(3);
    expect(settings[0]).toMatch(/^✗ settings: ANTHROPIC_BASE_URL: expected a URL like https:\/\/api\.anthropic\.com \(got "not a url"\)/);
    expect(settings[1]).toMatch(/^✗ settings: CAIRN_MAX_CONCURRENCY must be a whole number, got "lots"\. Fix: give CAIRN_MAX_CONCURRENCY a valid value in the environment or \.env, or unset it for its default/);
    expect(settings[2]).toBe("✗ settings: CAIRN_CURATOR_ARCHIVE_DAYS must be more than CAIRN_CURATOR_STALE_DAYS: a skill goes stale before it is archived");
    expect(line(run, "✗ model")).toBe("✗ model: not checked while ANTHROPIC_BASE_URL is invalid (see above)");
    // The checks that read only valid settings still run.
    expect(line(run, "✓ database")).toBeDefined();
    expect(line(run, "✓ Slack bot token")).toBeDefined();
  });

  postgresSuite()("on PostgreSQL", () => {
    let pg: Awaited<ReturnType<typeof freshPostgres>>;
    beforeAll(async () => {
      pg = await freshPostgres();
      await (await openDatabase(pg.url)).close();
    });
    afterAll(async () => {
      await pg?.drop();
    });

    it("exits 0 on a brand-new database, and leaves it empty", async () => {
      const empty = await freshPostgres();
      try {
        const run = await doctor({ ...healthy(), DATABASE_URL: empty.url });
        expect(line(run, "✓ migrations")).toBe(`✓ migrations: a new database: all ${loadMigrations("postgresql").length} will be applied at start`);
        expect(run.code).toBe(0);
        const client = new pgDriver.Client({ connectionString: empty.url });
        await client.connect();
        const tables = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`);
        await client.end();
        expect(tables.rows[0]?.n).toBe(0);
      } finally {
        await empty.drop();
      }
    });

    it("exits 0 with every migration applied", async () => {
      const run = await doctor({ ...healthy(), DATABASE_URL: pg.url });
      expect(line(run, "✓ database")).toMatch(/^✓ database: PostgreSQL 127\.0\.0\.1:5432\/cairn_test_\w+: reachable \(/);
      expect(line(run, "✓ migrations")).toBe(`✓ migrations: all ${loadMigrations("postgresql").length} applied, none pending`);
      expect(run.code).toBe(0);
    });
  });
});
