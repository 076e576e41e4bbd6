/**
 * Memory that stays true (issue 27, items 1 and 2), end to end through the core, the fake Messages
 * API and an adapter, on both databases: a replaced team fact leaves the next session's prompt with
 * the new text only, the old one readable through `memory_history` with its dates and shown in
 * `/cairn team` as "since … (was: …)"; a contradiction by its own author supersedes at once; one
 * from another person in another channel marks both, asks there which is right, and Keep new
 * supersedes the old (a revision rollback undoes), nothing deleted; a nominator that answers
 * nonsense is "no conflict".
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { makeCore, toolResults } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { startFakeAnthropic, systemText, type FakeAnthropic } from "../fakes/anthropic.ts";
import { isCheck, weekdayNominator } from "../support/nominator.ts";
import { DISPUTED_MARK } from "../../src/memory/validity.ts";
import { DEFAULT_LEARNING } from "../../src/learning/settings.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { expandIds } from "../support/short-ids.ts";

const day = (d: Date) => d.toISOString().slice(0, 10);

forEachDatabase("memory that stays true", (getDb) => {
  let fake: FakeAnthropic;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.setDefault((r) => (isCheck(r) ? weekdayNominator(r) : { text: "ok" }));
  });
  const db = () => getDb().prisma;

  function setup() {
    const access = accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] });
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, access, teamWrites: { mode: "open", teachers: [] }, learning: { ...DEFAULT_LEARNING, reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0, contradictions: true } });
    const adapter = new FakeAdapter();
    core.attach(adapter);
    const ws = uniqueId("T");
    const at = (user: string, name: string, channel: string, thread = uniqueId("th")): PlaceOptions => ({ workspace: ws, user, name, channel, isDm: false, thread });
    const say = async (who: PlaceOptions, text: string, ...steps: Parameters<FakeAnthropic["enqueue"]>) => {
      fake.enqueue(...steps);
      const r = await core.receive(inboundFor(who, text), adapter.target(who.channel));
      if (r.kind !== "replied") throw new Error(`not answered: ${JSON.stringify(r)}`);
      await core.learning.drain();
    };
    const command = (who: PlaceOptions, name: "team" | "keep" | "rollback" | "me", args: string[] = []) => core.command(inboundFor(who, `/cairn ${name}`), name, args);
    const memoryOp = (op: Record<string, unknown>) => ({ toolUse: [{ name: "memory", input: { operations: [op] } }] });
    return { core, adapter, at, say, command, memoryOp };
  }

  it("a replaced team fact: the next session reads the new text only; memory_history gives the old one with its dates; /cairn team shows since … (was: …)", async () => {
    const t = setup();
    const ana = t.at("UANA", "Ana", "CDEV");
    await t.say(ana, "remember: the deploy freeze is on Thursdays", t.memoryOp({ action: "add", target: "team", content: "The deploy freeze is on Thursdays" }), { text: "saved" });
    const { scope } = await place(getDb(), ana);
    const first = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "The deploy freeze is on Thursdays" } });
    await t.say(t.at("UANA", "Ana", "CDEV"), "it moved: Fridays now", t.memoryOp({ action: "replace", target: "team", old_text: "Thursdays", content: "The deploy freeze is on Fridays" }), { text: "updated" });

    // The entry kept its id and its new interval; the old text is a superseded row naming it.
    const now = await db().memoryEntry.findUniqueOrThrow({ where: { id: first.id } });
    expect(now).toMatchObject({ text: "The deploy freeze is on Fridays", status: "active" });
    const old = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, status: "superseded" } });
    expect(old).toMatchObject({ text: "The deploy freeze is on Thursdays", supersededById: first.id, scope: "team" });
    expect(old.validUntil!.getTime()).toBe(now.validFrom!.getTime());

    // Bob's new session: the new text, never the old.
    const bob = t.at("UBOB", "Bob", "COPS");
    await t.say(bob, "when is the deploy freeze?", { text: "Fridays" });
    const system = systemText(fake.requests.filter((r) => !isCheck(r)).at(-1)!);
    expect(system).toContain("The deploy freeze is on Fridays");
    expect(system).not.toContain("Thursdays");

    // Asked what it was before: the tool answers from history, dated.
    await t.say(t.at("UBOB", "Bob", "COPS"), "what was the freeze day before?", { toolUse: [{ name: "memory_history", input: { topic: "deploy freeze" } }] }, { text: "Thursdays until today" });
    const result = toolResults(fake.requests.filter((r) => !isCheck(r)).at(-1)!)[0]!;
    expect(result.is_error).toBe(false);
    expect(result.content).toContain(`"The deploy freeze is on Thursdays" (team fact): held from ${day(first.createdAt)} until ${day(old.validUntil!)}; replaced by "The deploy freeze is on Fridays" (in force since ${day(now.validFrom!)})`);

    const team = await t.command(bob, "team");
    expect(team.text).toContain(`The deploy freeze is on Fridays`);
    expect(team.text).toContain(`since ${day(now.validFrom!)} (was: The deploy freeze is on Thursdays)`);
  });

  it("a person's own contradicting fact in the same place supersedes the old one at once", async () => {
    const t = setup();
    const ana = t.at("UANA", "Ana", "CDEV");
    await t.say(ana, "remember", t.memoryOp({ action: "add", target: "channel", content: "Standup is on Mondays" }), { text: "saved" });
    await t.say(t.at("UANA", "Ana", "CDEV"), "remember", t.memoryOp({ action: "add", target: "channel", content: "Standup moved to Tuesdays" }), { text: "saved" });
    const { scope } = await place(getDb(), ana);
    const rows = await db().memoryEntry.findMany({ where: { workspaceId: scope.workspaceId }, orderBy: { createdAt: "asc" } });
    expect(rows.map((r) => [r.text, r.status])).toEqual([
      ["Standup is on Mondays", "superseded"],
      ["Standup moved to Tuesdays", "active"],
    ]);
    expect(rows[0]!.supersededById).toBe(rows[1]!.id);
    expect(await db().revision.findFirst({ where: { entityId: rows[0]!.id, action: "supersede" } })).not.toBeNull();
    // No question: the author changed their own entry.
    expect(t.adapter.sent.some((s) => s.text.includes("Which is right?"))).toBe(false);
  });

  it("another person's contradiction in another channel: both marked, the question asked there, Keep new supersedes, rollback restores, nothing deleted", async () => {
    const t = setup();
    const ana = t.at("UANA", "Ana", "CDEV");
    await t.say(ana, "remember for the team", t.memoryOp({ action: "add", target: "team", content: "The deploy freeze is on Thursdays" }), { text: "saved" });
    const bob = t.at("UBOB", "Bob", "COPS");
    await t.say(bob, "in this channel the freeze is Fridays", t.memoryOp({ action: "add", target: "channel", content: "Our deploy freeze is on Fridays" }), { text: "saved" });
    const { scope } = await place(getDb(), bob);
    const team = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, scope: "team" } });
    const chan = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, scope: "channel" } });
    expect(team).toMatchObject({ status: "active", conflictWithId: chan.id });
    expect(chan).toMatchObject({ status: "active", conflictWithId: team.id });
    // Asked in Bob's channel, naming both people and both texts, with the commands.
    const asked = t.adapter.sent.find((s) => s.text.includes("Which is right?"))!;
    expect(asked.channel).toBe("COPS");
    expect(asked.text).toContain('Bob said: "Our deploy freeze is on Fridays"');
    expect(asked.text).toContain('The team fact from Ana says: "The deploy freeze is on Thursdays"');
    expect(asked.text).toContain(`/cairn keep new ${chan.id}`);
    expect(chan.conflictPostId).not.toBeNull();

    // The next prompt in COPS shows the older as disputed, the newer plain.
    const cara = t.at("UCARA", "Cara", "COPS");
    await t.say(cara, "when is the freeze?", { text: "it is being settled" });
    const system = systemText(fake.requests.filter((r) => !isCheck(r)).at(-1)!);
    expect(system).toMatch(new RegExp(`The deploy freeze is on Thursdays[^\\n]*${DISPUTED_MARK.replace(/[[\]().;]/g, "\\$&")}`));
    expect(system).toMatch(/§ Our deploy freeze is on Fridays(?! \[DISPUTED)/);
    // Listed in the team view with the three answers.
    expect((await t.command(cara, "team")).text).toContain("Disagreements: which is right?");

    // Someone who cannot read COPS cannot settle it (the channel entry is not theirs to see).
    expect((await t.command(t.at("UDAN", "Dan", "CELSE"), "keep", ["new", chan.id])).outcome).toBe("not_found");
    // Cara (in COPS) keeps the new one: the team fact is superseded, with a revision naming her.
    const kept = await t.command(cara, "keep", ["new", chan.id]);
    expect(kept).toMatchObject({ outcome: "done", ephemeral: false });
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: team.id } })).toMatchObject({ status: "superseded", supersededById: chan.id, conflictWithId: null });
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: chan.id } })).toMatchObject({ status: "active", conflictWithId: null });
    const caraId = (await place(getDb(), cara)).scope.personId;
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: team.id, action: "supersede" } });
    expect(rev.actorId).toBe(caraId);
    expect(await db().revision.findFirst({ where: { entityId: chan.id, action: "keep_new", actorId: caraId } })).not.toBeNull();
    // Settled once.
    expect((await t.command(cara, "keep", ["old", chan.id])).outcome).toBe("not_found");
    // Nothing deleted; an admin's rollback of the supersession brings the team fact back in force.
    expect(await db().memoryEntry.count({ where: { workspaceId: scope.workspaceId } })).toBe(2);
    const rolled = await t.command(t.at("UADMIN", "Ada", "COPS"), "rollback", [rev.id]);
    expect(expandIds(rolled.text, [rev.id])).toContain(`Rolled back revision ${rev.id}`);
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: team.id } })).toMatchObject({ status: "active", supersededById: null, validUntil: null });
  });

  it("keep old closes the newer claim, keep both clears the marks; a nominator answering nonsense is no conflict", async () => {
    const t = setup();
    await t.say(t.at("UANA", "Ana", "CDEV"), "remember", t.memoryOp({ action: "add", target: "team", content: "Releases go out on Wednesdays" }), { text: "saved" });
    const bob = t.at("UBOB", "Bob", "COPS");
    await t.say(bob, "remember", t.memoryOp({ action: "add", target: "channel", content: "Releases here go out on Mondays" }), { text: "saved" });
    const { scope } = await place(getDb(), bob);
    const chan = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, scope: "channel" } });
    expect((await t.command(bob, "keep", ["old", chan.id])).outcome).toBe("done");
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: chan.id } })).toMatchObject({ status: "superseded", conflictWithId: null });

    await t.say(t.at("UCARA", "Cara", "COPS"), "remember", t.memoryOp({ action: "add", target: "channel", content: "Hotfixes here go out on Fridays" }), { text: "saved" });
    const hot = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: { contains: "Hotfixes" } } });
    expect(hot.conflictWithId).not.toBeNull();
    expect((await t.command(bob, "keep", ["both", hot.id])).outcome).toBe("done");
    expect(await db().memoryEntry.count({ where: { workspaceId: scope.workspaceId, conflictWithId: { not: null } } })).toBe(0);
    expect(await db().memoryEntry.count({ where: { workspaceId: scope.workspaceId, status: "active" } })).toBe(2);

    // The checker answers with prose, then with numbers outside the list: neither names anything.
    fake.setDefault((r) => (isCheck(r) ? { text: "Yes, these clearly contradict." } : { text: "ok" }));
    await t.say(t.at("UDAN", "Dan", "COPS"), "remember", t.memoryOp({ action: "add", target: "channel", content: "Releases here go out on Tuesdays" }), { text: "saved" });
    fake.setDefault((r) => (isCheck(r) ? { text: '{"contradicts": [7, 9]}' } : { text: "ok" }));
    await t.say(t.at("UDAN", "Dan", "COPS"), "remember", t.memoryOp({ action: "add", target: "channel", content: "Hotfixes here go out on Thursdays" }), { text: "saved" });
    expect(fake.requests.filter(isCheck).length).toBeGreaterThanOrEqual(2);
    expect(await db().memoryEntry.count({ where: { workspaceId: scope.workspaceId, conflictWithId: { not: null } } })).toBe(0);
    expect(await db().memoryEntry.count({ where: { workspaceId: scope.workspaceId, status: "superseded" } })).toBe(1);
  });
});
