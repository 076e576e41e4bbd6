/**
 * A team skill improved by proposal, through each platform's own protocol (the drivers of
 * contract.ts): a conversation that read a team skill is reviewed, the review's patch is posted in
 * the thread with its diff, the proposer's own ✅ on the post does nothing, a teammate's applies it
 * (a revision naming them), and an admin's `rollback` of that revision undoes it. The worker runs as
 * in production (polling): a test waits for what a person would see.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { accessPolicy, qualified } from "../../src/admission/access.ts";
import type { Core } from "../../src/app/core.ts";
import { startFakeAnthropic, type FakeAnthropic, type RecordedRequest, type Step } from "../fakes/anthropic.ts";
import { waitUntil } from "../fakes/http.ts";
import { makeCore } from "../support/agent.ts";
import type { Database } from "../support/db.ts";
import { answerIn, Observer, type Driver, type Place } from "./contract.ts";
import { expandIds } from "../support/short-ids.ts";

const ADMIN = "cairn-admin";
const SKILL = (body: string) => `---\nname: release-notes\ndescription: Use when writing release notes\n---\n# Release notes\n${body}\n`;
const BEFORE = "1. List the merged PRs.\n2. Post them in #releases.";
const AFTER = BEFORE.replace("merged PRs.", "merged PRs, grouped by component.");

const afterTool = (req: RecordedRequest) => {
  const last = req.body.messages.at(-1);
  return Array.isArray(last?.content) && last.content.some((b) => b.type === "tool_result");
};

export function skillProposalContract(driver: Driver, getDb: () => Database): void {
  // A proposal is approved by a reaction of someone else in a shared place.
  const full = driver.features.reactions && driver.features.channels ? it : it.skip;
  let anthropic: FakeAnthropic;
  let core: Core;
  let observer: Observer;
  const db = () => getDb().prisma;

  /** The turn reads the skill (one tool call: a skill review is due); the review patches it. */
  const respond = (req: RecordedRequest): Step => {
    if (JSON.stringify(req.body.messages).includes("SKILL REVIEW")) {
      if (afterTool(req)) return { text: "Done." };
      return { toolUse: [{ name: "skill_manage", input: { action: "patch", name: "release-notes", old_string: "1. List the merged PRs.", new_string: "1. List the merged PRs, grouped by component.", reason: "Alice groups release notes by component" } }] };
    }
    if (!afterTool(req) && JSON.stringify(req.body.messages.at(-1)).includes("release notes")) return { toolUse: [{ name: "skill_view", input: { name: "release-notes" } }] };
    return { text: "Here are the notes." };
  };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    const access = accessPolicy({ admins: [qualified(driver.platform, ADMIN)], users: [qualified(driver.platform, driver.userId("alice")), qualified(driver.platform, driver.userId("bob"))], channels: [], roles: [] });
    core = makeCore(getDb(), anthropic, {
      access,
      bundledSkillsDir: null,
      learning: { reviewEveryTurns: 0, reviewMinTurns: 0, skillReviewToolCalls: 1, worker: { pollMs: 25, leaseMs: 10_000, concurrency: 2, backoffMs: 100 } },
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
  });

  const cairnSays = (place: Place, fragment: string) => waitUntil(`cairn to say "${fragment}"`, () => driver.timeline(place).find((m) => m.fromCairn && m.text.includes(fragment)), 20_000);

  full("a review's patch of a team skill is posted with its diff; the proposer's ✅ does not apply it, a teammate's does, and rollback undoes it", async () => {
    const channel = await driver.channel();
    // Alice's first message makes the workspace; the team skill is the workspace's.
    const hello = await driver.mention(channel, "alice", "hello there");
    await observer.settled(hello.id);
    const { workspaceId } = await db().message.findFirstOrThrow({ where: { platformId: hello.id, role: "user" } });
    const skill = await db().skill.create({ data: { workspaceId, name: "release-notes", description: "Use when writing release notes", content: SKILL(BEFORE), contentHash: "seeded", source: "tool" } });

    const asked = await driver.mention(channel, "alice", "write the release notes for 2.4, grouped by component");
    await observer.settled(asked.id);
    expect(answerIn(driver.timeline(asked.replyPlace), asked.id).map((m) => m.text).join("\n")).toContain("Here are the notes.");
    const post = await cairnSays(asked.replyPlace, "Proposed change to team skill");
    expect(post.text).toContain("1. List the merged PRs.");
    expect(post.text).toContain("1. List the merged PRs, grouped by component.");
    const proposal = await waitUntil("the proposal's post recorded", () => db().skillProposal.findFirst({ where: { workspaceId, proposalMessageId: { not: null } } }), 20_000);
    expect(post.text).toContain(proposal.id);
    expect(proposal).toMatchObject({ status: "pending", skillId: skill.id, path: null });

    // Alice's own ✅ reaches the core and changes nothing.
    await driver.react(asked.replyPlace, post.id!, "alice", "check");
    expect(await observer.feedbackOn(post.id!)).toMatchObject({ kind: "recorded" });
    await core.learning.drain();
    expect(await db().skillProposal.findUniqueOrThrow({ where: { id: proposal.id } })).toMatchObject({ status: "pending" });
    expect((await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).content).toBe(SKILL(BEFORE));

    // Bob's applies it, with a revision naming him.
    await driver.react(asked.replyPlace, post.id!, "bob", "check");
    await waitUntil("the proposal applied", () => db().skillProposal.findFirst({ where: { id: proposal.id, status: "applied" } }), 20_000);
    expect((await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).content).toBe(SKILL(AFTER));
    const bob = await db().person.findFirstOrThrow({ where: { workspaceId, externalId: driver.userId("bob") } });
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: skill.id, action: "edit" } });
    expect(rev).toMatchObject({ actorId: bob.id, source: "reaction", oldText: SKILL(BEFORE), newText: SKILL(AFTER) });
    expect(rev.reason).toContain("approved by Bob");
    await cairnSays(asked.replyPlace, "Approved by Bob");

    // An admin rolls the revision back.
    const inbound = observer.received.find((r) => r.inbound.messageId === asked.id)!.inbound;
    const rolled = await core.command({ ...inbound, author: { externalId: ADMIN, displayName: "Ada" }, messageId: `cmd-${asked.id}` }, "rollback", [rev.id]);
    expect(expandIds(rolled.text, [rev.id])).toContain(`Rolled back revision ${rev.id}`);
    expect((await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).content).toBe(SKILL(BEFORE));
  });
}
