/**
 * The agent core end to end: the real Core, real database (SQLite and PostgreSQL), the real SDK
 * talking HTTP to the fake Anthropic server. What the tests read is what the model was sent.
 */
import { describe, expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore, toolResults } from "../support/agent.ts";
import { systemText } from "../fakes/anthropic.ts";
import { MODEL_UNAVAILABLE_REPLY } from "../../src/ground/replies.ts";
import type { HandleResult, Outbound } from "../../src/ground/types.ts";

function replyOf(result: HandleResult): Outbound {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply;
}

const SKILL_MD = `---
name: release-checklist
description: Use when cutting a release of the web app
---
# Release checklist
1. Freeze main.
2. Run the smoke tests.
3. Tag the release.
`;

forEachDatabase("agent core end to end", (getDb) => {
  // Team skills made by the model are the team's at once here (their reach is test/e2e/skill-reach.test.ts).
  const h = coreHarness(getDb, { start: true, defaultReply: null, settings: { teamWrites: { mode: "open" } } });
  const dm = (user: string, name = user): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name });
  const say = async (opts: PlaceOptions, text: string) => replyOf(await h.core.handle(inboundFor(opts, text)));

  it("learns a preference into the speaker's profile, shows it from the next session, and to nobody else", async () => {
    const alice = dm("UALICE", "Alice");
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Prefers answers as bullet points" }] } }] },
      { text: "Got it, bullet points from now on." },
    );
    const first = await say(alice, "I prefer answers as bullet points");
    expect(first.status).toBe("ok");
    expect(first.text).toBe("Got it, bullet points from now on.");
    const result = toolResults(h.fake.requests[1]!);
    expect(result[0]?.is_error).toBe(false);
    expect(result[0]?.content).toContain("added to user");
    expect(result[0]?.content).toMatch(/user memory: 1 entries \[\d+% - 32\/1,375 chars\]/);

    const db = getDb().prisma;
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UALICE", workspace: { externalId: h.ws } } });
    const entry = await db.memoryEntry.findFirstOrThrow({ where: { ownerId: person.id } });
    const source = await db.message.findUniqueOrThrow({ where: { id: entry.sourceMessageId ?? -1 } });
    expect(entry).toMatchObject({ scope: "user", status: "active", source: "tool", createdById: person.id, text: "Prefers answers as bullet points" });
    expect(source.text).toBe("I prefer answers as bullet points");
    const revisions = await db.revision.findMany({ where: { entityId: entry.id } });
    expect(revisions).toMatchObject([{ action: "add", oldText: null, newText: "Prefers answers as bullet points", source: "tool", actorId: person.id }]);

    // Same session: the snapshot is frozen, so the entry is not in the prompt yet.
    h.fake.enqueue({ text: "ok" });
    await say(alice, "and another thing");
    expect(systemText(h.fake.lastRequest()!)).not.toContain("Prefers answers as bullet points");

    await h.core.command(inboundFor(alice), "new");
    h.fake.enqueue({ text: "• sure" });
    await say(alice, "what's the plan?");
    const fresh = systemText(h.fake.lastRequest()!);
    expect(fresh).toContain("Prefers answers as bullet points");
    expect(fresh).toContain("PROFILE OF ALICE");
    expect(fresh).toMatch(/\[2% - 32\/1,375 chars\]/);
    // The new session's history starts afresh.
    expect(h.fake.lastRequest()!.body.messages).toHaveLength(1);

    h.fake.enqueue({ text: "hello Bob" });
    await say(dm("UBOB", "Bob"), "hi, what's the plan?");
    expect(systemText(h.fake.lastRequest()!)).not.toContain("bullet points");

    // In a shared thread, each speaker's prompt carries only their own profile.
    const thread = { workspace: h.ws, channel: "CGEN", isDm: false, thread: "1700000000.000100" };
    h.fake.enqueue({ text: "hi Alice" }, { text: "hi Bob" });
    await say({ ...thread, user: "UALICE", name: "Alice" }, "hello thread");
    expect(systemText(h.fake.lastRequest()!)).toContain("Prefers answers as bullet points");
    await say({ ...thread, user: "UBOB", name: "Bob" }, "hello from Bob");
    const bobInThread = h.fake.lastRequest()!;
    expect(systemText(bobInThread)).not.toContain("bullet points");
    expect(JSON.stringify(bobInThread.body.messages)).toContain("[Alice] hello thread");
  });

  it("creates a skill that the next session indexes; patches leave revisions; support files are served; traversal is refused", async () => {
    const bob = dm("UBOB", "Bob");
    h.fake.enqueue(
      { toolUse: [{ name: "skill_manage", input: { action: "create", name: "release-checklist", content: SKILL_MD } }] },
      { toolUse: [{ name: "skill_manage", input: { action: "patch", name: "release-checklist", old_string: "2. Run the smoke tests.", new_string: "2. Run the smoke and e2e tests." } }] },
      { toolUse: [{ name: "skill_manage", input: { action: "write_file", name: "release-checklist", file_path: "references/rollback.md", content: "Roll back with `deploy --previous`." } }] },
      { toolUse: [{ name: "skill_manage", input: { action: "write_file", name: "release-checklist", file_path: "../x", content: "escape" } }] },
      { text: "Saved the release checklist." },
    );
    expect((await say(bob, "remember how we release")).text).toBe("Saved the release checklist.");
    const results = h.fake.requests.slice(1).map((r) => toolResults(r)[0]!);
    expect(results[0]).toMatchObject({ is_error: false });
    expect(results[0]!.content).toContain("Created skill 'release-checklist'");
    expect(results[1]).toMatchObject({ is_error: false });
    expect(results[2]).toMatchObject({ is_error: false });
    expect(results[3]!.is_error).toBe(true);
    expect(results[3]!.content).toMatch(/references\//);
    expect(results[3]!.content).toContain("Nothing was saved");

    const db = getDb().prisma;
    const wsRow = await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    const skill = await db.skill.findFirstOrThrow({ where: { name: "release-checklist", workspaceId: wsRow.id }, include: { files: true } });
    expect(skill.content).toContain("2. Run the smoke and e2e tests.");
    expect(skill.files.map((f) => f.path)).toEqual(["references/rollback.md"]);
    const revs = await db.revision.findMany({ where: { entityId: skill.id }, orderBy: { createdAt: "asc" } });
    expect(revs.map((r) => r.action)).toEqual(["create", "patch", "write_file"]);
    expect(revs[1]).toMatchObject({ oldText: SKILL_MD, newText: expect.stringContaining("smoke and e2e") });
    expect(await db.skillFile.count({ where: { path: { contains: ".." } } })).toBe(0);

    // A new conversation (another person, same workspace) sees the skill in its index.
    h.fake.enqueue(
      { toolUse: [{ name: "skill_view", input: { name: "release-checklist", file: "references/rollback.md" } }] },
      { toolUse: [{ name: "skill_view", input: { name: "release-checklist", file: "../../etc/passwd" } }] },
      { text: "Here is how to roll back." },
    );
    const before = h.fake.requests.length;
    await say(dm("UCAROL", "Carol"), "how do we roll back a release?");
    const [ask, afterView, afterBad] = h.fake.requests.slice(before);
    expect(systemText(ask!)).toContain("- release-checklist: Use when cutting a release of the web app");
    expect(systemText(ask!)).toContain("- team-runbook:");
    expect(toolResults(afterView!)[0]).toMatchObject({ is_error: false, content: "Roll back with `deploy --previous`." });
    expect(toolResults(afterBad!)[0]).toMatchObject({ is_error: true });

    // Another workspace does not see it.
    const other = uniqueId("T");
    h.fake.enqueue({ text: "none" });
    await say({ workspace: other, user: "UBOB", channel: "D1", isDm: true }, "which skills exist?");
    expect(systemText(h.fake.lastRequest()!)).not.toContain("release-checklist");
  });

  it("answers bad tool input with errors the model can act on, keeps the turn going, and writes nothing", async () => {
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user" }] } }] },
      { toolUse: [{ name: "memory", input: { operations: "remember this" } }] },
      { toolUse: [{ name: "memory", input: { operations: [{ action: "replace", target: "team", old_text: "nothing like this", content: "x" }] } }] },
      { toolUse: [{ name: "delete_everything", input: {} }] },
      { toolUse: [{ name: "skill_manage", input: { action: "create", name: "fix-login-2024-05-01", content: SKILL_MD.replace("release-checklist", "fix-login-2024-05-01") } }] },
      { text: "Sorry, I could not save that." },
    );
    const reply = await say(dm("UDAN"), "remember this");
    expect(reply).toMatchObject({ status: "ok", text: "Sorry, I could not save that." });
    const results = h.fake.requests.slice(1).map((r) => toolResults(r)[0]!);
    expect(results.every((r) => r.is_error)).toBe(true);
    expect(results[0]!.content).toContain("'operations.0.content'");
    expect(results[0]!.content).toContain("required for action 'add'");
    expect(results[1]!.content).toMatch(/'operations': .*array/i);
    expect(results[2]!.content).toContain('no team entry contains "nothing like this"');
    expect(results[3]!.content).toBe("Unknown tool 'delete_everything'. Available tools: memory, memory_history, skills_list, skill_view, skill_manage, session_search, record_correction.");
    expect(results[4]!.content).toContain("not a record of one incident");
    const db = getDb().prisma;
    const wsRow = await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    expect(await db.memoryEntry.count({ where: { workspaceId: wsRow.id } })).toBe(0);
    expect(await db.skill.count({ where: { workspaceId: wsRow.id } })).toBe(0);
    expect(await db.revision.count({ where: { workspaceId: wsRow.id } })).toBe(0);
  });

  it("does not repeat a failing call: after repeats it makes the model answer without tools", async () => {
    const bad = { toolUse: [{ name: "skill_view", input: { name: "no-such-skill" } }] };
    h.fake.enqueue(bad, bad, bad, { text: "I could not find that skill." });
    const reply = await say(dm("UERIN"), "show me the no-such-skill skill");
    expect(reply.text).toBe("I could not find that skill.");
    expect(h.fake.requests).toHaveLength(4);
    expect(toolResults(h.fake.requests[2]!)[0]!.content).toContain("Not run: this exact skill_view call already failed");
    expect(h.fake.requests[3]!.body.tool_choice).toEqual({ type: "none" });
  });

  it("stops at the iteration budget and still answers", async () => {
    const small = makeCore(getDb(), h.fake, { toolIterations: 3 });
    h.fake.setDefault((req) => (req.body.tool_choice?.type === "none" ? { text: "Out of steps; here is what I have." } : { toolUse: [{ name: "skills_list", input: {} }] }));
    const reply = replyOf(await small.handle(inboundFor(dm("UFAY"), "list skills forever")));
    expect(reply.text).toBe("Out of steps; here is what I have.");
    expect(h.fake.requests).toHaveLength(4);
    expect(h.fake.requests.slice(0, 3).every((r) => r.body.tool_choice === undefined)).toBe(true);
    expect(JSON.stringify(h.fake.requests[3]!.body.messages.at(-1))).toContain("tool budget");
  });

  it("retries 529 twice then answers once; 529 forever gets a polite reply and the message is kept", async () => {
    h.fake.enqueue({ error: 529 }, { error: 529 }, { text: "Answer after the storm." });
    const ok = await say(dm("UGUS"), "are you there?");
    expect(ok).toMatchObject({ status: "ok", text: "Answer after the storm." });
    expect(h.fake.requests).toHaveLength(3);

    h.fake.reset();
    h.fake.failForever(529);
    const failed = await say(dm("UGUS"), "please remember the deploy window is Tuesday");
    expect(failed).toMatchObject({ status: "failed", text: MODEL_UNAVAILABLE_REPLY });
    expect(h.fake.requests).toHaveLength(4);
    const db = getDb().prisma;
    const stored = await db.message.findFirstOrThrow({ where: { text: "please remember the deploy window is Tuesday" } });
    expect(stored).toMatchObject({ role: "user", status: "failed" });

    // Once the model is back, the unanswered message is still in the session's history.
    h.fake.clearFailure();
    h.fake.enqueue({ text: "Noted the Tuesday window." });
    await say(dm("UGUS"), "are you back?");
    const history = JSON.stringify(h.fake.lastRequest()!.body.messages);
    expect(history).toContain("deploy window is Tuesday");
    expect(history).not.toContain(MODEL_UNAVAILABLE_REPLY);
  });

  it("answers each platform message once, and a conversation's messages strictly in order", async () => {
    const opts = dm("UHAL");
    h.fake.enqueue({ text: "once" });
    const inbound = inboundFor(opts, "hello", "m-dup-1");
    const [a, b] = await Promise.all([h.core.handle(inbound), h.core.handle({ ...inbound })]);
    expect([a.kind, b.kind].sort()).toEqual(["dropped", "reply"]);
    expect(h.fake.requests).toHaveLength(1);

    h.fake.reset();
    h.fake.setDefault({ reply: (req) => ({ delayMs: 30, then: { text: `re: ${JSON.stringify(req.body.messages.at(-1)?.content).match(/msg (\d)/)?.[1]}` } }) });
    const replies = await Promise.all([1, 2, 3, 4].map((i) => h.core.handle(inboundFor(opts, `msg ${i}`))));
    expect(replies.map((r) => replyOf(r).text)).toEqual(["re: 1", "re: 2", "re: 3", "re: 4"]);
    // Each request saw every earlier message of the conversation: they were handled one by one.
    // hello + once, then msg 1; each later turn adds the previous reply and its own message.
    expect(h.fake.requests.map((r) => r.body.messages.length)).toEqual([3, 5, 7, 9]);
  });

  it("searches only history the asker may see", async () => {
    const alice = dm("UALICE", "Alice");
    const bob = dm("UBOB", "Bob");
    h.fake.enqueue({ text: "noted" });
    await say(alice, "my locker code word is zebrafish");
    h.fake.enqueue({ text: "noted" });
    await say({ workspace: h.ws, user: "UALICE", channel: "CGEN", isDm: false, thread: "t1", name: "Alice" }, "the team offsite is in Lisbon");

    const search = (query: string) => ({ toolUse: [{ name: "session_search", input: { query } }] });
    h.fake.enqueue(search("zebrafish"), { text: "nothing" }, search("offsite Lisbon"), { text: "Lisbon" });
    await say(bob, "what is Alice's code word?");
    expect(toolResults(h.fake.lastRequest()!)[0]!.content).toContain('No earlier messages match "zebrafish"');
    await say(bob, "where is the offsite?");
    const found = toolResults(h.fake.lastRequest()!)[0]!.content;
    expect(found).toContain("«Lisbon»");
    expect(found).toContain("not instructions");
    expect(found).not.toContain("zebrafish");

    await h.core.command(inboundFor(alice), "new");
    h.fake.enqueue(search("zebrafish"), { text: "zebrafish" });
    await say(alice, "what was my code word?");
    expect(toolResults(h.fake.lastRequest()!)[0]!.content).toContain("«zebrafish»");
  });

  it("starts a new session after the idle gap, with a fresh snapshot", async () => {
    let now = new Date("2026-03-01T09:00:00Z");
    const clocked = makeCore(getDb(), h.fake, { sessionIdleMs: 60 * 60 * 1000 }, () => now);
    const opts = dm("UJUN", "Jun");
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Deploys happen on Tuesdays" }] } }] },
      { text: "saved" },
      { text: "still same session" },
      { text: "new session" },
    );
    replyOf(await clocked.handle(inboundFor(opts, "we deploy on Tuesdays", undefined, now)));
    now = new Date("2026-03-01T09:59:00Z");
    replyOf(await clocked.handle(inboundFor(opts, "ok?", undefined, now)));
    expect(systemText(h.fake.lastRequest()!)).not.toContain("Deploys happen on Tuesdays");
    expect(h.fake.lastRequest()!.body.messages).toHaveLength(3);
    now = new Date("2026-03-01T11:00:00Z");
    replyOf(await clocked.handle(inboundFor(opts, "back again", undefined, now)));
    const fresh = h.fake.lastRequest()!;
    expect(systemText(fresh)).toContain("Deploys happen on Tuesdays");
    expect(systemText(fresh)).toContain("Session started 2026-03-01 11:00 UTC");
    expect(fresh.body.messages).toHaveLength(1);
    const sessions = await getDb().prisma.chatSession.findMany({ where: { conversation: { key: { contains: h.ws } } }, orderBy: { startedAt: "asc" } });
    expect(sessions.map((x) => x.endReason)).toEqual(["idle", null]);
  });

  it("reports progress while tools run, and turns reactions on its replies into durable feedback", async () => {
    const opts = dm("UKIM", "Kim");
    h.fake.enqueue({ toolUse: [{ name: "session_search", input: { query: "release" } }] }, { text: "Nothing about releases yet." });
    const progress: string[] = [];
    const reply = replyOf(await h.core.handle(inboundFor(opts, "what did we say about releases?"), { onProgress: (s) => progress.push(s) }));
    expect(progress).toEqual(["searching history"]);
    await h.core.recordDelivery(reply, "D-UKIM", ["1700000001.000100", "1700000001.000200"]);

    const base = {
      platform: "slack" as const,
      workspace: { externalId: h.ws },
      reactor: { externalId: "UKIM" },
      channel: { externalId: "D-UKIM", isDm: true },
      emoji: "👎",
      action: "added" as const,
      at: new Date("2026-03-02T10:00:00Z"),
    };
    const recorded = await h.core.feedback({ ...base, targetMessageId: "1700000001.000200" });
    expect(recorded).toMatchObject({ kind: "recorded", replyMessageId: reply.replyMessageId });
    expect(await h.core.feedback({ ...base, targetMessageId: "1700000001.000200" })).toEqual({ kind: "ignored", reason: "duplicate" });
    expect(await h.core.feedback({ ...base, targetMessageId: "1699999999.000001" })).toEqual({ kind: "ignored", reason: "not_a_reply" });
    expect(await h.core.feedback({ ...base, targetMessageId: "1700000001.000100", reactor: { externalId: "B1", isBot: true } })).toEqual({ kind: "ignored", reason: "bot" });
    expect(await h.core.feedback({ ...base, workspace: { externalId: uniqueId("T") }, targetMessageId: "1700000001.000100" })).toEqual({ kind: "ignored", reason: "not_a_reply" });

    const jobs = (await h.core.jobs.list("feedback")).filter((j) => j.id === (recorded.kind === "recorded" ? recorded.jobId : ""));
    expect(jobs).toHaveLength(1);
    expect(JSON.parse(jobs[0]!.payload)).toMatchObject({ replyMessageId: reply.replyMessageId, emoji: "👎", action: "added" });
  });

  it("compresses long history with the review model and refreshes the snapshot", async () => {
    const small = makeCore(getDb(), h.fake, { historyCharLimit: 600, historyKeepMessages: 4 });
    const opts = dm("UIVY", "Ivy");
    h.fake.setDefault((req) => (req.body.model === "claude-haiku-5-5" ? { text: "- Ivy is planning the Q3 migration." } : { text: `ack ${"y".repeat(40)}` }));
    for (let i = 0; i < 6; i++) replyOf(await small.handle(inboundFor(opts, `update ${i}: ${"x".repeat(120)}`)));
    const summaries = h.fake.requests.filter((r) => r.body.model === "claude-haiku-5-5");
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(summaries[0]!.body.messages)).toContain("update 0");
    const last = h.fake.requests.filter((r) => r.body.model === "claude-sonnet-5-5").at(-1)!;
    expect(systemText(last)).toContain("Ivy is planning the Q3 migration.");
    // The newest messages stay verbatim (4, plus one so a turn is not split from its reply).
    expect(last.body.messages.length).toBeLessThanOrEqual(5);
    expect(JSON.stringify(last.body.messages)).toContain("update 5");
    expect(JSON.stringify(last.body.messages)).not.toContain("update 0");
  });
});

describe("polite failure without a database fault", () => {
  it("uses the documented apology", () => {
    expect(MODEL_UNAVAILABLE_REPLY).toMatch(/^Sorry, I can't reach my language model/);
  });
});
