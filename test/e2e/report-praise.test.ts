/**
 * Praise, judged by the weekly report and by team rules (issue 25, item 4): people praise answers
 * with reactions and Slack's feedback button through the real delivery path (an in-memory Slack-like
 * platform on the real Core), then the report built by the `report` job lists the topics of the
 * praised answers and the skills they read, with counts, leaving out DMs, a person's own skill and
 * another workspace. Praise also raises the confidence of the team rules in a praised answer's
 * prompt, up to MAX_CONFIDENCE and never above. Both databases.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { MemoryPlatform, type ShownMessage } from "../../bench/lib/memory-platform.ts";
import type { Core } from "../../src/app/core.ts";
import type { Praised } from "../../src/report/praise.ts";
import { MAX_CONFIDENCE } from "../../src/lessons/lesson-store.ts";
import { startFakeAnthropic, lastUserText, systemText, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { makeCore } from "../support/agent.ts";
import { forEachDatabase, place, uniqueId } from "../support/db.ts";

/** The skills the model reads to answer each question (skill_view calls, as a real turn makes them). */
const READS: Record<string, string[]> = {
  "how do I tag the release?": ["release-tagging"],
  "what tag does a release get?": ["release-tagging"],
  "how do I export invoices as CSV?": ["invoice-export", "ann-notes"],
  "how do I tag my passport photos?": ["release-tagging"],
  "how do I deploy staging?": ["deploy-checklist"],
  "how do we bill our customers?": ["globex-billing"],
};

const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages.at(-1)?.content ?? "").includes("tool_result");
const isReport = (req: RecordedRequest) => systemText(req).startsWith("You write the short weekly report");

function respond(req: RecordedRequest): Step {
  // The review model's prose is not the JSON asked for: the report is the numbers alone.
  if (isReport(req)) return { text: "A fine week." };
  if (afterTool(req)) return { text: "Here is how." };
  const question = Object.keys(READS).find((q) => lastUserText(req).includes(q));
  return question ? { toolUse: READS[question]!.map((name) => ({ name: "skill_view", input: { name } })) } : { text: "An answer." };
}

/** The Markdown section that starts with `heading`, up to the next section. */
const section = (text: string, heading: string) => text.split("\n\n").find((s) => s.startsWith(`**${heading}**`)) ?? "";

forEachDatabase("praise in the weekly report and in rules' confidence", (getDb) => {
  let fake: FakeAnthropic;
  const cores: Core[] = [];
  const db = () => getDb().prisma;
  const settings = { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0 } };

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.setDefault(respond);
  });
  afterAll(async () => {
    await fake.close();
  });

  /** A core with a platform of its own workspace; its people and channels exist before any turn. */
  async function team(): Promise<{ core: Core; chat: MemoryPlatform; workspaceId: string; personId: (user: string) => Promise<string> }> {
    const core = makeCore(getDb(), fake, settings);
    cores.push(core);
    const chat = new MemoryPlatform(uniqueId("T"));
    await chat.start(core.attach(chat));
    const personId = async (user: string) => (await place(getDb(), { workspace: chat.workspace, user, channel: "C-setup", isDm: false, thread: "setup" })).scope.personId;
    await personId("ann");
    const workspaceId = (await db().workspace.findFirstOrThrow({ where: { externalId: chat.workspace } })).id;
    return { core, chat, workspaceId, personId };
  }

  const skill = (workspaceId: string, name: string, extra: { scope?: string; ownerId?: string } = {}) =>
    db().skill.create({ data: { workspaceId, name, description: name, content: `---\nname: ${name}\ndescription: ${name}\n---\n\nSteps.`, contentHash: name, source: "tool", ...extra } });

  async function ask(chat: MemoryPlatform, user: string, channel: string, question: string): Promise<ShownMessage> {
    const said = await chat.say(user, channel, question);
    const reply = said.replies.at(-1);
    if (!reply) throw new Error(`not answered: ${question}`);
    return reply;
  }

  /** Slack's "Good response" button under an answer: 👍 with a fixed positive signal. */
  const goodResponse = (core: Core, chat: MemoryPlatform, user: string, reply: ShownMessage) =>
    core.feedback({
      platform: "slack",
      workspace: { externalId: chat.workspace },
      reactor: { externalId: user, displayName: user },
      channel: { externalId: reply.channel, isDm: false },
      targetMessageId: reply.id,
      emoji: "👍",
      signal: "positive",
      action: "added",
      at: new Date(),
    });

  it("lists the week's most praised answers' topics and the skills they read, with counts; no DM, no personal skill, no other workspace", async () => {
    const { core, chat, workspaceId, personId } = await team();
    for (const name of ["release-tagging", "invoice-export", "deploy-checklist"]) await skill(workspaceId, name);
    await skill(workspaceId, "ann-notes", { scope: "user", ownerId: await personId("ann") });

    // Praised twice (two people's reactions), and once by the feedback button: the same topic, the same skill.
    const tag = await ask(chat, "ann", "C-rel", "how do I tag the release?");
    await chat.react("bo", tag, "+1");
    await chat.react("cy", tag, "tada");
    const tagAgain = await ask(chat, "bo", "C-ops", "what tag does a release get?");
    expect((await goodResponse(core, chat, "ann", tagAgain)).kind).toBe("recorded");
    // Praised once; it also read Ann's own skill, which only she may see.
    const invoices = await ask(chat, "ann", "C-rel", "how do I export invoices as CSV?");
    await chat.react("bo", invoices, "+1");
    // Praised in a DM: one person's, never in the report.
    await chat.react("ann", await ask(chat, "ann", "dm", "how do I tag my passport photos?"), "+1");
    // Answered, not praised.
    await ask(chat, "cy", "C-rel", "how do I deploy staging?");
    // Another workspace's praised answer.
    const other = await team();
    await skill(other.workspaceId, "globex-billing");
    await other.chat.react("bo", await ask(other.chat, "ann", "C-rel", "how do we bill our customers?"), "+1");
    for (const c of cores) await c.learning.drain();

    // The praise reached the traces and the skills' success counts.
    const traces = await db().replyTrace.findMany({ where: { workspaceId, positive: { gt: 0 } } });
    expect(traces.map((t) => t.positive).sort()).toEqual([1, 1, 1, 2]);
    expect((await db().skill.findFirstOrThrow({ where: { workspaceId, name: "release-tagging" } })).successCount).toBe(4);

    const slot = `manual:${new Date(Date.now() + 60_000).toISOString()}`;
    await core.jobs.enqueue("report", { slot }, { uniqueKey: `test-report:${slot}` });
    await core.learning.drain();
    const row = await db().report.findUniqueOrThrow({ where: { workspaceId_slot: { workspaceId, slot } } });
    const praised = (JSON.parse(row.data) as { praised: Praised }).praised;
    expect(praised).toEqual({
      replies: 3,
      praise: 4,
      topics: [
        // Named by a question asked (of two alike, the later one), not by a bag of words.
        { question: "what tag does a release get?", replies: 2, praise: 3 },
        { question: "how do I export invoices as CSV?", replies: 1, praise: 1 },
      ],
      skills: [
        { name: "release-tagging", replies: 2, praise: 3 },
        { name: "invoice-export", replies: 1, praise: 1 },
      ],
    });
    expect(section(row.text, "Most praised answers").split("\n")).toEqual([
      "**Most praised answers** (a 👍 or other praise this week; private messages left out)",
      "- 3 answers, praised 4 times",
      '- "what tag does a release get?": 2 answers, praised 3 times',
      '- "how do I export invoices as CSV?": 1 answer, praised 1 time',
      "- Skills those answers used: `release-tagging` (2 answers, praised 3 times), `invoice-export` (1 answer, praised 1 time)",
    ]);
    // Nowhere in the report: the DM's question, Ann's own skill (not even under "most used"), the other workspace.
    for (const hidden of ["passport", "photos", "ann-notes", "globex", "customers"]) expect(row.text).not.toContain(hidden);
    expect(row.text).toContain("most used: `release-tagging` (3), `deploy-checklist` (1), `invoice-export` (1)");
    // Read, not praised: used, not listed among the praised.
    expect(section(row.text, "Most praised answers")).not.toContain("deploy");

    // The other workspace's report has its own praise only.
    const theirs = await db().report.findUniqueOrThrow({ where: { workspaceId_slot: { workspaceId: other.workspaceId, slot } } });
    expect(section(theirs.text, "Most praised answers")).toContain("- Skills those answers used: `globex-billing` (1 answer, praised 1 time)");
    expect(theirs.text).not.toContain("release-tagging");
  });

  it("praise raises the confidence of the team rules in the praised answer's prompt, up to MAX_CONFIDENCE and never above", async () => {
    const { chat, workspaceId } = await team();
    const rule = (text: string, confidence: number) => db().memoryEntry.create({ data: { workspaceId, scope: "team", kind: "rule", status: "active", source: "reaction", text, confidence } });
    const fresh = await rule("ALWAYS tag releases with the date", 1);
    const trusted = await rule("NEVER tag a release before the build is green", MAX_CONFIDENCE - 0.05);
    const reply = await ask(chat, "ann", "C-rel", "how do I tag the release?");
    const trace = await db().replyTrace.findFirstOrThrow({ where: { workspaceId, positive: 0 } });
    expect(new Set(JSON.parse(trace.rules) as string[])).toEqual(new Set([fresh.id, trusted.id]));
    const confidence = async (id: string) => (await db().memoryEntry.findUniqueOrThrow({ where: { id } })).confidence;

    await chat.react("bo", reply, "+1");
    for (const c of cores) await c.learning.drain();
    const once = await confidence(fresh.id);
    expect(once).toBeGreaterThan(1);
    expect(await confidence(trusted.id)).toBe(MAX_CONFIDENCE);

    await chat.react("cy", reply, "+1");
    for (const c of cores) await c.learning.drain();
    expect(await confidence(fresh.id)).toBeGreaterThan(once);
    expect(await confidence(trusted.id)).toBe(MAX_CONFIDENCE);
  });
});
