/**
 * Team rules judged by their results (issue 25, item 4): every reply's trace records the team rules
 * in its prompt; a rule in front of two corrected answers within 30 days is shown to the model as
 * doubtful in the next sessions, and the weekly report's "repeated problems by rule" counts it from
 * those real traces. Corrections here are typed (record_correction), through the real Core.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";
import { loadMemoryHistory } from "../../src/report/memory-history.ts";
import { repeatedProblems } from "../../src/report/topics.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { expandIds } from "../support/short-ids.ts";

const RULE = "ALWAYS tag releases with the date";

forEachDatabase("team rules judged by their results", (getDb) => {
  const access = accessPolicy({ admins: ["slack:UALICE"], users: [], channels: [], roles: [] });
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, access, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0 } } });
  const typed = (req: RecordedRequest) => JSON.stringify(req.body.messages.at(-1)?.content ?? "").includes("That's wrong");
  const afterTool = (req: RecordedRequest) => JSON.stringify(req.body.messages.at(-1)?.content ?? "").includes("tool_result");

  it("records the rules of each reply's prompt, marks a rule doubtful after two corrected answers, and the report counts it by rule", async () => {
    const db = getDb().prisma;
    const at = (channel: string): PlaceOptions => ({ workspace: h.ws, user: "UALICE", name: "Alice", channel, isDm: false, thread: uniqueId("th") });
    const first = at("C-rel");
    const { scope } = await place(getDb(), first);
    const rule = await db.memoryEntry.create({ data: { workspaceId: scope.workspaceId, scope: "team", kind: "rule", status: "active", source: "reaction", text: RULE, createdById: scope.personId } });
    h.fake.setDefault((req) => (typed(req) && !afterTool(req) ? { toolUse: [{ name: "record_correction", input: { correction: "tags are by version" } }] } : { text: "Tagged it." }));

    const ask = async (where: PlaceOptions, text: string) => {
      const r = await h.core.handle(inboundFor(where, text));
      if (r.kind !== "reply" || r.reply.replyMessageId === null) throw new Error(`not answered: ${JSON.stringify(r)}`);
      return r.reply.replyMessageId;
    };
    // Two conversations, each: an answer with the rule in its prompt, then a typed correction of it.
    for (const where of [first, at("C-ops")]) {
      const reply = await ask(where, "how do I tag the release?");
      expect(JSON.parse((await db.replyTrace.findUniqueOrThrow({ where: { messageId: reply } })).rules)).toEqual([rule.id]);
      await ask(where, "That's wrong, we tag releases by version number");
    }
    expect(await db.correction.count({ where: { workspaceId: scope.workspaceId } })).toBe(2);

    // A new session anywhere in the workspace sees the rule marked doubtful.
    const before = h.fake.requests.length;
    await ask(at("C-new"), "anything to know about releases?");
    const system = systemText(h.fake.requests.slice(before)[0]!);
    expect(system).toContain(RULE);
    expect(system).toMatch(new RegExp(`${RULE}[^\\n]*\\[DOUBTFUL`));

    // The weekly report's repeated problems by rule, from the traces alone.
    const ws = scope;
    const entries = await loadMemoryHistory(h.core.reports, ws);
    const now = Date.now();
    const repeated = await repeatedProblems(h.core.reports, ws, entries, { start: new Date(now - 7 * 86_400_000), end: new Date(now + 60_000) });
    expect(repeated.byRule).toEqual([{ ruleId: rule.id, text: RULE, corrections: 2 }]);

    // The team view lists it as doubtful, with Keep and Reword for an admin (Alice), not for Bob.
    const bob: PlaceOptions = { ...first, user: "UBOB", name: "Bob" };
    const items = async (who: PlaceOptions) => (await h.core.view(inboundFor(who), { pane: "team", pageSize: 20 })).sections.flatMap((x) => x.groups).flatMap((g) => g.items);
    const asAlice = (await items(first)).find((i) => i.id === rule.id)!;
    expect(asAlice.markdown).toContain("doubtful");
    expect(asAlice.buttons.map((b) => b.label)).toEqual(["Keep", "Reword", "Archive"]);
    expect((await items(bob)).find((i) => i.id === rule.id)!.buttons).toEqual([]);
    expect((await h.core.command(inboundFor(bob), "keep", [rule.id])).outcome).toBe("refused");
    // Kept: no longer doubtful in the next session.
    expect((await h.core.command(inboundFor(first), "keep", [rule.id])).outcome).toBe("done");
    const after = h.fake.requests.length;
    await ask(at("C-later"), "anything else about releases?");
    expect(systemText(h.fake.requests.slice(after)[0]!)).not.toContain("[DOUBTFUL");
    // Reworded: the new text is the rule, with a revision rollback can undo.
    const reworded = await h.core.command(inboundFor(first), "reword", [rule.id, "ALWAYS", "tag", "releases", "with", "the", "version"]);
    expect(reworded.outcome).toBe("done");
    expect((await db.memoryEntry.findUniqueOrThrow({ where: { id: rule.id } })).text).toBe("ALWAYS tag releases with the version");
    expect(await db.revision.count({ where: { entityId: rule.id, action: "edit", oldText: RULE } })).toBe(1);
  });

  it("answers /cairn why with what the last answer drew on: its rules and lessons, never another person's private lesson", async () => {
    const db = getDb().prisma;
    const thread = uniqueId("th");
    const alice: PlaceOptions = { workspace: h.ws, user: "UALICE", name: "Alice", channel: "C-rel", isDm: false, thread };
    const bob: PlaceOptions = { ...alice, user: "UBOB", name: "Bob" };
    const { scope } = await place(getDb(), alice);
    const rule = await db.memoryEntry.create({ data: { workspaceId: scope.workspaceId, scope: "team", kind: "rule", status: "active", source: "reaction", text: RULE, createdById: scope.personId } });
    const mine = await db.memoryEntry.create({
      data: { workspaceId: scope.workspaceId, scope: "user", ownerId: scope.personId, kind: "lesson", status: "active", source: "reaction", text: "ALWAYS list release steps for Alice as bullets", createdById: scope.personId },
    });
    h.fake.setDefault({ text: "Tag it with the date." });
    const r = await h.core.handle(inboundFor(alice, "how do I list the release steps?"));
    if (r.kind !== "reply") throw new Error("not answered");
    const asAlice = expandIds((await h.core.command(inboundFor(alice, "/cairn why"), "why")).text, [rule.id, mine.id]);
    expect(asAlice).toContain(`\`${rule.id}\` ${RULE}`);
    expect(asAlice).toContain(`\`${mine.id}\` ALWAYS list release steps for Alice as bullets`);
    const asBob = await h.core.command(inboundFor(bob, "/cairn why"), "why");
    expect(asBob.ephemeral).toBe(true);
    expect(asBob.text).toContain(RULE);
    expect(asBob.text).not.toContain("as bullets");
    expect(expandIds(asBob.text, [rule.id, mine.id])).not.toContain(mine.id);
    expect(asBob.text).toContain("1 more item was private to someone else");
  });
});
