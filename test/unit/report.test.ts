/** The weekly report's pure parts: the channel setting, sparklines, lifetimes, topics and the model's answer checks. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/app/config.ts";
import { agentSettings } from "../../src/app/settings.ts";
import { parseReportChannel } from "../../src/report/channel.ts";
import { sparkline } from "../../src/report/render.ts";
import { activeAt, lifetimeOf, type RevisionRow } from "../../src/report/lifetime.ts";
import { groupByWords, sharedWords } from "../../src/report/topics.ts";
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

describe("the model's part, checked", () => {
  const input = {
    metrics: {} as ReportMetrics,
    learned: [{ id: "L1", kind: "rule", text: "NEVER deploy after 4pm on Fridays", taughtBy: "Ana", approvedBy: null, at: "" }],
    rules: [
      { id: "R1", text: "ALWAYS squash-merge", since: "", confidence: 1, flag: null },
      { id: "R2", text: "NEVER squash release branches", since: "", confidence: 1, flag: null },
    ],
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
