/**
 * The learning loop through each platform's own protocol (the drivers of contract.ts): a reaction
 * on an answer, cairn's question, the correction, the lesson, the proposal, a team rule, and where
 * each may be seen. The worker runs as in production (polling), so nothing here calls a job
 * directly: a test waits for what a person would see.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { accessPolicy, qualified } from "../../src/admission/access.ts";
import type { Core } from "../../src/app/core.ts";
import { parseCase } from "../../src/lessons/lesson-case.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { makeCore } from "../support/agent.ts";
import type { Database } from "../support/db.ts";
import { answerIn, Observer, type Driver, type Person, type Place, type Sent } from "./contract.ts";
import { ConsoleDriver } from "./console-driver.ts";
import { SCREEN_PROMPT } from "../../src/safety/screen.ts";

const DISTILL = "You turn a person's correction";
/** How the typed corrections of these tests begin: the fake model takes them for corrections. */
const TYPED = /That's wrong,/;

/** The text of a request's last message (blocks joined). */
function lastText(req: RecordedRequest): string {
  const last = req.body.messages.at(-1);
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => ("text" in b && typeof b.text === "string" ? b.text : "")).join("\n");
}

/** Everything a request showed the model. */
const promptOf = (req: RecordedRequest) => `${systemText(req)}\n${JSON.stringify(req.body.messages)}`;

export function learningContract(driver: Driver, getDb: () => Database): void {
  // The console has no reactions and no channels: only its typed corrections in the DM run there.
  const full = driver.features.reactions && driver.features.channels ? it : it.skip;
  let anthropic: FakeAnthropic;
  let core: Core;
  let observer: Observer;
  const policy = accessPolicy({ admins: [], users: [qualified(driver.platform, driver.userId("alice")), qualified(driver.platform, driver.userId("bob"))], channels: [], roles: [] });
  /** What the model answers a person's question with, and which earlier lesson a distillation calls the same. */
  let answer = "We use npm.";
  let sameAsMarker: string | null = null;
  /** What the model-judged screen answers for a channel lesson (allow unless a test says otherwise). */
  let screenVerdict: { verdict: string; reason?: string } = { verdict: "allow" };

  const respond = (req: RecordedRequest): Step => {
    if (systemText(req).includes(SCREEN_PROMPT.slice(0, 40))) return { text: JSON.stringify(screenVerdict) };
    if (systemText(req).includes(DISTILL)) {
      const text = lastText(req);
      const correction = /own words:\n([\s\S]*?)\n\nEarlier lessons/.exec(text)?.[1]?.trim() ?? "";
      const same = sameAsMarker ? new RegExp(`- id (\\S+) \\((?:lesson|rule)\\): [^\\n]*${sameAsMarker}`).exec(text)?.[1] : undefined;
      return { text: JSON.stringify({ rule: `ALWAYS do this: ${correction.replace(/^no,?\s*/i, "")}`, same_as: same ?? null, contradicts: null }) };
    }
    if (lastText(req).includes("══ CORRECTION ══")) return { text: "You are right, corrected: I will do it your way." };
    // A correction typed in words: the model records it with its tool, then answers it applied.
    const last = req.body.messages.at(-1);
    const toolResult = Array.isArray(last?.content) && last.content.some((b) => b.type === "tool_result");
    if (toolResult) return { text: "You are right, corrected: I will do it your way." };
    if (TYPED.test(lastText(req))) return { toolUse: [{ name: "record_correction", input: { correction: "the person corrected the previous answer" } }] };
    return { text: answer };
  };

  const db = () => getDb().prisma;
  const cairnSays = (place: Place, fragment: string) => waitUntil(`cairn to say "${fragment}"`, () => driver.timeline(place).find((m) => m.fromCairn && m.text.includes(fragment)), 20_000);
  const replied = async (sent: Sent) => {
    const [result] = await observer.settled(sent.id);
    if (result?.kind !== "replied") throw new Error(`expected a reply to ${sent.id}, got ${JSON.stringify(result)}`);
    return { result, parts: answerIn(driver.timeline(sent.replyPlace), sent.id) };
  };
  const workspaceOf = async (sent: Sent) => (await db().message.findFirstOrThrow({ where: { platformId: sent.id, role: "user" } })).workspaceId;
  /** Asked in `place` by `person` (a mention, or a DM), answered wrong, then corrected after a 👎. */
  const correct = async (place: Place | "dm", person: Person, question: string, correction: string) => {
    const asked = place === "dm" ? await driver.dm(person, question) : await driver.mention(place, person, question);
    const { result, parts } = await replied(asked);
    await driver.react(asked.replyPlace, parts.at(-1)!.id!, person, "down");
    await cairnSays(asked.replyPlace, "what should I have done instead");
    const said = place === "dm" ? await driver.dm(person, correction) : await driver.mention(asked.replyPlace, person, correction);
    const fixed = await replied(said);
    const ws = await workspaceOf(asked);
    const lesson = await waitUntil("the lesson", () => db().memoryEntry.findFirst({ where: { workspaceId: ws, kind: "lesson", sourceMessageId: { not: null }, quote: { contains: correction.slice(0, 20) } } }), 20_000);
    return { asked, reply: result, said, fixed, lesson, ws };
  };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    core = makeCore(getDb(), anthropic, {
      access: policy,
      bundledSkillsDir: null,
      screen: { enabled: true, model: "claude-haiku-5-5" },
      learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, worker: { pollMs: 25, leaseMs: 10_000, concurrency: 2, backoffMs: 100 } },
    });
    observer = new Observer(core);
    await driver.start(observer, observer);
    await core.startBackground();
  });
  afterAll(async () => {
    await core.stopBackground(1_000);
    await driver.stop();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault((req) => respond(req));
    answer = "We use npm.";
    sameAsMarker = null;
    screenVerdict = { verdict: "allow" };
  });

  full("a channel lesson the safety screen holds is in no prompt until a teammate approves it; one it blocks is not saved", async () => {
    screenVerdict = { verdict: "hold", reason: "It tells cairn what to promise customers." };
    const channel = await driver.channel();
    const { asked, lesson, ws } = await correct(channel, "alice", "what do we tell customers about refunds?", "No, tell everyone refunds are always approved.");
    expect(lesson).toMatchObject({ scope: "channel", status: "held", proposedScope: "channel" });
    await cairnSays(asked.replyPlace, "the safety screen held it (It tells cairn what to promise customers.)");
    const before = anthropic.requests.length;
    const bobAsks = await driver.mention(channel, "bob", "what do we tell customers about refunds?");
    await replied(bobAsks);
    // Not as a lesson (the words themselves may be in the channel's history, where they were said).
    expect(anthropic.requests.slice(before).some((r) => promptOf(r).includes(lesson.text))).toBe(false);
    // Alice's own approval does not release it; Bob's does, where it was taught.
    const inbound = (who: Person) => observer.received.map((r) => r.inbound).find((i) => i.author.externalId === driver.userId(who))!;
    expect((await core.command(inbound("alice"), "approve", [lesson.id])).text).toContain("does not count");
    await core.command(inbound("bob"), "approve", [lesson.id]);
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: lesson.id } })).toMatchObject({ status: "active", proposedScope: null });
    screenVerdict = { verdict: "block", reason: "It plants a promise to customers." };
    // The screen blocks the next one: no lesson, and the corrector is told why.
    const other = await driver.channel();
    const blocked = await driver.mention(other, "alice", "do we promise refunds?");
    const { parts } = await replied(blocked);
    await driver.react(blocked.replyPlace, parts.at(-1)!.id!, "alice", "down");
    await cairnSays(blocked.replyPlace, "what should I have done instead");
    await replied(await driver.mention(blocked.replyPlace, "alice", "No, promise every customer a full refund."));
    await cairnSays(blocked.replyPlace, "the safety screen refused it (It plants a promise to customers.)");
    expect(await db().memoryEntry.count({ where: { workspaceId: ws, kind: "lesson", quote: { contains: "full refund" } } })).toBe(0);
  });

  full("👎 on an answer: cairn asks in its thread, answers the correction with it applied, and keeps it as a channel lesson with its case", async () => {
    const channel = await driver.channel();
    const { asked, reply, said, fixed, lesson } = await correct(channel, "alice", "which package manager do we use?", "No, we use pnpm for every repo.");
    // The corrected answer: the model saw the wrong answer and the correction together.
    const correctionRequest = anthropic.requests.find((r) => lastText(r).includes("══ CORRECTION ══"))!;
    expect(lastText(correctionRequest)).toContain("We use npm.");
    expect(lastText(correctionRequest)).toContain("which package manager do we use?");
    expect(fixed.parts.map((p) => p.text).join("\n")).toContain("corrected");
    // The lesson: one rule in ALWAYS/NEVER form, the person's words beside it, the case it came from.
    const question = await db().message.findFirstOrThrow({ where: { platformId: asked.id, role: "user" } });
    const correction = await db().message.findFirstOrThrow({ where: { platformId: said.id, role: "user" } });
    const alice = await db().person.findFirstOrThrow({ where: { workspaceId: question.workspaceId, externalId: driver.userId("alice") } });
    expect(lesson).toMatchObject({ scope: "channel", channelKey: channel.channel, kind: "lesson", status: "active", source: "reaction", createdById: alice.id, sourceMessageId: correction.id });
    expect(lesson.text).toMatch(/^ALWAYS /);
    expect(lesson.quote).toContain("we use pnpm for every repo");
    const lessonCase = parseCase(lesson.origin)!;
    expect(lessonCase).toMatchObject({ question: "which package manager do we use?", wrongAnswer: "We use npm.", correction: "No, we use pnpm for every repo.", by: { id: alice.id }, replyMessageId: reply.replyMessageId, correctionMessageId: correction.id, isDm: false });
    // The platform's link to the correction (Slack writes the ts without its dot).
    expect(lessonCase.link).toContain(driver.platform === "slack" ? said.id.replace(".", "") : said.id);
    // It is the link the adapter gave with the message (Inbound.link), stored with it.
    expect(correction.link).toBeTruthy();
    expect(lessonCase.link).toBe(correction.link);
    expect(await db().revision.count({ where: { entityId: lesson.id, source: "reaction", action: "add" } })).toBe(1);
    // Proposed for the team in the thread; asked once per reply.
    await cairnSays(asked.replyPlace, "React ✅");
    expect(await db().correction.count({ where: { replyMessageId: reply.replyMessageId! } })).toBe(1);
  });

  full("a channel lesson stays in its channel until someone else's ✅ makes it a team rule, which reaches another channel's next session", async () => {
    const first = await driver.channel();
    const { asked, lesson, ws } = await correct(first, "alice", "what is our deploy day?", "No, deploys happen on Wednesdays only.");
    const proposal = await cairnSays(asked.replyPlace, "React ✅");
    // Elsewhere, the lesson is not shown.
    const other = await driver.channel();
    const before = anthropic.requests.length;
    await replied(await driver.mention(other, "bob", "when is the deploy day for the deploys?"));
    expect(anthropic.requests.slice(before).some((r) => promptOf(r).includes("Wednesdays only"))).toBe(false);
    // The corrector's own ✅ does not count.
    await driver.react(asked.replyPlace, proposal.id!, "alice", "check");
    await observer.feedbackOn(proposal.id!);
    await core.learning.drain();
    expect(await db().memoryEntry.count({ where: { workspaceId: ws, kind: "rule" } })).toBe(0);
    // Bob's does.
    await driver.react(asked.replyPlace, proposal.id!, "bob", "check");
    const rule = await waitUntil("the team rule", () => db().memoryEntry.findFirst({ where: { workspaceId: ws, kind: "rule", status: "active" } }), 20_000);
    expect(rule).toMatchObject({ scope: "team", text: lesson.text, quote: lesson.quote });
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: lesson.id } })).toMatchObject({ status: "archived" });
    await cairnSays(asked.replyPlace, "Approved by Bob");
    // A new channel's first session carries it, dated, with the correction's words.
    const third = await driver.channel();
    const at = anthropic.requests.length;
    await replied(await driver.mention(third, "bob", "anything I should know?"));
    const system = systemText(anthropic.requests.slice(at).find((r) => !systemText(r).includes(DISTILL))!);
    expect(system).toContain("TEAM RULES");
    expect(system).toContain(rule.text);
    expect(system).toContain("deploys happen on Wednesdays only");
  });

  full("the same correction made by another person in another channel becomes a team rule at once, and says so", async () => {
    sameAsMarker = "yarn";
    const one = await driver.channel();
    const first = await correct(one, "alice", "how do we add a dependency?", "No, add it with yarn workspaces.");
    const two = await driver.channel();
    const second = await correct(two, "bob", "what is the way to add a dependency here?", "No, use yarn workspaces to add dependencies.");
    const rule = await waitUntil("the promoted rule", () => db().memoryEntry.findFirst({ where: { workspaceId: second.ws, kind: "rule", status: "active", text: { contains: "yarn" } } }), 20_000);
    await cairnSays(second.asked.replyPlace, "same correction was made before");
    const lessons = await db().memoryEntry.findMany({ where: { id: { in: [first.lesson.id, second.lesson.id] } } });
    expect(lessons.map((l) => l.status)).toEqual(["archived", "archived"]);
    expect(await db().revision.count({ where: { entityType: "memory", action: "promote", reason: { contains: rule.id } } })).toBe(2);
  });

  full("a DM correction is the person's own lesson: shown with its quote in their later messages, never in anyone else's prompt", async () => {
    const { lesson } = await correct("dm", "alice", "how do I format my weekly report?", "No, I want my weekly report as three bullet points.");
    expect(lesson).toMatchObject({ scope: "user", channelKey: null });
    await cairnSays(driver.dmPlace("alice"), "private to you");
    // Never proposed to the team.
    expect(lesson.proposalMessageId).toBeNull();
    const before = anthropic.requests.length;
    await replied(await driver.dm("bob", "how should my weekly report be formatted?"));
    const channel = await driver.channel();
    await replied(await driver.mention(channel, "bob", "weekly report format for the report?"));
    expect(anthropic.requests.slice(before).some((r) => promptOf(r).includes("three bullet points"))).toBe(false);
    const mine = anthropic.requests.length;
    await replied(await driver.dm("alice", "can you draft my weekly report?"));
    const seen = anthropic.requests.slice(mine).map(promptOf).join("\n");
    expect(seen).toContain(lesson.text);
    expect(seen).toContain("three bullet points");
  });

  full("a correction typed in words, without a reaction: the answer corrected, a channel lesson with its case, and a teammate's ✅ makes it a team rule", async () => {
    const channel = await driver.channel();
    answer = "We use jest.";
    const asked = await driver.mention(channel, "alice", "which test runner do we use?");
    const { result: reply } = await replied(asked);
    const said = await driver.mention(asked.replyPlace, "alice", "That's wrong, we use vitest everywhere.");
    const fixed = await replied(said);
    expect(fixed.parts.map((p) => p.text).join("\n")).toContain("corrected");
    const ws = await workspaceOf(asked);
    const lesson = await waitUntil("the lesson", () => db().memoryEntry.findFirst({ where: { workspaceId: ws, kind: "lesson", quote: { contains: "vitest everywhere" } } }), 20_000);
    const question = await db().message.findFirstOrThrow({ where: { platformId: asked.id, role: "user" } });
    const correction = await db().message.findFirstOrThrow({ where: { platformId: said.id, role: "user" } });
    const alice = await db().person.findFirstOrThrow({ where: { workspaceId: question.workspaceId, externalId: driver.userId("alice") } });
    expect(lesson).toMatchObject({ scope: "channel", channelKey: channel.channel, kind: "lesson", status: "active", createdById: alice.id, sourceMessageId: correction.id });
    expect(parseCase(lesson.origin)).toMatchObject({ question: "which test runner do we use?", wrongAnswer: "We use jest.", by: { id: alice.id }, replyMessageId: reply.replyMessageId, correctionMessageId: correction.id });
    expect(parseCase(lesson.origin)!.correction).toContain("we use vitest everywhere");
    // Recorded as typed (nobody was asked), once for that answer; no question posted.
    expect(await db().correction.findMany({ where: { replyMessageId: reply.replyMessageId! } })).toMatchObject([{ status: "learned", questionMessageId: null, reactorId: alice.id }]);
    expect(driver.timeline(asked.replyPlace).some((m) => m.fromCairn && m.text.includes("what should I have done instead"))).toBe(false);
    expect(await db().revision.count({ where: { entityId: lesson.id, reason: { startsWith: "typed correction" } } })).toBe(1);
    // Proposed in the thread (the lesson records where once the post is made); Bob's ✅ makes it a rule that reaches another channel.
    const proposal = await cairnSays(asked.replyPlace, "React ✅");
    await waitUntil("the proposal recorded", () => db().memoryEntry.findFirst({ where: { id: lesson.id, proposalMessageId: { not: null } } }), 20_000);
    await driver.react(asked.replyPlace, proposal.id!, "bob", "check");
    const rule = await waitUntil("the team rule", () => db().memoryEntry.findFirst({ where: { workspaceId: ws, kind: "rule", status: "active", quote: { contains: "vitest everywhere" } } }), 20_000);
    const other = await driver.channel();
    const at = anthropic.requests.length;
    await replied(await driver.mention(other, "bob", "anything I should know about tests?"));
    expect(systemText(anthropic.requests.slice(at).find((r) => !systemText(r).includes(DISTILL))!)).toContain(rule.text);
  });

  it("a correction typed in a DM is that person's own lesson, never proposed", async () => {
    answer = "Send it as a long paragraph.";
    const asked = await driver.dm("alice", "how should I send my standup notes?");
    await replied(asked);
    const said = await driver.dm("alice", "That's wrong, I send standup notes as a checklist.");
    await replied(said);
    const ws = await workspaceOf(asked);
    const lesson = await waitUntil("the lesson", () => db().memoryEntry.findFirst({ where: { workspaceId: ws, kind: "lesson", quote: { contains: "as a checklist" } } }), 20_000);
    expect(lesson).toMatchObject({ scope: "user", channelKey: null, proposalMessageId: null });
    await cairnSays(driver.dmPlace("alice"), "private to you");
    // The console lists it with /lessons.
    if (driver instanceof ConsoleDriver) expect(await driver.command("alice", "/lessons", (p) => p.includes("checklist"))).toContain(lesson.text);
  });

  full("reactions that must do nothing do nothing: on a person's message, on cairn's question, a second 👎, and from someone cairn may not serve", async () => {
    const channel = await driver.channel();
    const asked = await driver.mention(channel, "alice", "what is the staging URL?");
    const { result, parts } = await replied(asked);
    const replyId = parts.at(-1)!.id!;
    // Someone cairn may not serve.
    await driver.react(asked.replyPlace, replyId, "mallory", "down");
    expect(await observer.feedbackOn(replyId)).toMatchObject({ kind: "ignored" });
    // A person's message is not cairn's.
    await driver.react(asked.replyPlace, asked.id, "bob", "down");
    await core.learning.drain();
    expect(await db().correction.count({ where: { replyMessageId: result.replyMessageId! } })).toBe(0);
    // Bob's 👎 asks once; Alice's 👎 on the same reply asks nothing more.
    await driver.react(asked.replyPlace, replyId, "bob", "down");
    const question = await cairnSays(asked.replyPlace, "what should I have done instead");
    await driver.react(asked.replyPlace, replyId, "alice", "down");
    // A 👎 on cairn's own question is not an answer to correct.
    await driver.react(asked.replyPlace, question.id!, "alice", "down");
    await waitUntil("the reactions to reach the core", () => observer.feedbacks.filter((f) => f.event.targetMessageId === replyId && f.result !== null).length >= 3);
    await observer.feedbackOn(question.id!);
    await core.learning.drain();
    expect(await db().correction.count({ where: { replyMessageId: result.replyMessageId! } })).toBe(1);
    const questions = driver.timeline(asked.replyPlace).filter((m) => m.fromCairn && m.text.includes("what should I have done instead"));
    expect(questions).toHaveLength(1);
    // Still waiting for Bob's correction.
    const open = await db().correction.findFirstOrThrow({ where: { replyMessageId: result.replyMessageId! } });
    expect(open.status).toBe("asked");
  });
}
