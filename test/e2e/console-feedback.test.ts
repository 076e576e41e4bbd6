/**
 * The console's 👎 and 👍 (`/correct <text>`, `/good`), its own `/help`, and `/me` after `forget me`:
 * typed into the real console adapter on a real Core, against the fake Anthropic server, on SQLite
 * and PostgreSQL. `/correct` is also run on Slack's side through the fake adapter (a DM), since it
 * is a command of every platform.
 */
import { PassThrough, Writable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Core } from "../../src/app/core.ts";
import { ConsoleAdapter } from "../../src/platforms/console/console.ts";
import { parseCommandLine } from "../../src/ground/commands.ts";
import { typedCommand } from "../../src/ground/typed-command.ts";
import { parseCase } from "../../src/lessons/lesson-case.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { makeCore } from "../support/agent.ts";
import { forEachDatabase, inboundFor, uniqueId } from "../support/db.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";

const DISTILL = "You turn a person's correction";
const WRONG = "The code freeze is on Thursdays.";
const FIXED = "You are right: the code freeze is on Fridays.";

/** The text of a request's last message (blocks joined). */
function lastText(req: RecordedRequest): string {
  const last = req.body.messages.at(-1);
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => ("text" in b && typeof b.text === "string" ? b.text : "")).join("\n");
}

/** The model: distils a correction into a rule, answers a framed correction with it applied, anything else wrong. */
function respond(req: RecordedRequest): Step {
  if (systemText(req).includes(DISTILL)) {
    const said = /own words:\n([\s\S]*?)\n\nEarlier lessons/.exec(lastText(req))?.[1]?.trim() ?? "";
    return { text: JSON.stringify({ rule: `ALWAYS say: ${said}`, same_as: null, contradicts: null }) };
  }
  if (lastText(req).includes("══ CORRECTION ══")) return { text: FIXED };
  return { text: WRONG };
}

/** One person's terminal on the core: lines typed in, everything printed collected. */
class Terminal {
  private readonly input = new PassThrough();
  private output = "";
  private lines = 0;
  private readonly running: Promise<void>;

  constructor(core: Core, readonly user: string) {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.output += chunk.toString("utf8");
        done();
      },
    });
    this.running = new ConsoleAdapter({ input: this.input, output: sink, user, prompt: false, color: false }).run(core);
  }

  /**
   * Types `line` and returns what the console printed for it. The console handles lines one after
   * another, so a line it does not know, typed next, is printed only once `line` was answered (and
   * its delivery's jobs queued): its echo marks the end.
   */
  async type(line: string): Promise<string> {
    await waitUntil("the console to greet", () => this.output.includes("talking as"));
    const from = this.output.length;
    const done = `/done-${++this.lines}`;
    this.input.write(`${line}\n${done}\n`);
    await waitUntil(`the console's answer to ${line}`, () => this.output.includes(`Unknown command ${done}.`));
    return this.output.slice(from, this.output.indexOf(`Unknown command ${done}.`, from));
  }

  async close(): Promise<void> {
    this.input.end();
    await this.running;
  }
}

describe("/correct and /good as typed", () => {
  it("are commands only with their slash: a message saying \"good\" or \"correct\" is chat; /correct keeps its text whole", () => {
    for (const chat of ["good", "Good!", "good.", "correct", "correct, thanks", "cairn good"]) expect(typedCommand(chat)).toBeNull();
    expect(parseCommandLine("correct the freeze is on Fridays,  not Thursdays")).toEqual({ name: "correct", args: ["the freeze is on Fridays,  not Thursdays"] });
    expect(parseCommandLine("good")).toEqual({ name: "good", args: [] });
  });
});

forEachDatabase("the console's /correct, /good, /help and /me", (getDb) => {
  let fake: FakeAnthropic;
  let core: Core;
  const terminals: Terminal[] = [];
  const db = () => getDb().prisma;
  const open = (user = uniqueId("dana")) => {
    const t = new Terminal(core, user);
    terminals.push(t);
    return t;
  };
  const personOf = (user: string) => db().person.findFirstOrThrow({ where: { externalId: user } });

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    core = makeCore(getDb(), fake, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0 } });
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.close()));
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.setDefault(respond);
  });

  it("/correct <text> after an answer: answers again with it applied, keeps the correction with its case, and the lesson job makes it a lesson /lessons shows", async () => {
    const t = open();
    expect(await t.type("when is the code freeze?")).toContain(`cairn> ${WRONG}`);
    const corrected = await t.type("/correct the freeze is on Fridays");
    // The corrected answer, at once: the model saw the wrong answer and the question with the correction.
    expect(corrected).toContain(`cairn> ${FIXED}`);
    const framed = fake.requests.find((r) => lastText(r).includes("══ CORRECTION ══"))!;
    expect(lastText(framed)).toContain(WRONG);
    expect(lastText(framed)).toContain("when is the code freeze?");
    expect(lastText(framed)).toContain("the freeze is on Fridays");

    const dana = await personOf(t.user);
    const question = await db().message.findFirstOrThrow({ where: { authorId: dana.id, text: "when is the code freeze?" } });
    const wrong = await db().message.findFirstOrThrow({ where: { replyToId: question.id, role: "assistant" } });
    const said = await db().message.findFirstOrThrow({ where: { authorId: dana.id, role: "user", text: "the freeze is on Fridays" } });
    // Recorded without a model noticing it: typed (no question asked), for the last answer, by Dana, her words verbatim.
    const correction = await db().correction.findFirstOrThrow({ where: { replyMessageId: wrong.id } });
    expect(correction).toMatchObject({ reactorId: dana.id, correctionMessageId: said.id, questionMessageId: null, status: "received" });

    await core.learning.drain();
    const lesson = await db().memoryEntry.findFirstOrThrow({ where: { kind: "lesson", sourceMessageId: said.id } });
    expect(lesson).toMatchObject({ scope: "user", ownerId: dana.id, status: "active", text: "ALWAYS say: the freeze is on Fridays" });
    expect(parseCase(lesson.origin)).toMatchObject({ question: "when is the code freeze?", wrongAnswer: WRONG, correction: "the freeze is on Fridays", by: { id: dana.id }, isDm: true, replyMessageId: wrong.id, correctionMessageId: said.id });
    expect(await db().correction.findUniqueOrThrow({ where: { id: correction.id } })).toMatchObject({ status: "learned", lessonId: lesson.id });
    expect(await t.type("/lessons")).toContain("ALWAYS say: the freeze is on Fridays");

    // The corrected answer is now the last one: a second /correct corrects it, as a 👎 on it would.
    expect(await t.type("/correct and it starts at noon")).toContain(`cairn> ${FIXED}`);
    const fixed = await db().message.findFirstOrThrow({ where: { replyToId: said.id, role: "assistant" } });
    expect(await db().correction.findMany({ where: { reactorId: dana.id }, orderBy: { createdAt: "asc" } })).toMatchObject([{ replyMessageId: wrong.id }, { replyMessageId: fixed.id, status: "received" }]);
  });

  it("/correct with no answer to correct says so, /correct alone asks what was wrong, and /lessons points to /correct", async () => {
    const t = open();
    expect(await t.type("/lessons")).toContain("cairn learns them when you correct an answer (/correct <what was wrong> after it)");
    expect(await t.type("/correct the freeze is on Fridays")).toContain("There is no answer of mine in this conversation to correct yet.");
    expect(await t.type("/correct")).toContain("What was wrong with my last answer? Send /correct <what was wrong>");
    expect(fake.requests).toHaveLength(0);
    const erin = await personOf(t.user);
    expect(await db().correction.count({ where: { reactorId: erin.id } })).toBe(0);
    expect(await db().message.count({ where: { authorId: erin.id } })).toBe(0);
  });

  it("/good records the praise a 👍 does on the last answer, once per person", async () => {
    const t = open();
    expect(await t.type("/good")).toContain("There is no answer of mine in this conversation to mark as good yet.");
    await t.type("when is the code freeze?");
    expect(await t.type("/good")).toContain("Thanks — noted.");
    await core.learning.drain();
    const fay = await personOf(t.user);
    const asked = await db().message.findFirstOrThrow({ where: { authorId: fay.id, role: "user" } });
    const reply = await db().message.findFirstOrThrow({ where: { replyToId: asked.id, role: "assistant" } });
    // The feedback job a 👍 queues: counted on the answer's trace, as the report and the lessons' confidence read it.
    expect(await db().replyTrace.findUniqueOrThrow({ where: { messageId: reply.id } })).toMatchObject({ positive: 1, negative: 0 });
    const job = await db().job.findFirstOrThrow({ where: { kind: "feedback", uniqueKey: `feedback:good:${reply.id}:${fay.id}` } });
    expect(JSON.parse(job.payload)).toMatchObject({ replyMessageId: reply.id, reactorId: fay.id, emoji: "👍", signal: "positive", action: "added" });
    expect(await t.type("/good")).toContain("Noted already — thanks.");
    await core.learning.drain();
    expect(await db().replyTrace.findUniqueOrThrow({ where: { messageId: reply.id } })).toMatchObject({ positive: 1 });
  });

  it("/help in the console is written for the console; on Slack and Discord every command is shown as it is typed there", async () => {
    const help = await open().type("/help");
    for (const command of ["/correct <what was wrong>", "/good", "/learn <text>", "/lessons", "/me", "/skills", "/new", "/why", "/forget me", "/report", "/jobs", "/quit"]) expect(help).toContain(command);
    expect(help).not.toMatch(/\/cairn|Slack|Discord|✅|👎|mention/);

    const commandsIn = (markdown: string) => [...markdown.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const slack = (await core.command(inboundFor({ workspace: uniqueId("T"), user: "U1", channel: "C1", isDm: false }), "help")).text;
    expect(slack).toContain("remembers what your team teaches it");
    // Every command shown starts with the slash command (only the word `learn`, said to a mention, is not one).
    expect(commandsIn(slack).filter((c) => c !== "learn").every((c) => c.startsWith("/cairn "))).toBe(true);
    expect(commandsIn(slack)).toEqual(expect.arrayContaining(["/cairn help", "/cairn me", "/cairn forget me", "/cairn verify <id>", "/cairn approve <id>"]));
    const discord = (await core.command(inboundFor({ platform: "discord", workspace: uniqueId("G"), user: "1", channel: "2", isDm: false }), "help")).text;
    expect(commandsIn(discord).filter((c) => c !== "learn").every((c) => c.startsWith("/cairn "))).toBe(true);
    // Discord registers no `verify` subcommand (25 at most): its help names the button instead.
    expect(discord).not.toContain("/cairn verify");
    expect(discord).toContain("*Still true* in `/cairn team`");
  });

  it("/me after forget me: no stored message counted that was erased, and the profile's size in words", async () => {
    const t = open();
    await t.type("hello there");
    const before = await t.type("/me");
    expect(before).toContain("Stored messages from you: 1.");
    expect(before).toMatch(/Your profile \(0 of 1,375 characters used\)/);
    expect(before).not.toMatch(/\[\d+% - /);
    await t.type("/forget me");
    expect(await t.type("/forget me confirm")).toContain("Done. Erased");
    const after = await t.type("/me");
    expect(after).toContain("Stored messages from you: 0. 1 earlier message keeps only a tombstone: the text was erased.");
  });

  it("/correct works on Slack too (a DM): after the person's own 👎 it is the correction cairn asked for, answered in the DM and learned", async () => {
    const slack = new FakeAdapter("slack");
    core.attach(slack);
    const place = { workspace: uniqueId("T"), user: uniqueId("U"), channel: "", isDm: true, name: "Gus" };
    const dm = `D-${place.user}`;
    const inDm = (text: string) => inboundFor({ ...place, channel: dm }, text);
    expect(await core.receive(inDm("when is the code freeze?"), slack.target(dm))).toMatchObject({ kind: "replied", status: "ok" });
    const wrongPart = slack.sent.at(-1)!;
    expect(wrongPart.text).toBe(WRONG);
    const reacted = await core.feedback({ platform: "slack", workspace: { externalId: place.workspace }, reactor: { externalId: place.user }, channel: { externalId: dm, isDm: true }, targetMessageId: wrongPart.id, emoji: "👎", action: "added", at: new Date() });
    expect(reacted.kind).toBe("recorded");
    await core.learning.drain();
    expect(slack.sent.at(-1)!.text).toContain("what should I have done instead?");

    const answered = await core.answer(inDm("/cairn correct the freeze is on Fridays"), { name: "correct", args: ["the freeze is on Fridays"] }, { place: slack.target(dm) }, slack);
    expect(answered).toMatchObject({ visibility: "public", failed: false });
    expect(slack.sent.at(-1)).toMatchObject({ channel: dm, text: FIXED });
    const gus = await personOf(place.user);
    // The one correction of that answer: the 👎's, asked and now received from the command's words.
    const [correction, ...more] = await db().correction.findMany({ where: { reactorId: gus.id } });
    expect(more).toHaveLength(0);
    expect(correction!.questionMessageId).not.toBeNull();
    await core.learning.drain();
    expect(await db().memoryEntry.findFirstOrThrow({ where: { kind: "lesson", ownerId: gus.id } })).toMatchObject({ text: "ALWAYS say: the freeze is on Fridays" });
    expect(await db().correction.findUniqueOrThrow({ where: { id: correction!.id } })).toMatchObject({ status: "learned" });
  });

  it("a command typed without its slash in a Slack DM is no answer to praise: /good after it marks the model's answer before it", async () => {
    const slack = new FakeAdapter("slack");
    core.attach(slack);
    const place = { workspace: uniqueId("T"), user: uniqueId("U"), channel: "", isDm: true, name: "Hal" };
    const dm = `D-${place.user}`;
    const inDm = (text: string) => inboundFor({ ...place, channel: dm }, text);
    expect(await core.receive(inDm("when is the code freeze?"), slack.target(dm))).toMatchObject({ kind: "replied", status: "ok" });
    const requests = fake.requests.length;
    // Typed in a DM: run as the command (its answer stored as a reply), no model call.
    expect(await core.receive(inDm("skills"), slack.target(dm))).toMatchObject({ kind: "replied", status: "command" });
    expect(fake.requests).toHaveLength(requests);
    expect((await core.answer(inDm("/cairn good"), { name: "good", args: [] }, { place: slack.target(dm) }, slack)).failed).toBe(false);
    await core.learning.drain();
    const hal = await personOf(place.user);
    const asked = await db().message.findFirstOrThrow({ where: { authorId: hal.id, role: "user", text: "when is the code freeze?" } });
    const answer = await db().message.findFirstOrThrow({ where: { replyToId: asked.id, role: "assistant" } });
    expect(await db().replyTrace.findUniqueOrThrow({ where: { messageId: answer.id } })).toMatchObject({ positive: 1 });
  });

  it("/correct of an answer someone else's 👎 asks about says so and runs no turn; one whose message is refused leaves nothing open", async () => {
    const slack = new FakeAdapter("slack");
    core.attach(slack);
    const ws = uniqueId("T");
    const [alice, bob] = [uniqueId("UA"), uniqueId("UB")];
    const inThread = (user: string, text: string) => inboundFor({ workspace: ws, user, channel: "CGEN", isDm: false, thread: "t1" }, text);
    await core.receive(inThread(alice, "when is the code freeze?"), slack.target("CGEN"));
    const wrongPart = slack.sent.at(-1)!;
    await core.feedback({ platform: "slack", workspace: { externalId: ws }, reactor: { externalId: bob }, channel: { externalId: "CGEN", isDm: false }, targetMessageId: wrongPart.id, emoji: "👎", action: "added", at: new Date() });
    await core.learning.drain();
    const before = fake.requests.length;
    await core.answer(inThread(alice, "/cairn correct it is Fridays"), { name: "correct", args: ["it is Fridays"] }, { place: slack.target("CGEN") }, slack);
    expect(slack.sent.at(-1)!.text).toBe("My last answer here has a correction already (see `/cairn lessons`). If there is more, just tell me in a message.");
    expect(fake.requests.length).toBe(before);
    const wsId = (await db().workspace.findFirstOrThrow({ where: { externalId: ws } })).id;
    expect(await db().correction.findMany({ where: { workspaceId: wsId } })).toMatchObject([{ reactorId: (await personOf(bob)).id, status: "asked" }]);

    // Over the rate limit, the correction's message gets no turn: the correction opened for it is taken back.
    const limited = makeCore(getDb(), fake, { bundledSkillsDir: null, rateLimitPerHour: 1 });
    const other = new FakeAdapter("slack");
    limited.attach(other);
    const carol = uniqueId("UC");
    const dm = `D-${carol}`;
    const inDm = (text: string) => inboundFor({ workspace: uniqueId("T"), user: carol, channel: dm, isDm: true }, text);
    const first = inDm("when is the code freeze?");
    await limited.receive(first, other.target(dm));
    const answered = await limited.answer({ ...inDm("/cairn correct it is Fridays"), workspace: first.workspace }, { name: "correct", args: ["it is Fridays"] }, { place: other.target(dm) }, other);
    expect(answered.failed).toBe(false);
    expect(other.sent.at(-1)!.text).toMatch(/limit/i);
    expect(await db().correction.count({ where: { reactorId: (await personOf(carol)).id } })).toBe(0);
  });
});
