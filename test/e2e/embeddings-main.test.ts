/**
 * Semantic recall as a person turns it on: cairn's real entry point (the console) with
 * CAIRN_EMBEDDINGS_URL and _MODEL set, the fake Anthropic and fake embeddings servers. What was said
 * before embeddings were on is backfilled at start, and a later question sharing no word with it
 * finds it by meaning through session_search.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings.ts";
import { toolResults } from "../support/agent.ts";
import { runCairn } from "../support/run-cairn.ts";

describe("embeddings through cairn's entry point", () => {
  let fake: FakeAnthropic;
  let vectors: FakeEmbeddings;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    vectors = await startFakeEmbeddings();
    vectors.alike([["ship", "deploy"], ["web app", "frontend"]]);
    dir = mkdtempSync(join(tmpdir(), "cairn-embeddings-main-"));
  });
  afterAll(async () => {
    await fake.close();
    await vectors.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("backfills what was said before embeddings were on, then finds it by meaning", async () => {
    const dbPath = join(dir, "cairn.db");
    const base = { ANTHROPIC_API_KEY: fake.apiKey, ANTHROPIC_BASE_URL: fake.url, DATABASE_URL: `file:${dbPath}`, CAIRN_CONSOLE_USER: "dana", CAIRN_CHECK_KEY: "off", LOG_LEVEL: "info" };
    const answered = (out: string, sent: number) => (out.match(/^cairn> /gm)?.length ?? 0) >= sent;

    // Embeddings off: the message is stored, and nothing is embedded.
    fake.enqueue({ text: "Noted." });
    const before = await runCairn(base, ["to deploy the frontend run zebractl release"], answered);
    expect(before.code).toBe(0);
    expect(vectors.requests).toHaveLength(0);

    // Turned on: started again, the backfill embeds what is stored; a question in other words finds it.
    const on = { ...base, CAIRN_EMBEDDINGS_URL: vectors.url, CAIRN_EMBEDDINGS_MODEL: "fake-embed", CAIRN_EMBEDDINGS_DIMENSIONS: "256" };
    fake.enqueue({ text: "Hello." }, { toolUse: [{ name: "session_search", input: { query: "how do we ship the web app" } }] }, { text: "Run zebractl release." });
    // The first line gives the backfill, started with the process, its moment.
    const after = await runCairn(on, ["hello", "how do we ship the web app?"], answered);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("cairn> Run zebractl release.");
    const [result] = toolResults(fake.lastRequest()!);
    expect(result!.content).toContain("zebractl release");
    expect(vectors.requests.some((r) => r.input.includes("how do we ship the web app"))).toBe(true);
    expect(vectors.requests.every((r) => r.model === "fake-embed" && r.dimensions === 256)).toBe(true);

    const db = new BetterSqlite3(dbPath, { readonly: true });
    try {
      const stored = db.prepare(`SELECT count(*) FROM "MessageVector" v JOIN "Message" m ON m.id = v.messageId WHERE m.text = ? AND v.space = 'fake-embed@256'`).pluck().get("to deploy the frontend run zebractl release");
      expect(stored).toBe(1);
    } finally {
      db.close();
    }
  });
});
