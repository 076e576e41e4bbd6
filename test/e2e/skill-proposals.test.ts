/**
 * Team skills improve by proposal (issue 25, item 5): a review's edit of a team skill is kept as a
 * proposal, posted with its diff in the conversation, and applied by a teammate (`/cairn approve`,
 * the view's Approve button) with a revision `rollback` undoes; `/cairn reject` drops it; one made
 * against a text that moved on is stale. Real core on SQLite and PostgreSQL, the fake Anthropic
 * server and a fake platform adapter; the ✅ path through the real Slack and Discord adapters is in
 * test/contract/skill-proposals.ts.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { makeCore, toolResults } from "../support/agent.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from "../fakes/anthropic.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import type { SkillProposal } from "../../src/skills/proposal-store.ts";
import { expandIds } from "../support/short-ids.ts";

const SKILL = (body: string) => `---\nname: release-notes\ndescription: Use when writing release notes\n---\n# Release notes\n${body}\n`;
const BEFORE = "1. List the merged PRs.\n2. Post them in #releases.";
const isReview = (r: RecordedRequest) => JSON.stringify(r.body.messages).includes("SKILL REVIEW");

forEachDatabase("team skill proposals", (getDb) => {
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
  const db = () => getDb().prisma;

  /** A core whose skill review runs after any turn with a tool call; Alice talks in a thread of C-ops, where the team skill `release-notes` exists. */
  async function setup(opts: { dm?: boolean } = {}) {
    const access = accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] });
    const core = makeCore(getDb(), fake, { bundledSkillsDir: null, access, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 1 } });
    const adapter = new FakeAdapter();
    core.attach(adapter);
    const ws = uniqueId("T");
    const thread = uniqueId("th");
    const alice: PlaceOptions = opts.dm ? { workspace: ws, user: "UALICE", name: "Alice", channel: "D-UALICE", isDm: true } : { workspace: ws, user: "UALICE", name: "Alice", channel: "C-ops", isDm: false, thread };
    const as = (user: string, name: string, where: Partial<PlaceOptions> = {}): PlaceOptions => ({ ...alice, isDm: false, channel: "C-ops", thread, user, name, ...where });
    const bob = as("UBOB", "Bob");
    const admin = as("UADMIN", "Ada");
    const { scope } = await place(getDb(), alice);
    const skill = await core.skills.create(scope, SKILL(BEFORE), "team", { source: "tool", actorId: scope.personId, sourceMessageId: null });
    return {
      core,
      adapter,
      alice,
      bob,
      admin,
      as,
      scope,
      skill,
      /** Alice asks for release notes (the turn reads the skill), then the review calls skill_manage with `input`. */
      async review(input: Record<string, unknown>): Promise<SkillProposal | null> {
        fake.enqueue({ toolUse: [{ name: "skill_view", input: { name: "release-notes" } }] }, { text: "Here are the notes." });
        const r = await core.receive(inboundFor(alice, "write the release notes for 2.4, grouped by component"), adapter.target(alice.channel));
        if (r.kind !== "replied" || r.status !== "ok") throw new Error(`not answered: ${JSON.stringify(r)}`);
        fake.enqueue({ toolUse: [{ name: "skill_manage", input: { name: "release-notes", reason: "Alice groups release notes by component", ...input } }] });
        await core.learning.drain();
        return db().skillProposal.findFirst({ where: { workspaceId: scope.workspaceId }, orderBy: { createdAt: "desc" } });
      },
      content: async () => (await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).content,
      command: (who: PlaceOptions, name: "approve" | "reject" | "rollback" | "lessons" | "team" | "forget", args: string[] = []) => core.command(inboundFor(who, `/cairn ${name}`), name, args),
    };
  }
  const patch = { action: "patch", old_string: "1. List the merged PRs.", new_string: "1. List the merged PRs, grouped by component." };

  it("keeps a review's patch of a team skill as a proposal posted with its diff; a teammate's approve applies it with a revision rollback undoes, the proposer's does not count", async () => {
    const t = await setup();
    const proposal = (await t.review(patch))!;
    // Proposed, not applied, and that write went through: the review ends on it, with no call for closing words.
    expect(fake.requests.filter(isReview)).toHaveLength(1);
    expect(proposal).toMatchObject({ status: "pending", skillId: t.skill.id, name: "release-notes", path: null, oldText: SKILL(BEFORE), proposedById: t.scope.personId, conversationId: t.scope.conversationId });
    expect(proposal.newText).toBe(SKILL(BEFORE.replace("PRs.", "PRs, grouped by component.")));
    expect(proposal.reason).toContain("Alice groups release notes by component");
    expect(await t.content()).toBe(SKILL(BEFORE));
    // Posted in the thread with the diff; the post's stored id is the proposal's.
    const post = t.adapter.sent.at(-1)!;
    expect(post.channel).toBe("C-ops");
    expect(post.text).toContain("Proposed change to team skill `release-notes`");
    expect(post.text).toContain("- 1. List the merged PRs.\n+ 1. List the merged PRs, grouped by component.");
    expect(post.text).toContain(`/cairn approve ${proposal.id}`);
    const stored = await db().skillProposal.findUniqueOrThrow({ where: { id: proposal.id } });
    expect(stored.proposalMessageId).not.toBeNull();
    expect(await db().delivery.findFirst({ where: { messageId: stored.proposalMessageId!, platformId: post.id } })).not.toBeNull();

    // Alice's own approval does not count.
    expect(await t.command(t.alice, "approve", [proposal.id])).toMatchObject({ outcome: "refused", text: expect.stringContaining("You proposed it") });
    expect(await t.content()).toBe(SKILL(BEFORE));
    // Bob's applies it, with a revision naming him, announced in the thread.
    const approved = await t.command(t.bob, "approve", [proposal.id]);
    expect(approved.outcome).toBe("done");
    expect(await t.content()).toBe(proposal.newText);
    const bob = (await place(getDb(), t.bob)).scope.personId;
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: t.skill.id, action: "edit" } });
    expect(rev).toMatchObject({ actorId: bob, source: "tool", oldText: SKILL(BEFORE), newText: proposal.newText });
    expect(rev.reason).toContain(`proposal ${proposal.id} approved by Bob`);
    expect(expandIds(approved.text, [rev.id])).toContain(rev.id);
    expect(await db().skillProposal.findUniqueOrThrow({ where: { id: proposal.id } })).toMatchObject({ status: "applied", decidedById: bob });
    expect(t.adapter.sent.at(-1)).toMatchObject({ channel: "C-ops", text: expect.stringContaining("Approved by Bob: team skill `release-notes`") });
    // Decided once.
    expect((await t.command(t.admin, "approve", [proposal.id])).outcome).toBe("not_found");
    // An admin's rollback of that revision brings the text back.
    expect(expandIds((await t.command(t.admin, "rollback", [rev.id])).text, [rev.id])).toContain(`Rolled back revision ${rev.id}`);
    expect(await t.content()).toBe(SKILL(BEFORE));
  });

  it("drops a proposal on /cairn reject by a teammate (not by its proposer), and says so in the thread", async () => {
    const t = await setup();
    const proposal = (await t.review(patch))!;
    expect((await t.command(t.alice, "reject", [proposal.id])).outcome).toBe("refused");
    expect(await t.command(t.bob, "reject", [proposal.id])).toMatchObject({ outcome: "done", text: "Rejected: team skill `release-notes` stays as it is." });
    expect(await db().skillProposal.findUniqueOrThrow({ where: { id: proposal.id } })).toMatchObject({ status: "rejected" });
    expect(t.adapter.sent.at(-1)!.text).toBe("Rejected by Bob: the proposed change to team skill `release-notes` is dropped.");
    expect((await t.command(t.bob, "approve", [proposal.id])).text).toContain("already rejected");
    expect(await t.content()).toBe(SKILL(BEFORE));
    expect(await db().revision.count({ where: { entityId: t.skill.id } })).toBe(1);
  });

  it("does not apply a proposal whose text changed since it was made: it is stale, and the approver is told why", async () => {
    const t = await setup();
    const proposal = (await t.review(patch))!;
    await t.core.skills.patch(t.scope, "release-notes", { old_string: "2. Post them", new_string: "2. Post the notes" }, { source: "tool", actorId: t.scope.personId, sourceMessageId: null });
    const changed = await t.content();
    const answer = await t.command(t.bob, "approve", [proposal.id]);
    expect(answer).toMatchObject({ outcome: "refused" });
    expect(answer.text).toContain("SKILL.md of `release-notes` changed since it was proposed");
    expect(await t.content()).toBe(changed);
    expect(await db().skillProposal.findUniqueOrThrow({ where: { id: proposal.id } })).toMatchObject({ status: "stale" });
    expect(t.adapter.sent.at(-1)!.text).toContain("Not applied: SKILL.md of `release-notes` changed since it was proposed");
    expect(await db().revision.count({ where: { entityId: t.skill.id, action: "edit" } })).toBe(0);
  });

  it("lists pending proposals in the team view (Approve and Reject for teammates, run as commands) and in lessons, only for people of that channel", async () => {
    const t = await setup();
    const proposal = (await t.review(patch))!;
    const items = async (who: PlaceOptions) => (await t.core.view(inboundFor(who), { pane: "team", pageSize: 20 })).sections.flatMap((s) => s.groups).find((g) => g.id === "proposals")!.items;
    const asBob = (await items(t.bob)).find((i) => i.id === proposal.id)!;
    expect(asBob.markdown).toContain("Change to team skill `release-notes` (SKILL.md, +1 −1 lines)");
    expect(asBob.markdown).toContain("from a review of Alice's conversation");
    expect(asBob.buttons.map((b) => [b.label, b.command, ...b.args])).toEqual([
      ["Approve", "approve", proposal.id],
      ["Reject", "reject", proposal.id],
    ]);
    expect((await items(t.alice)).find((i) => i.id === proposal.id)!.buttons).toEqual([]);
    // Someone who cannot read C-ops does not see it.
    expect((await items(t.as("UCAROL", "Carol", { channel: "C-elsewhere" }))).some((i) => i.id === proposal.id)).toBe(false);
    expect(expandIds((await t.command(t.bob, "team")).text, [proposal.id])).toContain(`Approve: \`approve ${proposal.id}\``);
    expect(expandIds((await t.command(t.bob, "lessons")).text, [proposal.id])).toContain(`\`${proposal.id}\` Change to team skill \`release-notes\``);
    // The Approve button is the command.
    const button = asBob.buttons[0]!;
    expect((await t.core.command(inboundFor(t.bob), button.command, button.args)).outcome).toBe("done");
    expect((await items(t.bob)).some((i) => i.id === proposal.id)).toBe(false);
  });

  it("proposes a new support file of a team skill, which approval adds and rollback removes", async () => {
    const t = await setup();
    const proposal = (await t.review({ action: "write_file", file_path: "references/components.md", content: "# Components\n- api\n- web\n" }))!;
    expect(proposal).toMatchObject({ path: "references/components.md", oldText: null, status: "pending" });
    expect(t.adapter.sent.at(-1)!.text).toContain("(a new file references/components.md)");
    expect(await db().skillFile.count({ where: { skillId: t.skill.id } })).toBe(0);
    expect((await t.command(t.bob, "approve", [proposal.id])).outcome).toBe("done");
    expect(await db().skillFile.findFirstOrThrow({ where: { skillId: t.skill.id } })).toMatchObject({ path: "references/components.md", content: "# Components\n- api\n- web\n" });
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: t.skill.id, action: "write_file" } });
    expect((await t.command(t.admin, "rollback", [rev.id])).text).toContain("Rolled back");
    expect(await db().skillFile.count({ where: { skillId: t.skill.id } })).toBe(0);
  });

  it("erases a person's pending proposals with the rest of what they proposed (forget me)", async () => {
    const t = await setup();
    const proposal = (await t.review(patch))!;
    await t.command(t.alice, "forget", ["me"]);
    expect((await t.command(t.alice, "forget", ["me", "confirm"])).text).toContain("1 pending entries");
    expect(await db().skillProposal.findUnique({ where: { id: proposal.id } })).toBeNull();
    expect(await t.content()).toBe(SKILL(BEFORE));
  });

  it("in a DM proposes nothing: nobody else could approve it there, so the change is refused and reported as a suggestion", async () => {
    const t = await setup({ dm: true });
    expect(await t.review(patch)).toBeNull();
    const result = toolResults(fake.requests.filter(isReview).at(-1)!)[0]!;
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining("a review cannot change one from a direct message") });
    expect(t.adapter.sent.at(-1)!.text).toContain("Suggested a change to team skill `release-notes`");
    expect(await t.content()).toBe(SKILL(BEFORE));
  });
});
