/**
 * Memory that stays true (issue 27, freshness), through the real Core and the fake Anthropic server:
 * - a shared item nobody confirmed for CAIRN_VERIFY_DAYS shows "(last confirmed <date>)" to the
 *   model (team fact, team rule, team skill, channel lesson) and in `/cairn team` and the team view,
 *   with *Still true*; a recent one shows no date;
 * - `/cairn verify <id>` confirms it (date, who, a "verify" revision) and the next session shows no
 *   date; an id the person cannot see from here (another channel's, another person's profile,
 *   another workspace's) is answered as unknown and left as it was;
 * - ✅ on an answer confirms the shared items its trace drew on that the reactor may see (never the
 *   asker's profile); a 👍 confirms nothing;
 * - the monthly `verify` job, queued for one slot by two cores on one database, posts once in the
 *   report channel: items due, oldest and most used first, and decayed lessons proposed for
 *   archiving with `/cairn forget <id>`, archiving nothing itself. Both databases.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { MemoryPlatform, type ShownMessage } from "../../bench/lib/memory-platform.ts";
import type { Core } from "../../src/app/core.ts";
import { payloadFor, slotKey } from "../../src/jobs/schedules.ts";
import { lastUserText, startFakeAnthropic, systemText, type FakeAnthropic } from "../fakes/anthropic.ts";
import { makeCore } from "../support/agent.ts";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { showsId } from "../support/short-ids.ts";

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY);
const dayOf = (d: Date) => d.toISOString().slice(0, 10);
const freshness = { verifyDays: 90, decayDays: 180, remindHours: 24 };

forEachDatabase("memory that stays true: verification dates", (getDb) => {
  let fake: FakeAnthropic;
  const db = () => getDb().prisma;
  const cores: Core[] = [];
  const core = (reportChannel: { platform: "slack"; channel: string } | null = null) => {
    const c = makeCore(getDb(), fake, { bundledSkillsDir: null, learning: { reviewEveryTurns: 0, skillReviewToolCalls: 0, reviewMinTurns: 0, freshness, reportChannel } });
    cores.push(c);
    return c;
  };

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.setDefault({ text: "Here is how." });
  });
  afterAll(async () => {
    await fake.close();
  });

  const fact = (workspaceId: string, text: string, o: { scope?: string; channelKey?: string; ownerId?: string; kind?: string; createdAt?: Date; createdById?: string; confidence?: number } = {}) =>
    db().memoryEntry.create({ data: { workspaceId, scope: "team", kind: "fact", status: "active", source: "tool", text, ...o } });

  it("dates what nobody confirmed for the window, to the model and in the team view; verify confirms it, only where the person can see it", async () => {
    const h = core();
    const ws = uniqueId("T");
    const alice: PlaceOptions = { workspace: ws, user: "UALICE", name: "Alice", channel: "C-ops", isDm: false, thread: uniqueId("th") };
    const { scope } = await place(getDb(), alice);
    const { workspaceId, personId } = scope;
    const old = await fact(workspaceId, "The staging database is reset every Monday", { createdAt: ago(200), createdById: personId });
    const recent = await fact(workspaceId, "Our status page lives at status.example", { createdAt: ago(10), createdById: personId });
    // Confirmed 100 days ago: due again.
    const rule = await fact(workspaceId, "ALWAYS run the dry-run before a migration", { kind: "rule", createdAt: ago(300), createdById: personId });
    await db().memoryEntry.update({ where: { id: rule.id }, data: { verifiedAt: ago(100) } });
    const lesson = await fact(workspaceId, "ALWAYS tag releases with the date", { scope: "channel", channelKey: "C-ops", kind: "lesson", createdAt: ago(150), createdById: personId });
    const elsewhere = await fact(workspaceId, "The other channel deploys on Tuesdays", { scope: "channel", channelKey: "C-other", createdAt: ago(200) });
    const bob = await place(getDb(), { ...alice, user: "UBOB", name: "Bob" });
    const bobs = await fact(workspaceId, "Bob prefers short answers", { scope: "user", ownerId: bob.scope.personId, createdAt: ago(200) });
    const otherWs = (await place(getDb(), { ...alice, workspace: uniqueId("T") })).scope.workspaceId;
    const foreign = await fact(otherWs, "Another team's fact", { createdAt: ago(200) });
    const skill = await db().skill.create({
      data: { workspaceId, name: "deploy-checklist", description: "How we deploy", content: "---\nname: deploy-checklist\ndescription: How we deploy\n---\n\nSteps.", contentHash: uniqueId("h"), source: "tool", createdAt: ago(120) },
    });

    // The model's prompt: each item due carries the day it was last confirmed; the recent one none.
    const before = fake.requests.length;
    const r = await h.handle(inboundFor(alice, "how do I tag releases?"));
    expect(r.kind).toBe("reply");
    const req = fake.requests[before]!;
    const system = systemText(req);
    expect(system).toContain(`${old.text} (taught by Alice, ${dayOf(old.createdAt)}) (last confirmed ${dayOf(old.createdAt)})`);
    expect(system).toMatch(new RegExp(`${recent.text} \\(taught by Alice, ${dayOf(recent.createdAt)}\\)\\n`));
    expect(system).toMatch(new RegExp(`${rule.text} \\(team rule since [^\\n]*\\) \\(last confirmed ${dayOf(ago(100))}\\)`));
    expect(system).toMatch(new RegExp(`deploy-checklist: How we deploy[^\\n]* \\(last confirmed ${dayOf(skill.createdAt)}\\)`));
    expect(lastUserText(req)).toMatch(new RegExp(`${lesson.text} \\(channel lesson, id ${lesson.id}[^\\n]*\\) \\(last confirmed ${dayOf(lesson.createdAt)}\\)`));
    expect(system).not.toContain(elsewhere.text);

    // `/cairn team` and the team view: the date, the group of what is due, Still true.
    const team = await h.command(inboundFor(alice, "/cairn team"), "team");
    expect(team.text).toContain(`${old.text}  _(tool, ${dayOf(old.createdAt)}; last confirmed ${dayOf(old.createdAt)})_`);
    expect(team.text).toContain("Due for confirmation");
    expect(team.text).not.toContain(`${recent.text}  _(tool, ${dayOf(recent.createdAt)}; last confirmed`);
    const view = await h.view(inboundFor(alice), { pane: "team", pageSize: 50 });
    const groups = view.sections.flatMap((s) => s.groups);
    const due = groups.find((g) => g.id === "due")!;
    // Oldest confirmation first: the fact (200 days), the lesson (150), the skill (120), the rule (confirmed 100 days ago).
    expect(due.items.map((i) => i.id)).toEqual([old.id, lesson.id, skill.id, rule.id]);
    const oldItem = groups.find((g) => g.id === "team-memory")!.items.find((i) => i.id === old.id)!;
    expect(oldItem.buttons).toEqual([{ label: "Still true", command: "verify", args: [old.id], style: "primary" }]);
    expect(groups.find((g) => g.id === "team-memory")!.items.find((i) => i.id === recent.id)!.buttons).toEqual([]);

    // What Alice cannot see from here is unknown to verify, and stays unconfirmed.
    for (const id of [elsewhere.id, bobs.id, foreign.id]) {
      const refused = await h.command(inboundFor(alice), "verify", [id]);
      expect(refused.outcome).toBe("not_found");
      expect(refused.text).toContain("No shared item you can see here");
      expect((await db().memoryEntry.findUniqueOrThrow({ where: { id } })).verifiedAt).toBeNull();
    }
    // From a DM, not even a channel's own lesson.
    expect((await h.command(inboundFor({ ...alice, channel: "D-alice", isDm: true }), "verify", [lesson.id])).outcome).toBe("not_found");

    // Verified: the date, who, a revision; the skill by its name.
    const done = await h.command(inboundFor(alice), "verify", [old.id, lesson.id, "deploy-checklist"]);
    expect(done.outcome).toBe("done");
    const row = await db().memoryEntry.findUniqueOrThrow({ where: { id: old.id } });
    expect(row.verifiedById).toBe(personId);
    expect(Date.now() - row.verifiedAt!.getTime()).toBeLessThan(60_000);
    expect(await db().revision.count({ where: { entityId: old.id, action: "verify", actorId: personId } })).toBe(1);
    expect((await db().skill.findUniqueOrThrow({ where: { id: skill.id } })).verifiedAt).not.toBeNull();
    expect(await db().revision.count({ where: { entityId: skill.id, entityType: "skill", action: "verify" } })).toBe(1);

    // A new session: no date on what was confirmed; the rule, not confirmed, still has its date.
    const later = fake.requests.length;
    await h.handle(inboundFor({ ...alice, thread: uniqueId("th") }, "how do I tag releases again?"));
    const next = fake.requests[later]!;
    expect(systemText(next)).toMatch(new RegExp(`${old.text} \\(taught by Alice, ${dayOf(old.createdAt)}\\)\\n`));
    expect(systemText(next)).toContain(`(last confirmed ${dayOf(ago(100))})`);
    expect(systemText(next)).not.toMatch(/deploy-checklist[^\n]*last confirmed/);
    // `verify` alone lists what is still due here: the rule.
    const listed = await h.command(inboundFor(alice), "verify", []);
    expect(showsId(listed.text, rule.id, rule.text)).toBe(true);
    expect(listed.text).not.toContain(old.text);
  });

  it("✅ on an answer confirms the shared items it drew on that the reactor may see; 👍 confirms nothing", async () => {
    const h = core();
    const chat = new MemoryPlatform(uniqueId("T"));
    await chat.start(h.attach(chat));
    const setup = await place(getDb(), { workspace: chat.workspace, user: "ann", channel: "C-rel", isDm: false, thread: "setup" });
    const { workspaceId } = setup.scope;
    const teamFact = await fact(workspaceId, "Releases are cut on Thursdays", { createdAt: ago(200) });
    const rule = await fact(workspaceId, "ALWAYS write release notes", { kind: "rule", createdAt: ago(200) });
    const annProfile = await fact(workspaceId, "Ann likes tables", { scope: "user", ownerId: setup.scope.personId, createdAt: ago(200) });

    const ask = async (question: string): Promise<ShownMessage> => {
      const said = await chat.say("ann", "C-rel", question);
      return said.replies.at(-1)!;
    };
    const liked = await ask("when are releases cut?");
    expect((await chat.react("bo", liked, "+1")).kind).toBe("recorded");
    await h.learning.drain();
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: teamFact.id } })).verifiedAt).toBeNull();

    const right = await ask("and the release notes?");
    const trace = await db().replyTrace.findFirstOrThrow({ where: { workspaceId }, orderBy: { messageId: "desc" } });
    expect(JSON.parse(trace.facts)).toEqual(expect.arrayContaining([teamFact.id, annProfile.id]));
    expect((await chat.react("bo", right, "white_check_mark")).kind).toBe("recorded");
    await h.learning.drain();
    const bo = await db().person.findFirstOrThrow({ where: { workspaceId, externalId: "bo" } });
    for (const id of [teamFact.id, rule.id]) {
      const row = await db().memoryEntry.findUniqueOrThrow({ where: { id } });
      expect(row.verifiedById).toBe(bo.id);
      expect(await db().revision.count({ where: { entityId: id, action: "verify", source: "reaction" } })).toBe(1);
    }
    // Ann's profile was in that prompt too: hers, not Bo's to confirm.
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: annProfile.id } })).verifiedAt).toBeNull();
  });

  it("posts what is due once per slot in the report channel, with the commands that confirm or archive; archives nothing", async () => {
    const report = `C${uniqueId("R").slice(2).toUpperCase()}`;
    const [a, b] = [core({ platform: "slack", channel: report }), core({ platform: "slack", channel: report })];
    const chat = new MemoryPlatform(uniqueId("T"));
    await chat.start(a.attach(chat));
    b.attach(chat);
    // The report channel belongs to this workspace: people talked there.
    await chat.say("ann", report, "hello");
    const { workspaceId, personId } = (await place(getDb(), { workspace: chat.workspace, user: "ann", channel: report, isDm: false, thread: "x" })).scope;
    const older = await fact(workspaceId, "The VPN is at vpn.example", { createdAt: ago(300) });
    // The same day as `less`, drawn on by two answers lately: listed before it.
    const used = await fact(workspaceId, "Invoices go out on the 1st", { createdAt: ago(120) });
    const less = await fact(workspaceId, "Payroll runs on the 25th", { createdAt: ago(120) });
    for (let i = 0; i < 2; i++) await db().replyTrace.create({ data: { messageId: 900_000_000 + Math.floor(Math.random() * 90_000_000), workspaceId, conversationId: "c", facts: JSON.stringify([used.id]) } });
    const fresh = await fact(workspaceId, "Standup is at 9:30", { createdAt: ago(5) });
    const decayed = await fact(workspaceId, "NEVER deploy on Fridays", { scope: "channel", channelKey: "C-ops", kind: "lesson", createdAt: ago(400), confidence: 0.75, createdById: personId });

    const slot = new Date().toISOString().replace(/\.\d{3}Z$/, ".000Z");
    for (const c of [a, b]) await c.jobs.enqueue("verify", payloadFor("verify", slot), { uniqueKey: slotKey("verify", slot) });
    await Promise.all([a.learning.drain(), b.learning.drain()]);
    const jobs = await db().job.findMany({ where: { kind: "verify", uniqueKey: slotKey("verify", slot) } });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.status).toBe("done");

    const posts = chat.shown.filter((m) => m.fromCairn && m.channel === report && m.text.includes("Memory to check"));
    expect(posts).toHaveLength(1);
    const text = posts[0]!.text;
    const at = (id: string) => text.indexOf(`\`${id}\``);
    expect(at(older.id)).toBeGreaterThan(0);
    expect(at(older.id)).toBeLessThan(at(used.id));
    expect(at(used.id)).toBeLessThan(at(less.id));
    expect(text).toContain(`last confirmed ${dayOf(older.createdAt)}`);
    expect(text).toContain("drawn on by 2 answers lately");
    expect(text).toContain("/cairn verify <id>");
    expect(text).not.toContain(fresh.id);
    // The decayed lesson is proposed for archiving, with the command that does it, and not archived.
    const proposed = text.slice(text.indexOf("**Proposed for archiving**"));
    expect(proposed).toContain(`\`${decayed.id}\` ${decayed.text}`);
    expect(proposed).toContain("/cairn forget <id>");
    expect(text.indexOf(decayed.id)).toBe(text.lastIndexOf(decayed.id));
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: decayed.id } })).status).toBe("active");
  });
});
