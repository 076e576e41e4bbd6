/**
 * cairn as a newcomer runs it: the real entry point in a child process, talking on stdin/stdout,
 * against the fake Anthropic server and a fresh SQLite file.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type AddressInfo } from "node:net";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, systemText, type FakeAnthropic } from "../fakes/anthropic.ts";
import { loadMigrations } from "../../src/db/migrate.ts";

import { root, runCairn } from "../support/run-cairn.ts";

describe("npm start: the console chat", () => {
  let fake: FakeAnthropic;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "cairn-console-"));
  });
  afterAll(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("without ANTHROPIC_API_KEY exits with one clear message naming what to set", async () => {
    const run = await runCairn({ DATABASE_URL: `file:${join(dir, "none.db")}` }, []);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("ANTHROPIC_API_KEY");
    expect(run.stderr).toContain("ANTHROPIC_BASE_URL");
    expect(run.stdout).toBe("");
    expect(existsSync(join(dir, "none.db"))).toBe(false);
  });

  it("with a wrong setting exits naming the variable", async () => {
    const run = await runCairn({ ANTHROPIC_API_KEY: "k", CAIRN_SESSION_IDLE_MINUTES: "soon" }, []);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('CAIRN_SESSION_IDLE_MINUTES must be a whole number, got "soon"');
    // A schedule node-cron refuses stops start-up the same way, before anything is opened.
    const cron = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: `file:${join(dir, "never.db")}`, CAIRN_REPORT_CRON: "0 9 * * 8" }, []);
    expect(cron.code).toBe(2);
    expect(cron.stderr).toContain('CAIRN_REPORT_CRON: expected a cron expression like "0 9 * * 1"');
    expect(cron.stderr).toContain('(got "0 9 * * 8")');
    expect(existsSync(join(dir, "never.db"))).toBe(false);
  });

  it("says in one sentence, without a stack, what stops it from starting", async () => {
    const down = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: "postgresql://postgres@127.0.0.1:1/cairn" }, []);
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe("cairn could not start: could not reach PostgreSQL at 127.0.0.1:1 (ECONNREFUSED): start it, or point DATABASE_URL at a running server.");
    const folder = join(dir, "a-folder");
    mkdirSync(folder);
    const notAFile = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: `file:${folder}` }, []);
    expect(notAFile.code).toBe(1);
    expect(notAFile.stderr.trim()).toMatch(new RegExp(`^cairn could not start: could not open the SQLite file ${folder} \\([A-Z_]+\\): make sure its folder exists and is writable, or set DATABASE_URL to another file\\.$`));
  });

  // Node's own mkdir -p spun at full CPU there, deaf to SIGTERM: a folder no one can create.
  it.skipIf(!existsSync("/proc/self"))("says in one sentence, at once, that the data path cannot hold a database (file:/proc/...)", async () => {
    const folder = `/proc/cairn-${process.pid}`;
    const started = Date.now();
    // Slack's HTTP mode: no log file beside the database, so the database is the first to need the folder.
    const slack = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: `file:${folder}/cairn.db`, SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s" }, []);
    expect(slack.code).toBe(1);
    expect(slack.stderr.trim()).toBe(`cairn could not start: could not create the folder ${folder} for the SQLite file ${folder}/cairn.db (ENOENT): set DATABASE_URL to a file in a folder cairn may write.`);
    // The console keeps its log beside the database: that folder is refused first, as plainly.
    const chat = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: `file:${folder}/cairn.db` }, []);
    expect(chat.code).toBe(1);
    expect(chat.stderr.trim()).toMatch(new RegExp(`^cairn could not start: could not write the log file ${folder}/cairn\\.log \\(ENOENT: [^\\n]*\\): make its folder writable, or set DATABASE_URL to a file in a writable folder\\.$`));
    // Two starts of a Node process that compiles the sources; a spin would run until the test's timeout.
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it("says in one sentence that CAIRN_HEALTH_PORT is taken", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const taken = (holder.address() as AddressInfo).port;
    try {
      const busy = await runCairn({ ANTHROPIC_API_KEY: "k", DATABASE_URL: `file:${join(dir, "busy.db")}`, CAIRN_HEALTH_PORT: String(taken), CAIRN_HEALTH_HOST: "127.0.0.1" }, []);
      expect(busy.code).toBe(1);
      expect(busy.stderr.trim()).toBe(`cairn could not start: port ${taken} is already in use: stop what holds it, or set CAIRN_HEALTH_PORT to a free one.`);
    } finally {
      holder.close();
    }
  });

  it("chats, learns, remembers across restarts, and creates its database with migrations", async () => {
    const dbPath = join(dir, "nested", "cairn.db");
    const env = {
      ANTHROPIC_API_KEY: fake.apiKey,
      ANTHROPIC_BASE_URL: fake.url,
      DATABASE_URL: `file:${dbPath}`,
      CAIRN_CONSOLE_USER: "dana",
      LOG_LEVEL: "silent",
    };
    fake.enqueue(
      { text: "Hello Dana." },
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Dana is on the payments team" }] } }] },
      { text: "Noted." },
    );
    const answered = (out: string, sent: number) => (out.match(/^(cairn> |Your profile|Started a new|Skills)/gm)?.length ?? 0) >= sent;
    const first = await runCairn(env, ["hello", "I work on the payments team", "/me", "/skills"], answered);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("talking as dana");
    expect(first.stdout).toContain("cairn> Hello Dana.");
    expect(first.stdout).toContain("cairn> Noted.");
    // Markdown rendered for the terminal: no raw markup.
    expect(first.stdout).toMatch(/^Your profile \(28 of 1,375 characters used\)\n• Dana is on the payments team/m);
    expect(first.stdout).toContain("• cairn-guide (bundled)");
    expect(first.stdout).not.toMatch(/\*\*|`/);
    expect(existsSync(dbPath)).toBe(true);

    // A restart starts a new session whose snapshot holds what was learned.
    fake.enqueue({ text: "You are on payments." });
    const second = await runCairn(env, ["what team am I on?"], answered);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("cairn> You are on payments.");
    const last = fake.lastRequest()!;
    expect(systemText(last)).toContain("Dana is on the payments team");
    expect(last.body.messages).toHaveLength(1);

    const raw = new BetterSqlite3(dbPath, { readonly: true });
    try {
      const migrations = raw.prepare(`SELECT migration_name, finished_at FROM "_prisma_migrations"`).all() as { migration_name: string; finished_at: string | null }[];
      expect(migrations.map((m) => m.migration_name)).toEqual(loadMigrations("sqlite").map((m) => m.name));
      expect(migrations.every((m) => m.finished_at !== null)).toBe(true);
      const sessions = raw.prepare(`SELECT endReason FROM "ChatSession" ORDER BY startedAt`).all() as { endReason: string | null }[];
      expect(sessions.map((s) => s.endReason)).toEqual(["restart", null]);
    } finally {
      raw.close();
    }
  });

  it("learns a skill from the conversation with /learn and lists lessons with /lessons", async () => {
    // A model server of its own: a slow earlier test's child cannot take this test's replies.
    const model = await startFakeAnthropic();
    try {
      const env = {
        ANTHROPIC_API_KEY: model.apiKey,
        ANTHROPIC_BASE_URL: model.url,
        DATABASE_URL: `file:${join(dir, "learn.db")}`,
        CAIRN_CONSOLE_USER: "dana",
        LOG_LEVEL: "silent",
      };
      const skillMd = "---\nname: team-lookup\ndescription: Use when asked which team someone is on\n---\n# Steps\n1. Check the profile.\n";
      model.enqueue({ text: "Payments." }, { toolUse: [{ name: "skill_manage", input: { action: "create", name: "team-lookup", content: skillMd } }] }, { text: "saved" });
      const run = await runCairn(env, ["what team am I on?", "/learn", "/lessons"], (out, sent) => (out.match(/^(cairn> |Learned from|No lessons)/gm)?.length ?? 0) >= sent);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("Learned from this conversation (asked by dana)");
      expect(run.stdout).toContain("Created team-lookup: Use when asked which team someone is on");
      expect(run.stdout).toContain("No lessons or team rules for you here yet.");
      const learn = model.requests[1]!;
      expect(JSON.stringify(learn.body.messages)).toContain("[dana] what team am I on?");
      expect(JSON.stringify(learn.body.messages)).toContain("[cairn] Payments.");
    } finally {
      await model.close();
    }
  });

  it("answers /why with what the last answer drew on: the facts in its prompt and the search it ran, with what it found", async () => {
    const model = await startFakeAnthropic();
    try {
      const env = { ANTHROPIC_API_KEY: model.apiKey, ANTHROPIC_BASE_URL: model.url, DATABASE_URL: `file:${join(dir, "why.db")}`, CAIRN_CONSOLE_USER: "dana", LOG_LEVEL: "silent" };
      const save = { name: "memory", input: { operations: [{ action: "add", target: "user", content: "dana indents with tabs" }] } };
      model.enqueue({ toolUse: [save] }, { text: "Saved." }, { toolUse: [{ name: "session_search", input: { query: "tabs" } }] }, { text: "Tabs, as you said." });
      const lines = ["remember: I indent with tabs", "/new", "how should I indent?", "/why"];
      const run = await runCairn(env, lines, (out, sent) => (out.match(/^(cairn> |Started a new session|.*Why my last answer here)/gm)?.length ?? 0) >= sent);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      const why = run.stdout.slice(run.stdout.indexOf("Why my last answer here"));
      // The new session's snapshot held the fact; the search found the message that asked to save it.
      expect(why).toMatch(/Facts from memory in its prompt[\s\S]*dana indents with tabs[\s\S]*your profile/);
      expect(why).toContain('Search for "tabs": found');
      expect(why).toContain("remember: I indent with tabs");
      expect(why).toContain("Tools called: 1.");
    } finally {
      await model.close();
    }
  });

  it("keeps what memory said before: a replaced fact, /me says since … (was: …), the next session reads the new text, memory_history the old", async () => {
    const model = await startFakeAnthropic();
    try {
      const env = { ANTHROPIC_API_KEY: model.apiKey, ANTHROPIC_BASE_URL: model.url, DATABASE_URL: `file:${join(dir, "validity.db")}`, CAIRN_CONSOLE_USER: "dana", LOG_LEVEL: "silent" };
      // Contradiction checks (on by default) find nothing near a profile's only entry: no call is scripted for them.
      const op = (o: Record<string, unknown>) => ({ toolUse: [{ name: "memory", input: { operations: [o] } }] });
      model.enqueue(op({ action: "add", target: "user", content: "Dana's editor is vim" }), { text: "Noted." }, op({ action: "replace", target: "user", old_text: "vim", content: "Dana's editor is Helix" }), { text: "Updated." });
      const answered = (out: string, sent: number) => (out.match(/^(cairn> |Your profile)/gm)?.length ?? 0) >= sent;
      const first = await runCairn(env, ["I use vim", "I switched to Helix", "/me"], answered);
      expect(first.code).toBe(0);
      const today = new Date().toISOString().slice(0, 10);
      expect(first.stdout).toMatch(new RegExp(`• Dana's editor is Helix .*since ${today} \\(was: Dana's editor is vim\\)`));
      model.enqueue({ toolUse: [{ name: "memory_history", input: { topic: "editor" } }] }, { text: "You used vim before." });
      const second = await runCairn(env, ["which editor did I use before?"], answered);
      expect(second.stdout).toContain("cairn> You used vim before.");
      const [ask, after] = model.requests.slice(-2);
      expect(systemText(ask!)).toContain("Dana's editor is Helix");
      expect(systemText(ask!)).not.toContain("Dana's editor is vim");
      expect(JSON.stringify(after!.body.messages)).toContain(`\\"Dana's editor is vim\\" (user fact): held from ${today} until ${today}; replaced by \\"Dana's editor is Helix\\"`);
    } finally {
      await model.close();
    }
  });

  it("treats the person at the console as the operator: an admin there without CAIRN_ADMINS", async () => {
    const model = await startFakeAnthropic();
    try {
      const env = { ANTHROPIC_API_KEY: model.apiKey, ANTHROPIC_BASE_URL: model.url, DATABASE_URL: `file:${join(dir, "operator.db")}`, CAIRN_CONSOLE_USER: "dana", LOG_LEVEL: "silent" };
      const run = await runCairn(env, ["/jobs run report"], (out, sent) => (out.match(/^(Queued|Only cairn admins)/gm)?.length ?? 0) >= sent);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toMatch(/^Queued a report run now \(job \w+\)/m);
      expect(run.stdout).not.toContain("Only cairn admins");
      expect(model.requests).toHaveLength(0);
    } finally {
      await model.close();
    }
  });

  it("never sends a command typed without its slash to the model: runs a read-only one, points to one that changes something", async () => {
    const model = await startFakeAnthropic();
    try {
      const env = { ANTHROPIC_API_KEY: model.apiKey, ANTHROPIC_BASE_URL: model.url, DATABASE_URL: `file:${join(dir, "typed.db")}`, CAIRN_CONSOLE_USER: "dana", LOG_LEVEL: "silent" };
      model.enqueue({ text: "Glad it is fine." });
      const lines = ["forget about it, the deploy is fine", "forget me confirm", "skills"];
      const run = await runCairn(env, lines, (out, sent) => (out.match(/^(cairn> |Skills)/gm)?.length ?? 0) >= sent);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      // The sentence is chat; the command is neither chat nor run: nothing was erased.
      expect(run.stdout).toContain("cairn> Glad it is fine.");
      expect(run.stdout).toContain("cairn> Did you mean /forget me confirm? I did not run it");
      expect(run.stdout).not.toContain("Erased");
      expect(run.stdout).toMatch(/^Skills \(\d+\)\n• cairn-guide \(bundled\)/m);
      expect(model.requests).toHaveLength(1);
      expect(JSON.stringify(model.requests[0]!.body.messages)).toContain("forget about it, the deploy is fine");
      expect(model.requests.filter((r) => JSON.stringify(r.body).includes("forget me confirm"))).toEqual([]);
    } finally {
      await model.close();
    }
  });

  it("runs from the compiled build (npm run build, then node dist/src/main.js), finding its migrations and bundled skills", async () => {
    const build = spawnSync("npm", ["run", "build"], { cwd: root, encoding: "utf8" });
    expect(build.status, build.stdout + build.stderr).toBe(0);
    const dbPath = join(dir, "built.db");
    const env = { ANTHROPIC_API_KEY: fake.apiKey, ANTHROPIC_BASE_URL: fake.url, DATABASE_URL: `file:${dbPath}`, CAIRN_CONSOLE_USER: "erin", LOG_LEVEL: "silent" };
    fake.enqueue({ text: "Hello Erin." });
    const answered = (out: string, sent: number) => (out.match(/^(cairn> |Skills)/gm)?.length ?? 0) >= sent;
    const run = await runCairn(env, ["hello", "/skills"], answered, [process.execPath, ["dist/src/main.js"]]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("cairn> Hello Erin.");
    expect(run.stdout).toContain("• cairn-guide (bundled)");
    const raw = new BetterSqlite3(dbPath, { readonly: true });
    try {
      const applied = raw.prepare(`SELECT migration_name FROM "_prisma_migrations"`).all() as { migration_name: string }[];
      expect(applied.map((m) => m.migration_name)).toEqual(loadMigrations("sqlite").map((m) => m.name));
    } finally {
      raw.close();
    }
    // A full compile: on a busy 2-core machine it alone can take longer than the default timeout.
  }, 180_000);
});
