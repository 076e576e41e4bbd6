/**
 * Forgetting sticks (src/erasure/tombstone-store.ts, src/db/tombstones.ts): what `forget <id>` and
 * `forget me` erased leaves a tombstone (never the text), and no later write of the model, rollback
 * or review brings it back; `forget me` shows what it would erase, and erases exactly that. A real
 * core on SQLite and PostgreSQL, the fake Anthropic server scripting the model's tool calls.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore, toolResults } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import type { Core } from "../../src/app/core.ts";
import type { HandleResult } from "../../src/ground/types.ts";
import { expandIds } from "../support/short-ids.ts";

const ADMIN = "UADMIN";
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] });
const add = (target: string, content: string, kind?: string) => ({ name: "memory", input: { operations: [{ action: "add", target, content, ...(kind ? { kind } : {}) }] } });
const replace = (target: string, oldText: string, content: string) => ({ name: "memory", input: { operations: [{ action: "replace", target, old_text: oldText, content }] } });
const FORGOTTEN = /forgotten on \d{4}-\d{2}-\d{2}.*not (saved|restored)/;

forEachDatabase("forgetting sticks", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, access: ACCESS } });
  const dm = (user: string, name = user): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name });
  const thread = (user: string, t = "t1"): PlaceOptions => ({ workspace: h.ws, user, channel: "CGEN", isDm: false, thread: t, name: user });
  const say = async (opts: PlaceOptions, text: string, c: Core = h.core): Promise<HandleResult> => c.handle(inboundFor(opts, text));
  const db = () => getDb().prisma;
  const wsId = async () => (await db().workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id;
  const personOf = async (user: string) => db().person.findFirstOrThrow({ where: { externalId: user, workspaceId: await wsId() } });

  it("refuses the model's re-adding of an entry the person forgot, whatever its case and full stop, and stores nothing; the tombstone holds no text", async () => {
    const carol = dm("UCAROL", "Carol");
    h.fake.enqueue({ toolUse: [add("user", "Carol's cat is called Miso")] }, { text: "noted" });
    await say(carol, "my cat is Miso");
    const miso = await db().memoryEntry.findFirstOrThrow({ where: { text: "Carol's cat is called Miso", workspaceId: await wsId() } });
    expect((await h.core.command(inboundFor(carol), "forget", [miso.id])).text).toBe("Deleted. It is gone from cairn's memory and history of changes.");

    // The next turn's model tries again, in a batch with something new: the whole batch is refused.
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "carol's cat is  called MISO." }, { action: "add", target: "user", content: "Carol likes tea" }] } }] }, { text: "ok" });
    await say(carol, "remember my cat's name");
    const [result] = toolResults(h.fake.lastRequest()!);
    expect(result).toMatchObject({ is_error: true, content: expect.stringMatching(FORGOTTEN) });
    expect(result!.content).toContain("Nothing in this batch was saved");
    const carolsEntries = await db().memoryEntry.findMany({ where: { workspaceId: await wsId(), ownerId: (await personOf("UCAROL")).id } });
    expect(carolsEntries).toEqual([]);

    // A merged sentence that says it again is refused too; other words are not.
    h.fake.enqueue({ toolUse: [add("team", "Office pets: Carol's cat is called Miso. Dogs need a badge.")] }, { text: "ok" }, { toolUse: [add("user", "Carol has a cat")] }, { text: "ok" });
    await say(thread("UCAROL"), "office pets?");
    expect(toolResults(h.fake.lastRequest()!)[0]).toMatchObject({ is_error: true, content: expect.stringMatching(FORGOTTEN) });
    await say(carol, "I have a cat");
    expect(toolResults(h.fake.lastRequest()!)[0]!.is_error).toBe(false);

    const stones = await db().tombstone.findMany({ where: { workspaceId: miso.workspaceId } });
    expect(stones).toEqual([expect.objectContaining({ kind: "entry", personId: miso.ownerId, forgottenById: miso.ownerId, contentHash: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    expect(JSON.stringify(stones).toLowerCase()).not.toContain("miso");
  });

  it("refuses a rollback that would bring a forgotten text back, to a person's entry or to a channel lesson an admin would restore", async () => {
    const carol = dm("UCAROL", "Carol");
    h.fake.enqueue({ toolUse: [add("user", "Carol drinks tea at 4pm")] }, { text: "ok" }, { toolUse: [replace("user", "tea at 4pm", "Carol drinks coffee at 4pm")] }, { text: "ok" });
    await say(carol, "I drink tea at 4");
    await say(carol, "actually coffee");
    const entry = await db().memoryEntry.findFirstOrThrow({ where: { text: "Carol drinks coffee at 4pm", workspaceId: await wsId() } });
    const replaced = await db().revision.findFirstOrThrow({ where: { entityId: entry.id, action: "replace" } });
    // The tea entry said again, then forgotten: the replace's old text is now a forgotten one.
    h.fake.enqueue({ toolUse: [add("user", "Carol drinks tea at 4pm")] }, { text: "ok" });
    await say(carol, "no, tea after all");
    const tea = await db().memoryEntry.findFirstOrThrow({ where: { text: "Carol drinks tea at 4pm", status: "active", workspaceId: await wsId() } });
    await h.core.command(inboundFor(carol), "forget", [tea.id]);
    const refused = await h.core.command(inboundFor(carol), "rollback", [replaced.id]);
    expect(expandIds(refused.text, [replaced.id])).toMatch(new RegExp(`Revision ${replaced.id} cannot be rolled back: this was ${FORGOTTEN.source}`));
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).text).toBe("Carol drinks coffee at 4pm");
    expect(await db().revision.count({ where: { entityId: entry.id } })).toBe(2);

    // A channel lesson its author forgot is archived (it is the channel's): an admin's rollback does not restore it.
    h.fake.enqueue({ toolUse: [add("channel", "In #gen, deploy notes go in the thread", "lesson")] }, { text: "ok" });
    await say(thread("UCAROL"), "please keep deploy notes in the thread");
    const lesson = await db().memoryEntry.findFirstOrThrow({ where: { kind: "lesson", workspaceId: await wsId() } });
    expect((await h.core.command(inboundFor(thread("UCAROL")), "forget", [lesson.id])).text).toMatch(/^Archived the channel lesson/);
    const archive = await db().revision.findFirstOrThrow({ where: { entityId: lesson.id, action: "archive" } });
    expect((await h.core.command(inboundFor(thread(ADMIN)), "rollback", [archive.id])).text).toMatch(FORGOTTEN);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: lesson.id } })).status).toBe("archived");
  });

  it("forget me: the request shows the counts of the erasure, changing nothing, and the confirmation applies exactly those", async () => {
    const carol = dm("UCAROL", "Carol");
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Carol's dog is called Rex" }, { action: "add", target: "user", content: "Carol prefers short answers" }, { action: "add", target: "team", content: "The billing freeze starts Monday" }] } }] },
      { text: "noted; the team part waits for your ✅" },
      { toolUse: [add("team", "Carol owns the billing service")] },
      { text: "noted for the team" },
      { toolUse: [{ name: "skill_manage", input: { action: "create", name: "carols-shortcuts", scope: "user", content: "---\nname: carols-shortcuts\ndescription: Use when Carol asks for her shortcuts\n---\n\n1. Do it.\n" } }] },
      { text: "saved" },
    );
    await say(carol, "my dog is Rex, short answers please, and the team should know the freeze starts Monday");
    await say(thread("UCAROL"), "FYI I own the billing service");
    await say(carol, "keep my shortcuts");
    const snapshot = async () => ({ entries: await db().memoryEntry.count({ where: { workspaceId: await wsId() } }), tombstones: await db().tombstone.count({ where: { personId: (await personOf("UCAROL")).id } }) });
    const before = await snapshot();

    const ask = await h.core.command(inboundFor(carol), "forget", ["me"]);
    const would = /^This erases your profile, your private skills and entries you proposed, as of now (.*?)\. Every/.exec(ask.text)?.[1];
    // Her three entries (the team one waits for approval, held where it was said), her skill, her messages.
    const [profile, pending] = (/^(\d+) profile entries, (\d+) pending entries, 1 private skills, 0 messages kept from channels, and the text of [1-9]\d* messages$/.exec(would ?? "") ?? []).slice(1).map(Number);
    expect(profile! + pending!).toBe(3);
    expect(ask.text).toMatch(/removes your name from the 1 team contributions/);
    expect(await snapshot()).toEqual(before);

    const done = await h.core.command(inboundFor(carol), "forget", ["me", "confirm", "anonymous"]);
    expect(/Done\. Erased (.*?);/.exec(done.text)?.[1]).toBe(would);
    expect(done.text).toMatch(/removed your name from 1 team contributions/);
    const carolId = (await personOf("UCAROL")).id;
    expect((await db().tombstone.findMany({ where: { personId: carolId } })).map((t) => t.kind).sort()).toEqual(["entry", "entry", "entry", "person"]);
  });

  it("forget me: a review of an old conversation of theirs brings nothing of them back, nor does any write from their earlier messages", async () => {
    const core = makeCore(getDb(), h.fake, { bundledSkillsDir: null, learning: { reviewEveryTurns: 1, skillReviewToolCalls: 0 } });
    const adapter = new FakeAdapter();
    core.attach(adapter);
    const dana = { ...thread("UDANA", "t-review"), name: "Dana" };
    const inbound = inboundFor(dana, "I'm Dana; I run the payments on-call and prefer Go examples");
    h.fake.enqueue({ toolUse: [add("user", "Dana prefers Go examples")] }, { text: "noted" });
    const r = await core.receive(inbound, adapter.target(dana.channel));
    expect(r).toMatchObject({ kind: "replied", status: "ok" });
    const question = await db().message.findFirstOrThrow({ where: { platformId: inbound.messageId, role: "user" } });
    expect((await core.jobs.list("review")).filter((j) => j.payload.includes(question.conversationId))).toHaveLength(1);

    await core.command(inboundFor(dana), "forget", ["me"]);
    expect((await core.command(inboundFor(dana), "forget", ["me", "confirm"])).outcome).toBe("done");

    // The review, queued before the erasure, runs after it; its model would save Dana's words again.
    const requests = h.fake.requests.length;
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Dana prefers Go examples" }, { action: "add", target: "team", content: "Dana runs the payments on-call" }] } }] }, { text: "Done." });
    await core.learning.drain();
    const danaId = (await personOf("UDANA")).id;
    const ws = question.workspaceId;
    expect(await db().memoryEntry.count({ where: { workspaceId: ws, OR: [{ ownerId: danaId }, { createdById: danaId }, { text: { contains: "Dana" } }] } })).toBe(0);
    expect(await db().revision.count({ where: { workspaceId: ws, source: "review" } })).toBe(0);
    // Its session's prompt was cleared with the erasure: the review had nothing to read, and asked no model.
    expect(h.fake.requests.length).toBe(requests);

    // Any write whose source is a message from before the erasure is refused, in other words too.
    const place = await core.history.resolve(inboundFor(thread("UERIN", "t-review")));
    const write = core.memory.apply(scopeOf(place), [{ action: "add", target: "team", content: "Someone runs the payments on-call" }], { source: "review", actorId: null, sourceMessageId: question.id });
    await expect(write).rejects.toThrow(/author asked cairn to forget them on \d{4}-\d{2}-\d{2}; not saved/);
    // What they say after it is theirs to have kept. (The review's script was never asked for.)
    h.fake.reset();
    h.fake.setDefault({ text: "ok" });
    h.fake.enqueue({ toolUse: [add("user", "Dana likes Rust now")] }, { text: "ok" });
    await core.receive(inboundFor(dana, `I like Rust now (${uniqueId("m")})`), adapter.target(dana.channel));
    expect(await db().memoryEntry.count({ where: { workspaceId: ws, ownerId: danaId, text: "Dana likes Rust now" } })).toBe(1);
  });
});
