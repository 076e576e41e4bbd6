/** The weekly report's pure parts: the channel setting, sparklines, lifetimes, topics, prices, the usage lines and the model's answer checks. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.ts";
import { agentSettings } from "../../src/app/settings.ts";
import { parseReportChannel } from "../../src/report/channel.ts";
import { reportLayout, reportMarkdown, sparkline } from "../../src/report/render.ts";
import { estimateCost, priceOf, PRICES, withPrices } from "../../src/report/prices.ts";
import type { ReportUsage } from "../../src/report/usage.ts";
import { activeAt, lifetimeOf, type RevisionRow } from "../../src/report/lifetime.ts";
import { groupByWords, representative, sharedWords } from "../../src/report/topics.ts";
import { ModelAnswer, vet, type NarrativeInput } from "../../src/report/narrative.ts";
import { slotEnd, ReportPayload } from "../../src/report/job.ts";
import { per100, type ReportMetrics } from "../../src/report/metrics.ts";

const day = (d: number) => new Date(Date.UTC(2025, 2, 10) - d * 86_400_000);
const rev = (action: string, d: number): RevisionRow => ({ entityId: "e", action, actorId: null, createdAt: day(d) });
const entry = (status: string, created: number, text = "x") => ({ id: "e", status, text, createdAt: day(created), updatedAt: day(created) });

describe("CAIRN_REPORT_CHANNEL", () => {
  it("takes slack:<channel>, discord:<channel> or console, and is optional", () => {
    expect(loadConfig({ CAIRN_REPORT_CHANNEL: "slack:C0123" }).CAIRN_REPORT_CHANNEL).toBe("slack:C0123");
    expect(agentSettings(loadConfig({ CAIRN_REPORT_CHANNEL: "discord:123456789" })).learning?.reportChannel).toEqual({ platform: "discord", channel: "123456789" });
    expect(agentSettings(loadConfig({ CAIRN_REPORT_CHANNEL: "console" })).learning?.reportChannel).toEqual({ platform: "console", channel: "console" });
    expect(agentSettings(loadConfig({ CAIRN_REPORT_CHANNEL: "" })).learning?.reportChannel).toBeNull();
    expect(agentSettings(loadConfig({})).learning?.reportChannel).toBeNull();
    expect(parseReportChannel("slack:G0PRIVATE")).toEqual({ platform: "slack", channel: "G0PRIVATE" });
  });

  it.each(["#general", "slack:general", "discord:abc", "teams:C0123", "slack:c0123", "console:x"])("stops start-up on %s, naming the variable", (value) => {
    let caught: unknown;
    try {
      loadConfig({ CAIRN_REPORT_CHANNEL: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain("CAIRN_REPORT_CHANNEL");
    expect((caught as ConfigError).message).toContain("slack:C0123");
  });
});

describe("the report job's payload", () => {
  it("ends the week at the slot, a manual one too, and refuses a slot that is no time", () => {
    expect(slotEnd("2025-03-10T09:00:00.000Z").toISOString()).toBe("2025-03-10T09:00:00.000Z");
    expect(slotEnd("manual:2025-03-10T09:00:00.000Z").toISOString()).toBe("2025-03-10T09:00:00.000Z");
    expect(ReportPayload.safeParse({ slot: "next monday" }).success).toBe(false);
    expect(ReportPayload.safeParse({ slot: "2025-03-10T09:00:00.000Z", requestedBy: "slack:U1" }).success).toBe(true);
  });
});

describe("sparklines and rates", () => {
  it("scales from zero to the largest value, with a dot for a week without a value", () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7])).toBe("▁▂▃▄▅▆▇█");
    expect(sparkline([2, null, 4])).toBe("▅·█");
    expect(sparkline([0, 0])).toBe("▁▁");
    expect(sparkline([null])).toBe("·");
  });

  it("gives corrections per 100 replies to one decimal, none without replies", () => {
    expect(per100(1, 3)).toBe(33.3);
    expect(per100(2, 3)).toBe(66.7);
    expect(per100(0, 0)).toBeNull();
  });
});

describe("when a memory entry was in force", () => {
  it("from its creation, until the last revision of an archived entry", () => {
    const life = lifetimeOf(entry("archived", 10), [rev("add", 10), rev("promote", 3)]);
    expect(life).toEqual({ from: day(10), until: day(3) });
    expect(activeAt(life, day(7))).toBe(true);
    expect(activeAt(life, day(0))).toBe(false);
    // Came into force exactly at the week's start: not in force at that instant, so it counts as growth.
    expect(activeAt(lifetimeOf(entry("active", 7), []), day(7))).toBe(false);
  });

  it("from a confirmation or an approval for what was pending; never for what still is, was dropped, or removes", () => {
    expect(lifetimeOf(entry("active", 9), [rev("propose", 9), rev("approval", 3), rev("approve", 3)]).from).toEqual(day(3));
    expect(lifetimeOf(entry("active", 8), [rev("add", 8), rev("confirm", 5)]).from).toEqual(day(5));
    expect(lifetimeOf(entry("pending", 2), [rev("propose", 2)]).from).toBeNull();
    expect(lifetimeOf(entry("archived", 6), [rev("add", 6), rev("drop", 4)]).from).toBeNull();
    expect(lifetimeOf(entry("archived", 6, ""), [rev("propose_remove", 6), rev("confirm", 4)]).from).toBeNull();
  });
});

describe("repeated problems by shared words", () => {
  const texts = [
    "NEVER deploy to production on Friday afternoons",
    "ALWAYS export invoices as CSV with the customer id column",
    "ALWAYS check with #ops before a Friday production deploy",
    "ALWAYS link the Jira ticket in commit messages",
    "ALWAYS include the customer id when exporting invoices",
  ];

  it("groups lessons on one topic (ALWAYS/NEVER aside) and leaves single ones out", () => {
    expect(groupByWords(texts)).toEqual([
      [0, 2],
      [1, 4],
    ]);
    expect(groupByWords(["ALWAYS use tabs", "ALWAYS write tests"])).toEqual([]);
  });

  it("labels a topic with the words its lessons share", () => {
    expect(sharedWords([texts[0]!, texts[2]!])).toEqual(["deploy", "production", "friday"]);
  });

  it("keeps lone texts as topics of their own when asked (praised questions), labelled by their own words", () => {
    expect(groupByWords(texts, 1)).toEqual([[0, 2], [1, 4], [3]]);
    expect(sharedWords([texts[3]!])).toEqual(["link", "jira", "ticket"]);
  });
});

describe("a topic's name", () => {
  const day0 = (h: number) => new Date(Date.UTC(2025, 2, 10, h));
  it("is the question most like the others, the latest among equals", () => {
    const asked = [
      { text: "how do I deploy staging?", at: day0(1) },
      { text: "how do I deploy to staging on a Friday?", at: day0(2) },
      { text: "can I deploy on a Friday?", at: day0(3) },
    ];
    expect(representative(asked)?.text).toBe("how do I deploy to staging on a Friday?");
    expect(representative(asked.slice(0, 1))?.text).toBe("how do I deploy staging?");
    expect(representative([asked[0]!, { text: "how do I deploy staging?", at: day0(5) }])?.at).toEqual(day0(5));
    expect(representative([])).toBeNull();
  });
});

describe("the week's tokens and their estimated cost", () => {
  it("prices a model by its id or a dated id of it, never a later version by an earlier one's price", () => {
    expect(priceOf("claude-sonnet-5")).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    expect(priceOf("claude-opus-4-5-20251101")?.input).toBe(5);
    expect(priceOf("claude-opus-4-1-20250805")?.input).toBe(15);
    expect(priceOf("claude-opus-4-20250514")?.input).toBe(15);
    // A version the table does not list is not priced as the version before it.
    expect(priceOf("claude-sonnet-5-5")).toBeNull();
    expect(priceOf("claude-sonnet-50")).toBeNull();
    expect(priceOf("gpt-5")).toBeNull();
    // 1M in, 100k out, 2M read from cache, 200k written to it on Sonnet 5: 3 + 1.5 + 0.6 + 0.75 dollars.
    expect(estimateCost({ model: "claude-sonnet-5", input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 200_000 })).toBeCloseTo(5.85, 10);
    expect(estimateCost({ model: "my-local-model", input: 5, output: 5, cacheRead: 0, cacheWrite: 0 })).toBeNull();
  });

  it("takes the operator's prices over the table (CAIRN_MODEL_PRICES), cache prices following input", () => {
    const prices = withPrices({ "claude-sonnet-5-5": { input: 2, output: 10 }, "claude-sonnet-5": { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } });
    expect(priceOf("claude-sonnet-5-5", prices)).toEqual({ input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 });
    expect(priceOf("claude-sonnet-5", prices)).toEqual({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0 });
    expect(priceOf("claude-opus-4-5", prices)?.input).toBe(5);
  });

  const week = { start: "", replies: 12, corrections: 0, per100: 0 };
  const metrics: ReportMetrics = {
    periodStart: "2025-03-03T09:00:00.000Z",
    periodEnd: "2025-03-10T09:00:00.000Z",
    weeks: [...Array.from({ length: 7 }, () => ({ ...week, replies: 10 })), week],
    correctionsLearned: 0,
    lessons: { proposed: 0, approved: 0, promoted: 0, private: 0 },
    rules: { added: 0, archived: 0, active: 0 },
    skills: { created: 0, patched: 0, mostUsed: [], neverUsed: [], neverUsedCount: 0 },
    memory: { user: { start: 0, end: 0 }, channel: { start: 0, end: 0 }, team: { start: 0, end: 0 } },
  };
  const render = (usage: ReportUsage) =>
    reportMarkdown(reportLayout({ workspaceName: "Acme", metrics, usage, repeated: { byWords: [], byRule: [] }, praised: { replies: 0, praise: 0, topics: [], skills: [] }, learned: [], rules: [], narrative: null }));

  it("shows the tokens and the estimate, and tokens only for a model without a price", () => {
    const text = render({
      people: 3,
      conversations: 5,
      answered: 12,
      unanswered: 0,
      modelFailures: 0,
      tokens: [
        { model: "claude-sonnet-5", input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheWrite: 200_000 },
        { model: "my-local-model", input: 1000, output: 10, cacheRead: 0, cacheWrite: 0 },
      ],
      prices: PRICES,
    });
    expect(text).toContain("- People who talked to cairn: **3** · conversations: **5**");
    expect(text).toContain("- Questions cairn couldn't answer: **0**\n- AI model failures: **0**");
    expect(text).toContain(
      "- AI model tokens: 1,201,000 sent, 2,000,000 re-read from cache, 100,010 written · estimated cost about $5.85 (an estimate from list prices, not a bill) · unknown model `my-local-model`: tokens only",
    );
  });

  it("leaves the token line out while tokens are not recorded", () => {
    expect(render({ people: 1, conversations: 1, answered: 12, unanswered: 2, modelFailures: 2, tokens: null, prices: PRICES })).not.toContain("tokens");
  });
});

describe("the model's part, checked", () => {
  const input = {
    metrics: {} as ReportMetrics,
    learned: [{ id: "L1", kind: "rule", text: "NEVER deploy after 4pm on Fridays", taughtBy: "Ana", approvedBy: null, at: "" }],
    rules: [
      { id: "R1", text: "ALWAYS squash-merge", since: "", confidence: 1, flag: null },
      { id: "R2", text: "NEVER squash release branches", since: "", confidence: 1, flag: null },
    ],
    usage: { people: 0, conversations: 0, answered: 0, unanswered: 0, modelFailures: 0, tokens: null, prices: PRICES },
    repeated: { byWords: [], byRule: [] },
  } satisfies NarrativeInput;
  const answer = (a: unknown) => vet(ModelAnswer.parse(a), input);

  it("keeps what passes: a narrative without figures, faithful summaries, proposals on known rules", () => {
    const n = answer({
      narrative: "A quieter week.",
      learned: [{ id: "L1", summary: "No deploys after 4pm on Fridays." }],
      proposals: [
        { kind: "conflict", rule_ids: ["R1", "R2"], reason: "They disagree on squashing." },
        { kind: "prune", rule_ids: ["R1"], reason: "Rarely useful." },
      ],
    });
    expect(n).toEqual({
      narrative: "A quieter week.",
      summaries: { L1: "No deploys after 4pm on Fridays." },
      proposals: [
        { kind: "conflict", ruleIds: ["R1", "R2"], reason: "They disagree on squashing." },
        { kind: "prune", ruleIds: ["R1"], reason: "Rarely useful." },
      ],
    });
  });

  it("drops a narrative with any digit, numbers not in the source, unknown ids and a conflict of one rule", () => {
    const n = answer({
      narrative: "Corrections fell by 40% this week.",
      learned: [
        { id: "L1", summary: "No deploys after 5pm." },
        { id: "L9", summary: "Something cairn was never shown." },
      ],
      proposals: [
        { kind: "prune", rule_ids: ["R7"], reason: "Unknown." },
        { kind: "conflict", rule_ids: ["R1", "R1"], reason: "Itself." },
        { kind: "prune", rule_ids: ["R1", "R2"], reason: "Two at once." },
        { kind: "prune", rule_ids: ["R2"], reason: "Used 3 times." },
      ],
    });
    expect(n).toEqual({ narrative: null, summaries: {}, proposals: [] });
  });

  it("refuses an answer of the wrong shape as a whole", () => {
    expect(ModelAnswer.safeParse({ narrative: 42 }).success).toBe(false);
    expect(ModelAnswer.safeParse({ proposals: [{ kind: "delete", rule_ids: ["R1"], reason: "x" }] }).success).toBe(false);
  });
});
