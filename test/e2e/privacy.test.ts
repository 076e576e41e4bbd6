/**
 * Access, rate limits, a teammate's approval before DM facts reach the team (the person's own
 * confirmation with CAIRN_TEAM_WRITES=open), and people's control of their
 * data, through the real core on both databases.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore, toolResults } from "../support/agent.ts";
import { systemText } from "../fakes/anthropic.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { TOMBSTONE } from "../../src/erasure/erasure-store.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import type { Core } from "../../src/app/core.ts";
import type { HandleResult, Outbound } from "../../src/ground/types.ts";

function replyOf(result: HandleResult): Outbound {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply;
}

forEachDatabase("privacy, access and data control", (getDb) => {
  const h = coreHarness(getDb, { defaultReply: null });
  const dm = (user: string, name = user): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name });
  const say = async (opts: PlaceOptions, text: string, c: Core = h.core) => replyOf(await c.handle(inboundFor(opts, text)));

  it("refuses people and channels outside the allow-lists with a short explanation, storing nothing", async () => {
    const strict = makeCore(getDb(), h.fake, { access: accessPolicy({ admins: ["slack:UADMIN"], users: ["slack:UOK"], channels: ["slack:CALLOWED"], roles: [] }) });
    h.fake.setDefault({ text: "hi" });
    const refused = await say(dm("UNO"), "hello", strict);
    expect(refused).toMatchObject({ status: "refused", replyMessageId: null });
    expect(refused.text).toMatch(/isn't enabled for you/);
    const wrongChannel = await say({ workspace: h.ws, user: "UOK", channel: "COTHER", isDm: false }, "hello", strict);
    expect(wrongChannel.status).toBe("refused");
    expect(wrongChannel.text).toMatch(/isn't enabled in this channel/);
    expect(h.fake.requests).toHaveLength(0);
    expect(await getDb().prisma.workspace.count({ where: { externalId: h.ws } })).toBe(0);
    expect((await say(dm("UOK"), "hello", strict)).status).toBe("ok");
    expect((await say({ workspace: h.ws, user: "UADMIN", channel: "COTHER", isDm: false }, "hello", strict)).status).toBe("ok");
    expect((await strict.command(inboundFor(dm("UNO")), "me")).text).toMatch(/isn't enabled for you/);
  });

  it("rate-limits one person without touching others, keeping the message", async () => {
    const limited = makeCore(getDb(), h.fake, { rateLimitPerHour: 2 });
    h.fake.setDefault({ text: "answer" });
    expect((await say(dm("UA"), "one", limited)).status).toBe("ok");
    expect((await say(dm("UA"), "two", limited)).status).toBe("ok");
    const third = await say(dm("UA"), "three", limited);
    expect(third.status).toBe("limited");
    expect(third.text).toMatch(/limit of 2 messages per hour/);
    expect(h.fake.requests).toHaveLength(2);
    expect((await say(dm("UB"), "one", limited)).status).toBe("ok");
    expect(await getDb().prisma.message.count({ where: { text: "three", role: "user" } })).toBeGreaterThan(0);
  });

  it("keeps a team fact said in a DM as the person's own until a teammate approves it; their own approval does not count", async () => {
    const alice = dm("UALICE", "Alice");
    const channel = { workspace: h.ws, user: "UBOB", channel: "CGEN", isDm: false, thread: "t1", name: "Bob" };
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "The Q3 offsite is in Porto" }] } }] },
      { text: "Saved for you; a teammate's approval shares it." },
    );
    await say(alice, "tell the team the offsite is in Porto");
    expect(toolResults(h.fake.requests[1]!)[0]!.content).toMatch(/SAVED FOR THE PERSON ONLY, NOT THE WHOLE TEAM.*id \w+.*A teammate's approval \(\/cairn approve \w+/);
    const db = getDb().prisma;
    const entry = await db.memoryEntry.findFirstOrThrow({ where: { text: "The Q3 offsite is in Porto" } });
    expect(entry).toMatchObject({ status: "active", scope: "user", proposedScope: "team" });

    h.fake.setDefault({ text: "ok" });
    await say(channel, "anything new?");
    expect(systemText(h.fake.lastRequest()!)).not.toContain("Porto");
    await h.core.command(inboundFor(alice), "new");
    await say(alice, "anything new for me?");
    expect(systemText(h.fake.lastRequest()!)).toContain("The Q3 offsite is in Porto");

    // Alice's own approval does not count; `confirm` is not a way around it.
    expect((await h.core.command(inboundFor(alice), "approve", [entry.id])).text).toMatch(/does not count/);
    expect((await h.core.command(inboundFor(alice), "confirm", [entry.id])).text).toMatch(/No pending entry/);
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).toMatchObject({ scope: "user", proposedScope: "team" });
    // The team view lists it to Bob, with Approve; Bob's approval shares it.
    const view = await h.core.view(inboundFor(channel), { pane: "team" });
    const waiting = view.sections[0]!.groups.find((g) => g.id === "proposals")!;
    expect(waiting.items.find((i) => i.id === entry.id)?.buttons.map((b) => b.command)).toEqual(["approve", "reject"]);
    expect((await h.core.command(inboundFor(channel), "approve", [entry.id])).text).toContain("Shared with the whole workspace");
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).toMatchObject({ scope: "team", ownerId: null, proposedScope: null, status: "active" });
    const revs = await db.revision.findMany({ where: { entityId: entry.id }, orderBy: { createdAt: "asc" } });
    expect(revs.map((r) => r.action)).toEqual(["add", "share"]);

    await h.core.command(inboundFor(channel), "new");
    await say(channel, "anything new now?");
    expect(systemText(h.fake.lastRequest()!)).toContain("The Q3 offsite is in Porto");
  });

  it("with CAIRN_TEAM_WRITES=open, holds a team fact said in a DM as pending until the person confirms with ✅ or a command (the behaviour before approvals)", async () => {
    const open = makeCore(getDb(), h.fake, { teamWrites: { mode: "open" } });
    const alice = dm("UALICE2", "Alice");
    const channel = { workspace: h.ws, user: "UBOB2", channel: "CGEN2", isDm: false, thread: "t1", name: "Bob" };
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "The Q4 offsite is in Lyon" }] } }] },
      { text: "I'll share that with the team once you confirm with ✅." },
    );
    const before = h.fake.requests.length;
    const reply = await say(alice, "tell the team the offsite is in Lyon", open);
    expect(toolResults(h.fake.requests[before + 1]!)[0]!.content).toMatch(/PENDING \(id \w+\).*only after the person confirms/);
    const db = getDb().prisma;
    const entry = await db.memoryEntry.findFirstOrThrow({ where: { text: "The Q4 offsite is in Lyon" } });
    expect(entry.status).toBe("pending");

    h.fake.setDefault({ text: "ok" });
    await say(channel, "anything new?", open);
    expect(systemText(h.fake.lastRequest()!)).not.toContain("Lyon");

    // Someone else's ✅ does not confirm Alice's entry; Alice's does.
    await open.recordDelivery(reply, "D-UALICE2", ["1700000002.000200"]);
    const reaction = { platform: "slack" as const, workspace: { externalId: h.ws }, channel: { externalId: "D-UALICE2", isDm: true }, targetMessageId: "1700000002.000200", emoji: "✅", action: "added" as const, at: new Date() };
    await open.feedback({ ...reaction, reactor: { externalId: "UBOB2" } });
    expect((await db.memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).status).toBe("pending");
    await open.feedback({ ...reaction, reactor: { externalId: "UALICE2" } });
    expect((await db.memoryEntry.findUniqueOrThrow({ where: { id: entry.id } })).status).toBe("active");
    const revs = await db.revision.findMany({ where: { entityId: entry.id }, orderBy: { createdAt: "asc" } });
    expect(revs.map((r) => r.action)).toEqual(["add", "confirm"]);

    await open.command(inboundFor(channel), "new");
    await say(channel, "anything new now?", open);
    expect(systemText(h.fake.lastRequest()!)).toContain("The Q4 offsite is in Lyon");

    // The command path: /cairn confirm <id>.
    h.fake.enqueue({ toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "Standup moves to 10:00" }] } }] }, { text: "pending" });
    await say(alice, "share: standup moves to 10", open);
    const second = await db.memoryEntry.findFirstOrThrow({ where: { text: "Standup moves to 10:00" } });
    expect((await open.command(inboundFor(dm("UBOB2")), "confirm", [second.id])).text).toMatch(/nothing waiting|No pending entry/);
    expect((await open.command(inboundFor(alice), "confirm", [second.id])).text).toContain("(shared with the team)");
    expect((await db.memoryEntry.findUniqueOrThrow({ where: { id: second.id } })).status).toBe("active");
  });

  it("forgets one entry, and erases a person after confirmation, keeping team entries", async () => {
    const carol = dm("UCAROL", "Carol");
    const thread = { workspace: h.ws, user: "UCAROL", channel: "CGEN", isDm: false, thread: "t9", name: "Carol" };
    h.fake.enqueue(
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "user", content: "Carol's cat is called Miso" }, { action: "add", target: "user", content: "Carol prefers short answers" }] } }] },
      { text: "noted" },
      { toolUse: [{ name: "memory", input: { operations: [{ action: "add", target: "team", content: "Carol owns the billing service" }] } }] },
      { text: "noted for the team" },
    );
    await say(carol, "my cat is Miso and I like short answers; secretword kumquat");
    await say(thread, "FYI I own the billing service");
    const db = getDb().prisma;
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UCAROL", workspace: { externalId: h.ws } } });
    const miso = await db.memoryEntry.findFirstOrThrow({ where: { ownerId: person.id, text: { contains: "Miso" } } });

    const me = await h.core.command(inboundFor(carol), "me");
    expect(me.ephemeral).toBe(true);
    // Shown short (ground/short-id.ts): the id on Miso's line is a prefix of its id.
    const shown = /\(id ([a-z0-9]{8,}),/.exec(me.text.split("\n").find((l) => l.includes("Miso")) ?? "");
    expect(shown && miso.id.startsWith(shown[1]!)).toBe(true);
    expect(me.text).toMatch(/Stored messages from you: 2/);

    expect((await h.core.command(inboundFor(dm("UDAVE")), "forget", [miso.id])).text).toMatch(/None of your entries/);
    expect((await h.core.command(inboundFor(carol), "forget", [miso.id])).text).toMatch(/^Deleted/);
    expect(await db.memoryEntry.count({ where: { id: miso.id } })).toBe(0);
    expect(await db.revision.count({ where: { entityId: miso.id } })).toBe(0);

    const ask = await h.core.command(inboundFor(carol), "forget", ["me"]);
    expect(ask.text).toContain("forget me confirm");
    expect(await db.memoryEntry.count({ where: { ownerId: person.id } })).toBe(1);
    const done = await h.core.command(inboundFor(carol), "forget", ["me", "confirm", "anonymous"]);
    expect(done.text).toMatch(/Erased 1 profile entries/);

    expect(await db.memoryEntry.count({ where: { ownerId: person.id } })).toBe(0);
    const carolMessages = await db.message.findMany({ where: { authorId: person.id } });
    expect(carolMessages.length).toBe(2);
    expect(carolMessages.every((m) => m.text === TOMBSTONE)).toBe(true);
    const dmConv = await db.conversation.findFirstOrThrow({ where: { isDm: true, ownerId: person.id } });
    const dmReplies = await db.message.findMany({ where: { conversationId: dmConv.id, role: "assistant" } });
    expect(dmReplies.every((m) => m.text === TOMBSTONE)).toBe(true);
    const team = await db.memoryEntry.findFirstOrThrow({ where: { text: "Carol owns the billing service" } });
    expect(team).toMatchObject({ status: "active", createdById: null });
    const sessions = await db.chatSession.findMany({ where: { conversationId: dmConv.id } });
    expect(sessions.every((s) => s.snapshot === null && s.summary === null)).toBe(true);

    // The full-text index follows the erasure: the secret word is no longer findable, even by Carol.
    const place = await h.core.history.resolve(inboundFor(carol));
    expect(await searchMessages(getDb(), scopeOf(place), "kumquat", { limit: 5 })).toEqual([]);
  });

  it("lists a person's private skills in their own prompt only, even in a channel session others speak in", async () => {
    const skill = (name: string, scope: string) => ({
      name: "skill_manage",
      input: { action: "create", name, scope, content: `---\nname: ${name}\ndescription: Use when doing ${name}\n---\n\n1. Do it.\n` },
    });
    h.fake.enqueue({ toolUse: [skill("carols-shortcuts", "user")] }, { text: "saved for you" });
    await say(dm("UCAROL", "Carol"), "keep my shortcuts as a skill");
    h.fake.enqueue({ toolUse: [skill("deploy-checklist", "team")] }, { text: "saved for the team" });
    await say(dm("UCAROL", "Carol"), "and a team checklist");
    h.fake.setDefault({ text: "ok" });
    const room = (user: string, name: string): PlaceOptions => ({ workspace: h.ws, user, channel: "CROOM", isDm: false, thread: "t-skills", name });
    // Asked for the team from a DM, it is Carol's own until a teammate approves it (skill-reach.test.ts): Erin does.
    const proposal = await getDb().prisma.skillProposal.findFirstOrThrow({ where: { name: "deploy-checklist", status: "pending" } });
    expect((await h.core.command(inboundFor(room("UERIN", "Erin"), "/cairn approve"), "approve", [proposal.id])).outcome).toBe("done");
    const before = h.fake.requests.length;
    await say(room("UCAROL", "Carol"), "hi all");
    await say(room("UDAVE", "Dave"), "hello");
    const [carols, daves] = h.fake.requests.slice(before).map((r) => systemText(r));
    expect(carols).toContain("carols-shortcuts");
    expect(carols).toContain("deploy-checklist");
    // Dave speaks in the same session, whose shared part Carol's first turn froze.
    expect(daves).toContain("deploy-checklist");
    expect(daves).not.toContain("carols-shortcuts");
  });

  it("lets only admins pin skills", async () => {
    const admin = makeCore(getDb(), h.fake, { access: accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] }) });
    h.fake.enqueue(
      { toolUse: [{ name: "skill_manage", input: { action: "create", name: "oncall-handover", content: "---\nname: oncall-handover\ndescription: Use when handing over on-call\n---\n# Steps\n1. Write the summary.\n" } }] },
      { text: "created" },
    );
    await say(dm("UADMIN"), "save our on-call handover", admin);
    expect((await admin.command(inboundFor(dm("UJOE")), "pin", ["oncall-handover"])).text).toBe("Only cairn admins can pin skills.");
    expect((await admin.command(inboundFor(dm("UADMIN")), "pin", ["oncall-handover"])).text).toBe("Pinned `oncall-handover`.");
    const db = getDb().prisma;
    const skill = await db.skill.findFirstOrThrow({ where: { name: "oncall-handover", pinned: true, workspaceId: { not: null } } });
    expect(await db.revision.count({ where: { entityId: skill.id, action: "pin" } })).toBe(1);
    h.fake.enqueue({ toolUse: [{ name: "skill_manage", input: { action: "archive", name: "oncall-handover" } }] }, { text: "could not" });
    await say(dm("UADMIN"), "archive the handover skill", admin);
    expect(toolResults(h.fake.lastRequest()!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining("pinned") });
  });
});
