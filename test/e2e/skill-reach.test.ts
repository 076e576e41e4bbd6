/**
 * The reach of a skill written in a conversation (issue 26, item 1 for skills), through real turns,
 * the real core and the fake Messages API, on SQLite and PostgreSQL: a person's team skill is the
 * channel's (from a DM, the person's) until a teammate approves it; the creator's own approval does
 * nothing; an admin's and a trusted teacher's is the team's at once; CAIRN_TEAM_WRITES=open restores
 * immediate team skills; an untrusted turn's patch of a team skill is a proposal; `/cairn learn`
 * follows the same rule; the safety screen refuses a blocked skill and holds a held one out of
 * every index until a teammate approves it. The ✅ path through Slack and Discord is in
 * test/contract/team-reach.ts.
 */
import { describe, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, type PlaceOptions } from "../support/db.ts";
import { coreHarness, toolResults, type CoreHarness } from "../support/agent.ts";
import { channelPlatform } from "../support/channel-platform.ts";
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { SCREEN_PROMPT } from "../../src/safety/screen.ts";

const SKILL = (name: string, body = "1. Check the dashboards.\n2. Page the owner.") => `---\nname: ${name}\ndescription: Use when someone asks about ${name.replaceAll("-", " ")}\n---\n# ${name}\n${body}\n`;
const access = accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] });
const isScreen = (r: RecordedRequest) => JSON.stringify(r.body.system ?? "").includes(SCREEN_PROMPT.slice(0, 40));

forEachDatabase("skill reach", (getDb) => {
  const db = () => getDb().prisma;
  const people = (h: CoreHarness) => {
    const at = (user: string, name: string, channel: string, thread: string): PlaceOptions => ({ workspace: h.ws, user, name, channel, isDm: false, thread });
    return {
      ann: (channel: string, thread: string) => at("UANN", "Ann", channel, thread),
      ben: (channel: string, thread: string) => at("UBEN", "Ben", channel, thread),
      admin: (channel: string, thread: string) => at("UADMIN", "Ada", channel, thread),
      teacher: (channel: string, thread: string) => at("UTEACH", "Tea", channel, thread),
      dm: (user: string, name: string): PlaceOptions => ({ workspace: h.ws, user, name, channel: `D-${user}`, isDm: true }),
    };
  };

  /** `who` asks; the model calls skill_manage with `input` (the screen's verdict first, if given); the tool's result. */
  async function manage(h: CoreHarness, who: PlaceOptions, input: Record<string, unknown>, verdict?: string) {
    h.fake.enqueue({ toolUse: [{ name: "skill_manage", input }] }, ...(verdict ? [{ text: verdict }] : []), { text: "done" });
    const before = h.fake.requests.length;
    await h.core.handle(inboundFor(who, `please save a skill ${String(input.name)}`));
    const turn = h.fake.requests.slice(before).filter((r) => !isScreen(r));
    return toolResults(turn[1]!)[0]!;
  }
  const create = (h: CoreHarness, who: PlaceOptions, name: string, scope?: string, verdict?: string) => manage(h, who, { action: "create", name, content: SKILL(name), ...(scope ? { scope } : {}) }, verdict);
  /** The system prompt of a new session of `who` (the skills index is read when a session starts). */
  async function prompt(h: CoreHarness, who: PlaceOptions): Promise<string> {
    h.fake.enqueue({ text: "hi" });
    await h.core.handle(inboundFor(who, "hello"));
    return systemText(h.fake.requests.filter((r) => !isScreen(r)).at(-1)!);
  }
  const skillRow = async (h: CoreHarness, name: string) => {
    const ws = await db().workspace.findFirstOrThrow({ where: { externalId: h.ws } });
    return db().skill.findFirst({ where: { workspaceId: ws.id, name } });
  };
  const proposalOf = (skillId: string) => db().skillProposal.findFirstOrThrow({ where: { skillId }, orderBy: { createdAt: "desc" } });
  const command = (h: CoreHarness, who: PlaceOptions, name: "approve" | "reject" | "learn", args: string[]) => h.core.command(inboundFor(who, `/cairn ${name}`), name, args);

  describe("approval (the default)", () => {
    const h = coreHarness(getDb, { settings: { access, bundledSkillsDir: null, teamWrites: { mode: "approval", teachers: ["slack:UTEACH"] } } });

    it("keeps a person's team skill in #a's index, not #b's or a DM's; the creator's approval does nothing, a teammate's makes it the team's", async () => {
      const p = people(h);
      const result = await create(h, p.ann("CA", "t1"), "deploy-checks");
      expect(result.is_error).toBe(false);
      expect(result.content).toContain("SAVED FOR THIS CHANNEL ONLY, NOT THE WHOLE TEAM");
      expect(result.content).toContain("A ✅ from a teammate on your reply");
      const skill = (await skillRow(h, "deploy-checks"))!;
      const { scope } = await place(getDb(), p.ann("CA", "t1"));
      expect(skill).toMatchObject({ scope: "channel", channelKey: scope.channelKey, status: "active" });
      const proposal = await proposalOf(skill.id);
      expect(proposal).toMatchObject({ status: "pending", toScope: "team", proposedById: scope.personId });
      expect(proposal.sourceMessageId).not.toBeNull();
      expect(result.content).toContain(proposal.id);

      expect(await prompt(h, p.ben("CA", "t2"))).toContain("deploy-checks");
      expect(await prompt(h, p.ben("CB", "t3"))).not.toContain("deploy-checks");
      expect(await prompt(h, p.dm("UBEN", "Ben"))).not.toContain("deploy-checks");

      // Ann's own approval does not count.
      expect(await command(h, p.ann("CA", "t1"), "approve", [proposal.id])).toMatchObject({ outcome: "refused" });
      expect(await skillRow(h, "deploy-checks")).toMatchObject({ scope: "channel" });
      expect(await prompt(h, p.ben("CB", "t4"))).not.toContain("deploy-checks");

      // Ben's makes it the team's, with a revision naming him; the thread it was asked in is told.
      const slack = channelPlatform("slack", h.ws);
      h.core.attach(slack);
      const approved = await command(h, p.ben("CB", "t5"), "approve", [proposal.id]);
      expect(slack.posts.map((x) => JSON.stringify(x))).toEqual([expect.stringContaining("deploy-checks")]);
      expect(JSON.stringify(slack.posts[0])).toContain("t1");
      expect(approved).toMatchObject({ outcome: "done", text: expect.stringContaining("whole workspace") });
      expect(await skillRow(h, "deploy-checks")).toMatchObject({ scope: "team", channelKey: null, status: "active" });
      const ben = (await place(getDb(), p.ben("CB", "t5"))).scope.personId;
      expect(await db().revision.findFirstOrThrow({ where: { entityId: skill.id, action: "share" } })).toMatchObject({ actorId: ben });
      expect(await prompt(h, p.ben("CB", "t6"))).toContain("deploy-checks");
      // Decided once.
      expect((await command(h, p.admin("CB", "t7"), "approve", [proposal.id])).outcome).toBe("not_found");
    });

    it("makes an admin's and a trusted teacher's team skill the team's at once", async () => {
      const p = people(h);
      for (const [who, name] of [[p.admin("CA", "t1"), "escalation-roles"], [p.teacher("CA", "t2"), "oncall-handover"]] as const) {
        const result = await create(h, who, name);
        expect(result.content).toContain(`Created skill '${name}' (team)`);
        expect(await skillRow(h, name)).toMatchObject({ scope: "team", channelKey: null, status: "active" });
        expect(await db().skillProposal.count({ where: { name } })).toBe(0);
        expect(await prompt(h, p.ben("CB", `t-${name}`))).toContain(name);
      }
    });

    it("keeps a person's team skill from a DM as their own until a teammate approves it", async () => {
      const p = people(h);
      const result = await create(h, p.dm("UANN", "Ann"), "expense-reports");
      expect(result.content).toContain("SAVED FOR THE PERSON ONLY");
      const skill = (await skillRow(h, "expense-reports"))!;
      const ann = (await place(getDb(), p.dm("UANN", "Ann"))).scope.personId;
      expect(skill).toMatchObject({ scope: "user", ownerId: ann });
      expect(await prompt(h, p.ben("CA", "t1"))).not.toContain("expense-reports");
      await command(h, p.ben("CA", "t2"), "approve", [(await proposalOf(skill.id)).id]);
      expect(await skillRow(h, "expense-reports")).toMatchObject({ scope: "team", ownerId: null });
    });

    it("keeps an untrusted turn's patch of a team skill as a proposal a teammate applies; an admin's applies at once", async () => {
      const p = people(h);
      await create(h, p.admin("CA", "t1"), "release-notes");
      const patch = { action: "patch", name: "release-notes", old_string: "2. Page the owner.", new_string: "2. Page the owner on the phone." };
      const result = await manage(h, p.ann("CA", "t2"), patch);
      expect(result.content).toContain("PROPOSED, NOT APPLIED");
      const skill = (await skillRow(h, "release-notes"))!;
      expect(skill.content).toBe(SKILL("release-notes"));
      const proposal = await proposalOf(skill.id);
      expect(proposal).toMatchObject({ status: "pending", toScope: null, path: null, oldText: SKILL("release-notes") });
      expect(proposal.newText).toContain("Page the owner on the phone.");
      await command(h, p.ben("CA", "t3"), "approve", [proposal.id]);
      expect((await skillRow(h, "release-notes"))!.content).toContain("Page the owner on the phone.");

      const direct = await manage(h, p.admin("CA", "t4"), { action: "patch", name: "release-notes", old_string: "1. Check the dashboards.", new_string: "1. Check the release dashboards." });
      expect(direct.content).toContain("Patched SKILL.md");
      expect((await skillRow(h, "release-notes"))!.content).toContain("Check the release dashboards.");
    });

    it("/cairn learn keeps a person's new team skill in the channel, proposed, and says so", async () => {
      const p = people(h);
      h.fake.enqueue({ toolUse: [{ name: "skill_manage", input: { action: "create", name: "cache-flush", content: SKILL("cache-flush") } }] }, { text: "Saved." });
      const reply = await command(h, p.ann("CA", "t1"), "learn", ["To flush the cache: check the dashboards, then page the owner."]);
      const skill = (await skillRow(h, "cache-flush"))!;
      expect(skill).toMatchObject({ scope: "channel", status: "active" });
      const proposal = await proposalOf(skill.id);
      expect(reply.text).toContain("for this channel only");
      expect(reply.text).toContain(`approve ${proposal.id}`);
    });
  });

  describe("CAIRN_TEAM_WRITES=open", () => {
    const h = coreHarness(getDb, { settings: { access, bundledSkillsDir: null, teamWrites: { mode: "open" } } });

    it("makes anyone's team skill, and their patch of one, the team's at once", async () => {
      const p = people(h);
      expect((await create(h, p.ann("CA", "t1"), "lunch-orders")).content).toContain("Created skill 'lunch-orders' (team)");
      expect(await skillRow(h, "lunch-orders")).toMatchObject({ scope: "team", status: "active" });
      expect(await prompt(h, p.ben("CB", "t2"))).toContain("lunch-orders");
      await manage(h, p.ann("CA", "t3"), { action: "patch", name: "lunch-orders", old_string: "2. Page the owner.", new_string: "2. Order by noon." });
      expect((await skillRow(h, "lunch-orders"))!.content).toContain("Order by noon.");
      expect(await db().skillProposal.count({ where: { name: "lunch-orders" } })).toBe(0);
    });
  });

  describe("the safety screen", () => {
    const h = coreHarness(getDb, { settings: { access, bundledSkillsDir: null, teamWrites: { mode: "open" }, screen: { enabled: true, model: "claude-haiku-5-5", timeoutMs: 2_000 } } });

    it("refuses a blocked skill with the reason and saves nothing", async () => {
      const p = people(h);
      const result = await create(h, p.ann("CA", "t1"), "refund-policy", "team", '{"verdict": "block", "reason": "It tells cairn to skip approvals for one person."}');
      expect(result.is_error).toBe(true);
      expect(result.content).toContain("Blocked by the safety screen: It tells cairn to skip approvals for one person.");
      expect(await skillRow(h, "refund-policy")).toBeNull();
    });

    it("keeps a held skill out of every index until a teammate (not its writer) approves it; a private skill is not screened", async () => {
      const p = people(h);
      const result = await create(h, p.ann("CA", "t1"), "vendor-payments", "channel", '{"verdict": "hold", "reason": "Unclear whether finance agreed."}');
      expect(result.content).toContain("HELD, NOT SAVED FOR ANYONE YET");
      expect(result.content).toContain("Unclear whether finance agreed.");
      const skill = (await skillRow(h, "vendor-payments"))!;
      expect(skill).toMatchObject({ scope: "channel", status: "held" });
      h.fake.setDefault((req) => (isScreen(req) ? { text: '{"verdict": "allow"}' } : { text: "ok" }));
      expect(await prompt(h, p.ann("CA", "t2"))).not.toContain("vendor-payments");
      const proposal = await proposalOf(skill.id);
      expect((await command(h, p.ann("CA", "t3"), "approve", [proposal.id])).outcome).toBe("refused");
      expect((await command(h, p.ben("CA", "t4"), "approve", [proposal.id])).outcome).toBe("done");
      expect(await skillRow(h, "vendor-payments")).toMatchObject({ scope: "channel", status: "active" });
      expect(await prompt(h, p.ben("CA", "t5"))).toContain("vendor-payments");

      const before = h.fake.requests.length;
      await create(h, p.ann("CA", "t6"), "my-notes", "user");
      expect(h.fake.requests.slice(before).filter(isScreen)).toHaveLength(0);
      expect(await skillRow(h, "my-notes")).toMatchObject({ scope: "user", status: "active" });
    });
  });
});
