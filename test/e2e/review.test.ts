/**
 * The review: a background agent run queued after a reply was posted (every N person messages for
 * memory, after a turn with many tool calls for skills), run by the job worker, in the
 * conversation's scope and prompt, with only the memory and skill tools, writing with provenance
 * "review" behind its guards, and telling the person what it did. Real core, real database (SQLite
 * and PostgreSQL), the fake Anthropic server and a fake platform adapter.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { makeCore, TEST_SETTINGS, toolResults } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic, type RecordedRequest } from "../fakes/anthropic.ts";
import type { LearningSettings } from "../../src/learning/settings.ts";

const REVIEW_TOOLS = ["memory", "skills_list", "skill_view", "skill_manage"];
const PROMPT_MARK = "REVIEW (from cairn itself";

/** The text of a request's last message. */
const lastText = (r: RecordedRequest) => JSON.stringify(r.body.messages.at(-1)?.content ?? "");
/** A review's first request: the review prompt is its last message. */
const isReviewStart = (r: RecordedRequest) => lastText(r).includes(PROMPT_MARK);
const isReview = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes(PROMPT_MARK);
const toolNames = (r: RecordedRequest) => (r.body.tools ?? []).map((t) => t.name);

const SKILL = (name: string, body: string) => `---\nname: ${name}\ndescription: Use when writing ${name.replace("-", " ")}\n---\n# ${name}\n${body}\n`;

forEachDatabase("reviews after replies", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.setDefault({ text: "ok" });
  });

  /** A core with these learning settings (its worker not started), a fake adapter attached, and Alice in a thread or a DM. */
  function setup(learning: Partial<LearningSettings>, opts: { dm?: boolean; ws?: string } = {}) {
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, ...learning } });
    const adapter = new FakeAdapter();
    core.attach(adapter);
    const ws = opts.ws ?? uniqueId("T");
    const alice: PlaceOptions = opts.dm
      ? { workspace: ws, user: "UALICE", name: "Alice", channel: "D-UALICE", isDm: true }
      : { workspace: ws, user: "UALICE", name: "Alice", channel: "C-ops", isDm: false, thread: "t1" };
    const db = getDb().prisma;
    const workspaceId = async () => (await db.workspace.findFirstOrThrow({ where: { externalId: ws } })).id;
    return {
      core,
      adapter,
      ws,
      alice,
      workspaceId,
      /** Alice says `text`; resolves once the reply was posted (and its jobs queued). */
      async say(text: string, beforeSend?: (text: string) => Promise<void>) {
        const inbound = inboundFor(alice, text);
        const r = await core.receive(inbound, adapter.target(alice.channel, beforeSend));
        if (r.kind !== "replied" || r.status !== "ok" || r.replyMessageId === null) throw new Error(`not answered: ${JSON.stringify(r)}`);
        const question = await db.message.findFirstOrThrow({ where: { platformId: inbound.messageId, role: "user" } });
        return { replyMessageId: r.replyMessageId, questionId: question.id };
      },
      async reviewJobs() {
        const id = await workspaceId();
        return (await core.jobs.list("review")).filter((j) => (JSON.parse(j.payload) as { workspaceId: string }).workspaceId === id);
      },
      async scope() {
        return (await place(getDb(), alice)).scope;
      },
    };
  }

  it("reviews memory after the 10th person message, once its reply was posted, with the conversation's prompt and tools (the turns' cached prefix)", async () => {
    const t = setup({ reviewEveryTurns: 10 });
    for (let i = 1; i <= 9; i++) await t.say(`question number ${i}`);
    expect(await t.reviewJobs()).toEqual([]);

    let queuedWhenPosted = -1;
    const tenth = await t.say("By the way, I prefer answers as bullet points", async () => {
      queuedWhenPosted = (await t.reviewJobs()).length;
    });
    expect(queuedWhenPosted).toBe(0);
    const jobs = await t.reviewJobs();
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0]!.payload)).toMatchObject({ kind: "memory", replyMessageId: tenth.replyMessageId });

    const fact = "Alice prefers answers as bullet points";
    fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: fact }] } }] });
    await t.core.learning.drain();

    const answers = fake.requests.filter((r) => !isReview(r));
    const reviews = fake.requests.filter(isReview);
    expect(answers).toHaveLength(10);
    // Its write went through: the review ends there, without a call for closing words nobody reads.
    expect(reviews).toHaveLength(1);
    const review = reviews[0]!;
    expect(review.seq).toBeGreaterThan(answers.at(-1)!.seq);
    // The turn's tools, in its order: the request's prefix (tools, then system) is the turns' own.
    expect(review.body.tools).toEqual(answers.at(-1)!.body.tools);
    expect(toolNames(review)).toEqual(expect.arrayContaining(REVIEW_TOOLS));
    expect(review.body.model).toBe(TEST_SETTINGS.model);
    // The same system prompt as the conversation's turns (the session's frozen snapshot).
    expect(review.body.system).toEqual(answers.at(-1)!.body.system);
    expect(systemText(review)).toContain("PROFILE OF ALICE");
    expect(lastText(review)).toContain("MEMORY REVIEW");
    const history = JSON.stringify(review.body.messages.slice(0, -1));
    expect(history).toContain("question number 1");
    expect(history).toContain("By the way, I prefer answers as bullet points");

    const db = getDb().prisma;
    const entry = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: await t.workspaceId(), text: fact } });
    expect(entry).toMatchObject({ scope: "user", status: "active", source: "review", sourceMessageId: tenth.questionId });
    const revision = await db.revision.findFirstOrThrow({ where: { entityId: entry.id } });
    expect(revision).toMatchObject({ source: "review", sourceMessageId: tenth.questionId, reason: `memory review of reply ${tenth.replyMessageId}` });

    const notice = t.adapter.sent.at(-1)!;
    expect(notice.channel).toBe("C-ops");
    expect(notice.text).toBe("Saved to memory: 1 fact.");
    expect((await t.reviewJobs())[0]!.status).toBe("done");
  });

  it("runs a review queued before a restart exactly once, on the new core", async () => {
    const before = setup({ reviewEveryTurns: 10 });
    for (let i = 1; i <= 10; i++) await before.say(`message ${i}`);
    expect((await before.reviewJobs()).map((j) => j.status)).toEqual(["queued"]);

    // A restart: a new core on the same database; the first one never ran its worker.
    const after = setup({ reviewEveryTurns: 10 }, { ws: before.ws });
    fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Alice counts her messages" }] } }] });
    await after.core.learning.drain();
    expect(fake.requests.filter(isReviewStart)).toHaveLength(1);
    await after.core.learning.drain();
    expect(fake.requests.filter(isReviewStart)).toHaveLength(1);
    expect((await after.reviewJobs()).map((j) => j.status)).toEqual(["done"]);
    expect(await getDb().prisma.memoryEntry.count({ where: { workspaceId: await after.workspaceId(), source: "review" } })).toBe(1);
    expect(after.adapter.sent.at(-1)!.text).toBe("Saved to memory: 1 fact.");
  });

  it("does nothing when a review that wrote already runs again (a lost lease, a crash before it was marked done)", async () => {
    const t = setup({ reviewEveryTurns: 1 });
    await t.say("I'm on the payments team");
    fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Alice is on the payments team" }] } }] });
    await t.core.learning.drain();
    const [job] = await t.reviewJobs();
    await getDb().prisma.job.update({ where: { id: job!.id }, data: { status: "queued" } });
    await t.core.learning.drain();
    expect(fake.requests.filter(isReviewStart)).toHaveLength(1);
    expect((await t.reviewJobs()).map((j) => j.status)).toEqual(["done"]);
    expect(t.adapter.sent.filter((s) => s.text.startsWith("Saved to memory"))).toHaveLength(1);
  });

  it("reviews skills after a turn with enough tool calls: a new channel skill is saved, a team skill change is only proposed", async () => {
    const t = setup({ skillReviewToolCalls: 3 });
    fake.enqueue({ toolUse: [{ name: "skills_list", input: {} }, { name: "skills_list", input: {} }] }, { text: "Two calls." });
    await t.say("what skills are there?");
    expect(await t.reviewJobs()).toEqual([]);

    const scope = await t.scope();
    await t.core.skills.create(scope, SKILL("release-notes", "1. List the merged PRs."), "team", { source: "tool", actorId: scope.personId, sourceMessageId: null });
    fake.enqueue(
      { toolUse: [{ name: "skill_view", input: { name: "release-notes" } }, { name: "skills_list", input: {} }, { name: "skills_list", input: {} }] },
      { text: "Here are the notes." },
    );
    const turn = await t.say("write the release notes for 2.4; and always group them by component");
    const jobs = await t.reviewJobs();
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0]!.payload)).toMatchObject({ kind: "skills", replyMessageId: turn.replyMessageId });

    // Both changes in one reply, as the review prompt asks: they go through and the review ends.
    fake.enqueue({
      toolUse: [
        { name: "skill_manage", input: { action: "patch", name: "release-notes", old_string: "1. List the merged PRs.", new_string: "1. List the merged PRs by component." } },
        { name: "skill_manage", input: { action: "create", name: "changelog-groups", scope: "channel", content: SKILL("changelog-groups", "Group entries by component.") } },
      ],
    });
    await t.core.learning.drain();

    const reviews = fake.requests.filter(isReview);
    expect(reviews).toHaveLength(1);
    expect(toolNames(reviews[0]!)).toEqual(expect.arrayContaining(REVIEW_TOOLS));
    expect(lastText(reviews[0]!)).toContain("SKILL REVIEW");
    expect(lastText(reviews[0]!)).toContain("this conversation read: release-notes");
    expect(lastText(reviews[0]!)).toContain("Make all your changes in one reply");

    const db = getDb().prisma;
    const workspaceId = await t.workspaceId();
    const team = await db.skill.findFirstOrThrow({ where: { workspaceId, name: "release-notes" } });
    expect(team.content).toContain("1. List the merged PRs.\n");
    const created = await db.skill.findFirstOrThrow({ where: { workspaceId, name: "changelog-groups" } });
    expect(created).toMatchObject({ scope: "channel", channelKey: "C-ops", source: "review", sourceMessageId: turn.questionId });
    expect(await db.revision.findFirstOrThrow({ where: { entityId: created.id } })).toMatchObject({ source: "review", reason: `skills review of reply ${turn.replyMessageId}` });
    // The notice, then the proposal for a teammate to approve (test/e2e/skill-proposals.test.ts).
    expect(t.adapter.sent.at(-2)!.text).toBe("Created skill changelog-groups.");
    expect(t.adapter.sent.at(-1)!.text).toContain("Proposed change to team skill `release-notes`");
    expect(await db.skillProposal.findFirstOrThrow({ where: { workspaceId, skillId: team.id } })).toMatchObject({ status: "pending", newText: expect.stringContaining("1. List the merged PRs by component.") });
  });

  it("reviews a short thread when it ends with /new, once, and not one that said too little", async () => {
    const t = setup({ reviewEveryTurns: 10, reviewMinTurns: 3 });
    await t.say("we moved the standup to 10:30");
    await t.say("and it's on Zoom now, not Meet");
    const third = await t.say("remember that for the invites");
    expect(await t.reviewJobs()).toEqual([]);
    await t.core.endSession(inboundFor(t.alice, "/new"), "request");
    const jobs = await t.reviewJobs();
    expect(jobs.map((j) => JSON.parse(j.payload) as unknown)).toEqual([expect.objectContaining({ kind: "memory", replyMessageId: third.replyMessageId })]);
    // Ended again with nothing said since: no second review.
    await t.core.endSession(inboundFor(t.alice, "/new"), "request");
    expect(await t.reviewJobs()).toHaveLength(1);
    // Two messages are not enough for a review of their own.
    await t.say("thanks");
    await t.say("bye");
    await t.core.endSession(inboundFor(t.alice, "/new"), "request");
    expect(await t.reviewJobs()).toHaveLength(1);
  });

  it("reviews a thread that went quiet, once, from the sweep", async () => {
    const t = setup({ reviewEveryTurns: 10, reviewMinTurns: 3, reviewIdleMs: 1 });
    for (const text of ["our on-call handbook moved to Notion", "the old wiki page is archived", "link it when people ask"]) await t.say(text);
    await new Promise((r) => setTimeout(r, 5));
    expect(await t.core.learning.sweepQuiet()).toBeGreaterThanOrEqual(1);
    expect(await t.reviewJobs()).toHaveLength(1);
    expect(await t.core.learning.sweepQuiet()).toBe(0);
    expect(await t.reviewJobs()).toHaveLength(1);
    // The sweep found every quiet conversation of the suite: their reviews run now, not in later tests.
    await t.core.learning.drain();
  });

  it("runs one combined review when memory and skills are both due, and refuses the turn's other tools in it", async () => {
    const t = setup({ reviewEveryTurns: 2, skillReviewToolCalls: 3 });
    // Tool calls add up across turns: 2, then 1 more with the second message, which is also the 2nd.
    fake.enqueue({ toolUse: [{ name: "skills_list", input: {} }, { name: "skills_list", input: {} }] }, { text: "Listed." });
    await t.say("which skills do we have?");
    expect(await t.reviewJobs()).toEqual([]);
    fake.enqueue({ toolUse: [{ name: "skills_list", input: {} }] }, { text: "Short version." });
    const second = await t.say("I prefer the short version");
    const jobs = await t.reviewJobs();
    expect(jobs.map((j) => JSON.parse(j.payload) as unknown)).toEqual([expect.objectContaining({ kind: "both", replyMessageId: second.replyMessageId })]);
    fake.enqueue({ toolUse: [{ name: "session_search", input: { query: "skills" } }] }, { text: "Nothing to save." });
    await t.core.learning.drain();
    // This conversation's review (the sweep of an earlier test may have queued others' too).
    const reviews = fake.requests.filter((r) => isReview(r) && JSON.stringify(r.body.messages).includes("I prefer the short version"));
    expect(reviews).toHaveLength(2);
    expect(lastText(reviews[0]!)).toContain("MEMORY REVIEW");
    expect(lastText(reviews[0]!)).toContain("SKILL REVIEW");
    expect(toolResults(reviews[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining("session_search is not available in a review") });
    // Both marks moved: nothing more is due at once.
    await t.say("ok");
    expect(await t.reviewJobs()).toHaveLength(1);
  });

  it("stops a review at its write cap", async () => {
    const t = setup({ reviewEveryTurns: 1, reviewMaxWrites: 3 }, { dm: true });
    await t.say("hello");
    const facts = [1, 2, 3, 4, 5].map((n) => `Alice fact number ${n}`);
    fake.enqueue(
      { toolUse: facts.map((content) => ({ name: "memory", input: { operations: [{ action: "add", target: "user", content }] } })) },
      { text: "Done." },
    );
    await t.core.learning.drain();
    const results = toolResults(fake.requests.filter(isReview).at(-1)!);
    expect(results.map((r) => r.is_error)).toEqual([false, false, false, true, true]);
    expect(results[3]!.content).toContain("the most one review may make");
    expect((await t.core.memory.entries(await t.scope(), "user")).map((e) => e.text)).toEqual(facts.slice(0, 3));
    expect(t.adapter.sent.at(-1)).toMatchObject({ channel: "D-UALICE", text: "Saved to memory: 3 facts." });
  });

  it("holds a review's change to an entry a person wrote until the person confirms it", async () => {
    const t = setup({ reviewEveryTurns: 1 });
    fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Alice's editor is vim" }] } }] },
      { text: "Noted." },
      { toolUse: [{ name: "memory", input: { operations: [{ action: "replace", target: "user", old_text: "vim", content: "Alice's editor is Helix" }] } }] },
      { text: "Done." },
    );
    const turn = await t.say("I use vim");
    await t.core.learning.drain();

    const db = getDb().prisma;
    const scope = await t.scope();
    const original = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "Alice's editor is vim" } });
    expect(original).toMatchObject({ status: "active", source: "tool" });
    const pending = await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, replacesId: original.id } });
    expect(pending).toMatchObject({ status: "pending", text: "Alice's editor is Helix", source: "review", createdById: scope.personId, sourceMessageId: turn.questionId });
    expect((await t.core.memory.entries(scope, "user")).map((e) => e.text)).toEqual(["Alice's editor is vim"]);
    expect(t.adapter.sent.at(-1)!.text).toBe(`**Alice**, 1 change to an entry is waiting for your ✅ on this message (or \`/cairn confirm ${pending.id}\`).`);

    const confirmed = await t.core.memory.confirm(scope, [pending.id], { source: "tool", actorId: scope.personId, sourceMessageId: null, reason: "confirmed by the person" });
    expect(confirmed.map((e) => e.id)).toEqual([pending.id]);
    expect((await t.core.memory.entries(scope, "user")).map((e) => e.text)).toEqual(["Alice's editor is Helix"]);
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: original.id } })).toMatchObject({ status: "superseded", supersededById: pending.id });
  });

  it("holds a team fact a review saves until the person's ✅ on the notice, which nobody else's replaces; then it is the channel's until a teammate shares it", async () => {
    const t = setup({ reviewEveryTurns: 1 });
    await t.say("we deploy on Tuesdays here");
    fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "The team deploys on Tuesdays" }] } }] });
    await t.core.learning.drain();

    const scope = await t.scope();
    const entry = await getDb().prisma.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "The team deploys on Tuesdays" } });
    // Kept where it was said (issue 26): pending for Alice, then proposed for the team.
    expect(entry).toMatchObject({ scope: "channel", channelKey: "C-ops", proposedScope: "team", status: "pending", source: "review", createdById: scope.personId });
    expect(await t.core.memory.entries(scope, "team")).toEqual([]);
    const notice = t.adapter.sent.at(-1)!;
    expect(notice.text).toBe(`**Alice**, 1 team fact is waiting for your ✅ on this message (or \`/cairn confirm ${entry.id}\`).`);

    const react = (who: string) =>
      t.core.feedback({ platform: "slack", workspace: { externalId: t.ws }, reactor: { externalId: who }, channel: { externalId: "C-ops", isDm: false }, targetMessageId: notice.id, emoji: "✅", action: "added", at: new Date() });
    await react("UBOB");
    expect(await t.core.memory.entries(scope, "team")).toEqual([]);
    await react("UALICE");
    expect((await t.core.memory.entries(scope, "channel")).map((e) => e.text)).toEqual(["The team deploys on Tuesdays"]);
    expect(await t.core.memory.entries(scope, "team")).toEqual([]);
    // Bob, a teammate, shares it with the whole workspace.
    const bob = { ...t.alice, user: "UBOB", name: "Bob" };
    expect((await t.core.command(inboundFor(bob), "approve", [entry.id])).text).toContain("Shared with the whole workspace");
    expect((await t.core.memory.entries(scope, "team")).map((e) => e.text)).toEqual(["The team deploys on Tuesdays"]);
  });

  it("writes and posts nothing when the review finds nothing to save", async () => {
    const t = setup({ reviewEveryTurns: 1 });
    await t.say("thanks, that's all");
    fake.enqueue({ text: "Nothing to save." });
    await t.core.learning.drain();
    expect(fake.requests.filter(isReview)).toHaveLength(1);
    expect(t.adapter.sent.map((s) => s.text)).toEqual(["ok"]);
    const db = getDb().prisma;
    const workspaceId = await t.workspaceId();
    expect(await db.memoryEntry.count({ where: { workspaceId } })).toBe(0);
    expect(await db.revision.count({ where: { workspaceId, source: "review" } })).toBe(0);
    expect((await t.reviewJobs()).map((j) => j.status)).toEqual(["done"]);
  });
});
