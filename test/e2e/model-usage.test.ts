/**
 * What cairn cost, per workspace (ops/usage-ledger.ts): every model call's tokens are counted
 * against the workspace the turn served, written in batches, and the weekly report an admin runs
 * shows that workspace's tokens and their estimated cost at the operator's prices, never another
 * workspace's. Both databases, through the real Core, its job worker and `/cairn jobs run report`.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore, TEST_SETTINGS } from "../support/agent.ts";
import { startFakeAnthropic } from "../fakes/anthropic.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { waitUntil } from "../fakes/http.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { parseCommandLine } from "../../src/ground/commands.ts";
import { UsageStore } from "../../src/ops/usage-store.ts";
import { hourOf } from "../../src/ops/usage-ledger.ts";

forEachDatabase("model usage per workspace", (getDb) => {
  const h = coreHarness(getDb, {
    settings: {
      bundledSkillsDir: null,
      access: accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] }),
      learning: { worker: { pollMs: 50, leaseMs: 10_000, concurrency: 2, backoffMs: 100 }, modelPrices: { "claude-test": { input: 10, output: 100 } } },
      model: "claude-test",
    },
  });

  const ask = async (where: PlaceOptions, text: string) => {
    const r = await h.core.handle(inboundFor(where, text, uniqueId("m")));
    if (r.kind !== "reply" || r.reply.status !== "ok") throw new Error(`not answered: ${JSON.stringify(r)}`);
  };
  const command = (where: PlaceOptions, line: string) => {
    const cmd = parseCommandLine(line)!;
    return h.core.command(inboundFor(where, `/cairn ${line}`), cmd.name, cmd.args);
  };

  it("counts each turn's tokens in its own workspace and shows them, priced, in that workspace's report only", async () => {
    const other = uniqueId("T");
    const acme: PlaceOptions = { workspace: h.ws, user: "UADMIN", name: "Ada", channel: "C-eng", isDm: false, thread: uniqueId("th") };
    const globex: PlaceOptions = { workspace: other, user: "UBOB", name: "Bob", channel: "C-ops", isDm: false, thread: uniqueId("th") };
    // Token counts the test chooses, so the report's sums are the test's own arithmetic.
    h.fake.enqueue({ text: "First answer.", usage: { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 4000, cache_creation_input_tokens: 500 } });
    await ask(acme, "how do we deploy?");
    h.fake.enqueue({ text: "Second answer.", usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    await ask(acme, "and to staging?");
    h.fake.enqueue({ text: "Globex's answer.", usage: { input_tokens: 77_777, output_tokens: 7777 } });
    await ask(globex, "where are the logs?");

    // Nothing is written per turn: the sums wait in the ledger until the report (or a timer) flushes them.
    const usage = new UsageStore(getDb().prisma);
    const db = getDb().prisma;
    const wsOf = async (externalId: string) => (await db.workspace.findFirstOrThrow({ where: { externalId } })).id;
    const [acmeId, globexId] = [await wsOf(h.ws), await wsOf(other)];
    const window = [hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date(Date.now() + 3_600_000))] as const;
    expect(await usage.totals(acmeId, ...window)).toEqual([]);

    h.core.learning.start();
    const queued = await command(acme, "jobs run report");
    expect(queued.text).toMatch(/report/i);
    await waitUntil("Acme's report", async () => (await db.report.count({ where: { workspaceId: acmeId } })) > 0, 20_000);

    const acmeTurns = (await usage.totals(acmeId, ...window)).filter((t) => t.purpose === "turn");
    expect(acmeTurns).toEqual([{ model: "claude-test", purpose: "turn", calls: 2, failures: 0, inputTokens: 3000, outputTokens: 400, cacheReadTokens: 4000, cacheWriteTokens: 500 }]);
    const globexTurns = (await usage.totals(globexId, ...window)).filter((t) => t.purpose === "turn");
    expect(globexTurns.map((t) => [t.calls, t.inputTokens, t.outputTokens])).toEqual([[1, 77_777, 7777]]);

    const shown = await command(acme, "report");
    // The report's own narrative call is Acme's usage too, so its line counts at least the turns'.
    const line = shown.text.split("\n").find((l) => l.includes("AI model tokens"));
    expect(line).toBeDefined();
    const [sent, reread, written] = [...line!.matchAll(/([\d,]+) (?:sent|re-read|written)/g)].map((m) => Number(m[1]!.replace(/,/g, "")));
    expect(sent).toBeGreaterThanOrEqual(3000 + 500);
    expect(reread).toBe(4000);
    expect(written).toBeGreaterThanOrEqual(400);
    expect(sent).toBeLessThan(77_777);
    // Priced at the operator's prices (CAIRN_MODEL_PRICES): input 10, output 100, cache read 1, cache write 12.5 per million.
    const cost = Number(/estimated cost about \$([\d.]+)/.exec(line!)?.[1]);
    const turnsCost = (1000 * 10 + 2000 * 10 + 400 * 100 + 4000 * 1 + 500 * 12.5) / 1e6;
    expect(cost).toBeGreaterThanOrEqual(Math.floor(turnsCost * 100) / 100);
    expect(line).not.toContain("tokens only");
    // Its worker would otherwise take the next test's jobs (the same database).
    await h.core.learning.stop();
  });

  it("counts the calls a turn's tools and its review make in the workspace they served, never in none", async () => {
    const acme: PlaceOptions = { workspace: uniqueId("T"), user: "UADA", name: "Ada", channel: "C-eng", isDm: false };
    const globex: PlaceOptions = { workspace: uniqueId("T"), user: "UBOB", name: "Bob", channel: "C-ops", isDm: false };
    const fake = await startFakeAnthropic();
    const core = makeCore(getDb(), fake, {
      model: "claude-test",
      screen: { enabled: true, model: "claude-haiku-5-5", timeoutMs: 2_000 },
      teamWrites: { mode: "open" },
      learning: { ...TEST_SETTINGS.learning, reviewEveryTurns: 1, skillReviewToolCalls: 0 },
    });
    try {
      await core.start();
      await core.startBackground();
      fake.setDefault({ text: "noted", usage: { input_tokens: 10, output_tokens: 1 } });
      // Acme's turn writes a team fact: the screen reads it first (its own model call), then the review runs on the worker.
      fake.enqueue(
        { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "Deploys go out on Tuesdays" }] } }], usage: { input_tokens: 100, output_tokens: 5 } },
        { text: '{"verdict": "allow"}', usage: { input_tokens: 20, output_tokens: 3 } },
        { text: "Noted: deploys on Tuesdays.", usage: { input_tokens: 100, output_tokens: 5 } },
      );
      // Delivered through an adapter: a review is queued for a reply that reached the platform.
      const adapter = new FakeAdapter();
      core.attach(adapter);
      expect(await core.receive(inboundFor(acme, "remember: we deploy on Tuesdays"), adapter.target(acme.channel))).toMatchObject({ kind: "replied", status: "ok" });
      expect(await core.receive(inboundFor(globex, "hello"), adapter.target(globex.channel))).toMatchObject({ kind: "replied", status: "ok" });
      // Each workspace's review, run by the worker.
      const reviewsDone = async () => {
        const ids = await Promise.all([acme, globex].map(async (w) => (await getDb().prisma.workspace.findFirstOrThrow({ where: { externalId: w.workspace } })).id));
        const done = await getDb().prisma.job.findMany({ where: { kind: "review", status: "done" }, select: { payload: true } });
        return ids.every((id) => done.some((j) => j.payload.includes(id)));
      };
      await waitUntil("both reviews done", reviewsDone, 20_000);
    } finally {
      // Stopping writes what the ledger still counts.
      await core.stopBackground();
      await fake.close();
    }
    const db = getDb().prisma;
    const window = [hourOf(new Date(Date.now() - 3_600_000)), hourOf(new Date(Date.now() + 3_600_000))] as const;
    const usage = new UsageStore(db);
    const purposes = async (externalId: string) => {
      const id = (await db.workspace.findFirstOrThrow({ where: { externalId } })).id;
      return Object.fromEntries((await usage.totals(id, ...window)).map((t) => [t.purpose, t.calls]));
    };
    const acmeCalls = await purposes(acme.workspace);
    const globexCalls = await purposes(globex.workspace);
    // Acme: its two turn calls, the screen's one, and its review's; Globex: its own turn and review, nothing of Acme's.
    expect(acmeCalls).toMatchObject({ turn: 2, screen: 1 });
    expect(acmeCalls.review).toBeGreaterThanOrEqual(1);
    expect(globexCalls).toMatchObject({ turn: 1 });
    expect(globexCalls.screen).toBeUndefined();
    expect(globexCalls.review).toBeGreaterThanOrEqual(1);
    // Nothing was counted in no workspace: every call named the one it served.
    expect(await usage.totals("", ...window)).toEqual([]);
  });
});
