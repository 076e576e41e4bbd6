/**
 * The Slack App Home end to end: the real Bolt app (HTTP and Socket Mode) against the fake Slack
 * (views.publish and views.open checked as Slack checks them, users.conversations from membership
 * set in the fake, signed block_actions and view_submission payloads built from the views the bot
 * published), the real Core on SQLite and PostgreSQL, and the fake model server.
 *
 * What is proven: the Home tab shows a person exactly what they may see; each button changes the
 * database exactly as its command does (the same seeded team, twice: one clicked through Slack, one
 * run through `core.command`, compared row for row, revisions included); a click the command refuses
 * changes nothing and explains itself in a modal; leaving a channel hides its lessons; pages are
 * reachable and kept across clicks within Slack's 100 blocks; an admin's persona from the Home tab
 * reaches the next session's prompt in that workspace only.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { forEachDatabase, uniqueId } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import {
  captureLogger,
  eventCallback,
  postInteraction,
  postSigned,
  startFakeSlack,
  viewButtons,
  waitUntil,
  type ButtonPick,
  type FakeSlack,
  type FakeView,
} from "../fakes/slack.ts";
import type { Core } from "../../src/app/core.ts";
import type { Inbound } from "../../src/ground/types.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { parseCommandLine } from "../../src/ground/commands.ts";
import { TOMBSTONE } from "../../src/erasure/erasure-store.ts";
import type { SlackHandle } from "../../src/platforms/slack/adapter.ts";
import { MORE_LABEL } from "../../src/platforms/slack/home/blocks.ts";
import { HOME_CALLBACKS, INPUT_BLOCK_ID } from "../../src/platforms/slack/home/modals.ts";
import { decodeState } from "../../src/platforms/slack/home/state.ts";
import { MEMBERSHIP_TTL_MS } from "../../src/platforms/slack/home/membership.ts";
import { startBothModes } from "../support/slack-modes.ts";

const ADMIN = "UADMIN";
const NAMES: Record<string, string> = { UALICE: "Alice", UBOB: "Bob", [ADMIN]: "Ada" };
const BUNDLED = ["cairn-guide", "meeting-notes", "team-runbook"];

/** Item ids per group of a published Home view (item blocks are `item:<n>:<group>:<id>`). */
function items(v: FakeView): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const b of v.view.blocks) {
    const m = /^item:\d+:([^:]+):(.+)$/.exec(b.block_id ?? "");
    if (m) (out[m[1]!] ??= []).push(m[2]!);
  }
  return out;
}
const textOf = (v: FakeView) => v.view.blocks.map((b) => b.text?.text ?? "").join("\n");
const sorted = (xs: readonly string[] | undefined) => [...(xs ?? [])].sort();
/** The buttons under (or beside) one item of a view. */
const buttonsOf = (v: FakeView, itemId: string) => {
  const blocks = v.view.blocks;
  const i = blocks.findIndex((b) => (b.block_id ?? "").endsWith(`:${itemId}`) && b.block_id!.startsWith("item:"));
  if (i < 0) return [];
  const own = blocks[i]!;
  const after = blocks[i + 1]?.block_id === own.block_id!.replace(/^item:/, "item-actions:") ? [blocks[i + 1]!] : [];
  return viewButtons({ blocks: [own, ...after] }).map((b) => b.label);
};

forEachDatabase("slack Home tab end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let slack: FakeSlack;
  let core: Core;
  let httpMode: SlackHandle;
  let socketMode: SlackHandle;
  let eventsUrl: string;
  let logs: ReturnType<typeof captureLogger>;
  let team: string;
  /** This test's channels: the viewer is in `inside`, not in `outside`. */
  let inside: string;
  let outside: string;

  const db = () => getDb().prisma;

  /** Opens `user`'s Home tab (app_home_opened over HTTP) and waits for the view published for it. */
  const openHome = async (user: string, teamId = team): Promise<FakeView> => {
    const before = slack.homeViews(user).length;
    expect((await postSigned(eventsUrl, eventCallback(teamId, slack.appHomeOpened(user)))).status).toBe(200);
    return waitUntil(`the Home of ${user} published`, () => slack.homeViews(user).length > before && slack.homeOf(user), 15_000);
  };
  /** A click on a Home button over HTTP; what was published and opened for the clicker before it. */
  const click = async (user: string, pick: ButtonPick, from?: FakeView, teamId = team) => {
    const before = { views: slack.homeViews(user).length, modals: slack.modals(user).length };
    const payload = slack.homeAction({ teamId, user, pick, ...(from ? { from } : {}) });
    expect((await postInteraction(eventsUrl, payload)).status).toBe(200);
    return before;
  };
  const republished = (user: string, before: { views: number }) =>
    waitUntil(`the Home of ${user} published again`, () => slack.homeViews(user).length > before.views && slack.homeOf(user), 15_000);
  const modalFor = (user: string, before: { modals: number }) =>
    waitUntil(`a modal for ${user}`, () => slack.modals(user).length > before.modals && slack.modals(user).at(-1), 15_000);
  const submit = async (user: string, modal: FakeView, values: Record<string, string> = {}, teamId = team) => {
    const before = { views: slack.homeViews(user).length, modals: slack.modals(user).length };
    expect((await postInteraction(eventsUrl, slack.viewSubmission({ teamId, user, modal, values }))).status).toBe(200);
    return before;
  };
  const modalText = (m: FakeView) => m.view.blocks.map((b) => b.text?.text ?? "").join("\n");

  /** Seeds the team `teamId` with ids prefixed `p`; the same seed twice gives two identical teams. */
  async function seed(teamId: string, p: string) {
    const ws = await db().workspace.create({ data: { platform: "slack", externalId: teamId, name: "Acme" } });
    const person = async (ext: string) => (await db().person.create({ data: { workspaceId: ws.id, externalId: ext, displayName: NAMES[ext] ?? ext } })).id;
    const alice = await person("UALICE");
    const bob = await person("UBOB");
    await person(ADMIN);
    // Where the proposals were posted (a thread in the viewer's channel and one outside it), and Alice's DM.
    const thread = async (channel: string) => db().conversation.create({ data: { workspaceId: ws.id, key: `slack:${teamId}:${channel}:1700000000.000100`, channelId: channel, threadId: "1700000000.000100", isDm: false } });
    const posted = async (conversationId: string) => (await db().message.create({ data: { workspaceId: ws.id, conversationId, role: "assistant", text: "Proposed as a team rule: react ✅", status: "sent" } })).id;
    const tIn = await thread(inside);
    const tOut = await thread(outside);
    const dm = await db().conversation.create({ data: { workspaceId: ws.id, key: `slack:${teamId}:dm:UALICE`, channelId: slack.dmChannel("UALICE"), isDm: true, ownerId: alice } });
    for (const text of ["remember that I like bullet points", "and that I work on billing"]) {
      await db().message.create({ data: { workspaceId: ws.id, conversationId: dm.id, role: "user", text, status: "answered", authorId: alice } });
    }
    const entry = (id: string, e: { scope: string; kind: string; text: string; by: string; owner?: string; channel?: string; proposal?: number; status?: string }) =>
      db().memoryEntry.create({
        data: { id: `${p}-${id}`, workspaceId: ws.id, scope: e.scope, kind: e.kind, text: e.text, source: "tool", status: e.status ?? "active", createdById: e.by, ownerId: e.owner ?? null, channelKey: e.channel ?? null, proposalMessageId: e.proposal ?? null },
      });
    await entry("alice-fact1", { scope: "user", kind: "fact", text: "Alice prefers bullet points", by: alice, owner: alice });
    await entry("alice-fact2", { scope: "user", kind: "fact", text: "Alice works on the billing service", by: alice, owner: alice });
    await entry("bob-fact", { scope: "user", kind: "fact", text: "Bob prefers tables", by: bob, owner: bob });
    await entry("alice-lesson", { scope: "user", kind: "lesson", text: "ALWAYS answer Alice in British English", by: alice, owner: alice });
    await entry("bob-lesson", { scope: "user", kind: "lesson", text: "ALWAYS give Bob the SQL first", by: bob, owner: bob });
    await entry("in-lesson", { scope: "channel", kind: "lesson", text: "ALWAYS deploy from the release branch", by: bob, channel: inside });
    await entry("in-alice-lesson", { scope: "channel", kind: "lesson", text: "NEVER force-push to main", by: alice, channel: inside });
    await entry("out-lesson", { scope: "channel", kind: "lesson", text: "The secret launch is on Friday", by: bob, channel: outside });
    await entry("proposal-bob", { scope: "channel", kind: "lesson", text: "ALWAYS run the migration dry run first", by: bob, channel: inside, proposal: await posted(tIn.id) });
    await entry("proposal-bob2", { scope: "channel", kind: "lesson", text: "ALWAYS tag releases by date", by: bob, channel: inside, proposal: await posted(tIn.id) });
    await entry("proposal-alice", { scope: "channel", kind: "lesson", text: "NEVER merge on Fridays", by: alice, channel: inside, proposal: await posted(tIn.id) });
    await entry("proposal-out", { scope: "channel", kind: "lesson", text: "ALWAYS page the payments on-call", by: bob, channel: outside, proposal: await posted(tOut.id) });
    await entry("rule", { scope: "team", kind: "rule", text: "ALWAYS squash-merge pull requests", by: bob });
    await entry("team-fact", { scope: "team", kind: "fact", text: "The backend is TypeScript on Node 20", by: bob });
    const skill = (name: string, s: { status?: string; pinned?: boolean; scope?: string; owner?: string; channel?: string } = {}) =>
      db().skill.create({
        data: { id: `${p}-skill-${name}`, workspaceId: ws.id, name, description: `Use for ${name}`, content: `---\nname: ${name}\n---\n`, contentHash: name, source: "tool", status: s.status ?? "active", pinned: s.pinned ?? false, scope: s.scope ?? "team", ownerId: s.owner ?? null, channelKey: s.channel ?? null },
      });
    await skill("deploy-checklist");
    await skill("old-runbook", { status: "stale" });
    await skill("incident-report", { pinned: true });
    await skill("vendor-escalation", { status: "archived" });
    await skill("alice-notes", { scope: "user", owner: alice });
    await skill("bob-notes", { scope: "user", owner: bob });
    await skill("out-skill", { scope: "channel", channel: outside });
    const metrics = {
      periodStart: "2026-11-23T00:00:00.000Z",
      periodEnd: "2026-11-30T00:00:00.000Z",
      // Oldest first: the last is the report's week.
      weeks: [{ replies: 41, corrections: 2, per100: 4.9 }, { replies: 30, corrections: 3, per100: 10 }],
      lessons: { proposed: 3, approved: 1, promoted: 0 },
      rules: { added: 1, archived: 0, active: 1 },
      skills: { created: 2, patched: 1 },
    };
    await db().report.create({ data: { workspaceId: ws.id, slot: "2026-11-30T09:00:00.000Z", periodStart: new Date(metrics.periodStart), periodEnd: new Date(metrics.periodEnd), data: JSON.stringify({ metrics }), text: "the report" } });
    return { workspaceId: ws.id };
  }

  /** A workspace's rows as comparable values: seeded ids without their prefix, new rows by their text. */
  async function snapshot(workspaceId: string, p: string) {
    const people = new Map((await db().person.findMany({ where: { workspaceId } })).map((x) => [x.id, x]));
    const entries = await db().memoryEntry.findMany({ where: { workspaceId } });
    const skills = await db().skill.findMany({ where: { workspaceId } });
    const label = new Map<string, string>([...entries.map((e): [string, string] => [e.id, e.id.startsWith(`${p}-`) ? e.id.slice(p.length + 1) : `new:${e.kind}:${e.text}`]), ...skills.map((s): [string, string] => [s.id, `skill:${s.name}`])]);
    const who = (id: string | null) => (id ? (people.get(id)?.externalId ?? "gone") : null);
    const ids = (id: string | null) => (id ? (label.get(id) ?? (id.startsWith(`${p}-`) ? id.slice(p.length + 1) : "unknown")) : null);
    const revisions = await db().revision.findMany({ where: { workspaceId } });
    // Reasons may name a row ("promoted to team rule <id>"): named by its label, as everywhere here.
    const relabel = (text: string | null) => (text ? [...label].reduce((t, [id, l]) => t.split(id).join(l), text) : text);
    const messages = await db().message.findMany({ where: { workspaceId }, include: { conversation: true } });
    const line = (o: object) => JSON.stringify(o);
    return {
      people: [...people.values()].map((x) => line({ ext: x.externalId, name: x.displayName })).sort(),
      entries: entries.map((e) => line({ id: ids(e.id), scope: e.scope, kind: e.kind, status: e.status, text: e.text, owner: who(e.ownerId), by: who(e.createdById), channel: e.channelKey, proposed: e.proposalMessageId !== null, replaces: ids(e.replacesId) })).sort(),
      skills: skills.map((s) => line({ name: s.name, status: s.status, pinned: s.pinned, scope: s.scope, owner: who(s.ownerId) })).sort(),
      revisions: revisions.map((r) => line({ type: r.entityType, entity: ids(r.entityId), action: r.action, old: r.oldText, new: r.newText, actor: who(r.actorId), reason: relabel(r.reason), source: r.source })).sort(),
      messages: messages.map((m) => line({ role: m.role, text: m.text, author: who(m.authorId), where: m.conversation.isDm ? "dm" : m.conversation.channelId })).sort(),
      erasures: await db().erasureRequest.count({ where: { workspaceId } }),
    };
  }

  /** What `/cairn <line>` would be for `user`: the same inbound the Home tab gives the core. */
  const commandInbound = (teamId: string, user: string, line: string): Inbound => ({
    platform: "slack",
    workspace: { externalId: teamId },
    author: { externalId: user, displayName: NAMES[user]! },
    channel: { externalId: slack.dmChannel(user), isDm: true },
    threadId: null,
    messageId: uniqueId("slash"),
    text: line,
    sentAt: new Date(),
  });
  const runCommand = async (teamId: string, user: string, line: string) => {
    const parsed = parseCommandLine(line)!;
    return core.command(commandInbound(teamId, user, line), parsed.name, parsed.args);
  };

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    slack = await startFakeSlack();
    logs = captureLogger("debug");
    core = makeCore(getDb(), anthropic, { access: accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] }) });
    await core.start();
    ({ httpMode, socketMode, eventsUrl } = await startBothModes(core, slack, logs.log));
  });
  afterAll(async () => {
    await httpMode?.stop();
    await socketMode?.stop();
    await slack?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    anthropic.reset();
    anthropic.setDefault({ text: "ok" });
    slack.reset();
    slack.setListPageMax(100);
    team = uniqueId("T");
    inside = `CIN${team.slice(2)}`;
    outside = `COUT${team.slice(2)}`;
    for (const [id, displayName] of Object.entries(NAMES)) slack.addUser({ id, displayName });
    // Alice and the admin are in `inside` (public); only Bob is in `outside`.
    for (const user of ["UALICE", "UBOB", ADMIN]) slack.joinChannel(user, inside);
    slack.joinChannel("UBOB", outside);
  });

  it("publishes exactly what the viewer may see: their profile, never another's, and only their channels' lessons", async () => {
    await seed(team, "a");
    // Several pages of users.conversations: the adapter follows the cursor.
    for (let i = 0; i < 5; i++) slack.joinChannel("UALICE", `CX${i}${team.slice(2)}`);
    slack.setListPageMax(2);
    const home = await openHome("UALICE");
    const calls = slack.callsTo("users.conversations").filter((c) => c.args.user === "UALICE");
    expect(calls.length).toBe(3);
    expect(calls.map((c) => c.args.types)).toEqual(["public_channel,private_channel", "public_channel,private_channel", "public_channel,private_channel"]);

    const shown = items(home);
    expect(sorted(shown.profile)).toEqual(["a-alice-fact1", "a-alice-fact2"]);
    expect(shown["private-lessons"]).toEqual(["a-alice-lesson"]);
    expect(sorted(shown.proposals)).toEqual(["a-proposal-alice", "a-proposal-bob", "a-proposal-bob2"]);
    expect(shown.rules).toEqual(["a-rule"]);
    expect(sorted(shown["channel-lessons"])).toEqual(["a-in-alice-lesson", "a-in-lesson"]);
    expect(shown["team-memory"]).toEqual(["a-team-fact"]);
    const skillNames = new Map((await db().skill.findMany()).map((s) => [s.id, s.name]));
    expect(sorted(shown.skills?.map((id) => skillNames.get(id)!))).toEqual(sorted(["alice-notes", "deploy-checklist", "incident-report", "old-runbook", "vendor-escalation", ...BUNDLED]));

    const text = textOf(home);
    for (const secret of ["Bob prefers tables", "SQL first", "secret launch", "payments on-call", "bob-notes", "out-skill"]) expect(text).not.toContain(secret);
    expect(text).toContain("Replies: *30*");
    expect(text).toContain("<#" + inside + ">");
    // Buttons where the command would let Alice act, and only there.
    expect(buttonsOf(home, "a-alice-fact1")).toEqual(["Delete"]);
    expect(buttonsOf(home, "a-proposal-bob")).toEqual(["Approve", "Reject"]);
    expect(buttonsOf(home, "a-proposal-alice")).toEqual([]);
    expect(buttonsOf(home, "a-in-alice-lesson")).toEqual(["Archive"]);
    expect(buttonsOf(home, "a-in-lesson")).toEqual([]);
    expect(buttonsOf(home, "a-rule")).toEqual([]);
    expect(buttonsOf(home, "a-skill-deploy-checklist")).toEqual([]);
    const labels = viewButtons(home.view).map((b) => b.label);
    expect(labels).toContain("Forget me");
    expect(labels).not.toContain("Edit persona");

    // The admin sees the admin buttons; Bob sees his own profile and never Alice's.
    const admin = await openHome(ADMIN);
    expect(buttonsOf(admin, "a-skill-deploy-checklist")).toEqual(["Pin", "Archive"]);
    expect(buttonsOf(admin, "a-skill-incident-report")).toEqual(["Unpin"]);
    expect(buttonsOf(admin, "a-skill-vendor-escalation")).toEqual(["Restore"]);
    expect(buttonsOf(admin, "a-proposal-alice")).toEqual(["Approve", "Reject"]);
    expect(buttonsOf(admin, "a-rule")).toEqual(["Archive"]);
    expect(viewButtons(admin.view).map((b) => b.label)).toContain("Edit persona");
    const bob = await openHome("UBOB");
    expect(items(bob).profile).toEqual(["a-bob-fact"]);
    expect(textOf(bob)).not.toContain("Alice prefers bullet points");
    // Bob is in `outside`: its lesson and proposal are his to see.
    expect(items(bob)["channel-lessons"]).toContain("a-out-lesson");
  });

  it("changes the database exactly as each button's command does, revisions included (Delete, Approve, Reject, Archive, Pin, Restore, Forget me)", async () => {
    const twin = uniqueId("T");
    const clicked = await seed(team, "c");
    const typed = await seed(twin, "t");
    expect(await snapshot(clicked.workspaceId, "c")).toEqual(await snapshot(typed.workspaceId, "t"));

    // Each step: the button clicked on the Home tab of `team`, the same command line typed in `twin`.
    const steps: [user: string, line: (p: string) => string][] = [
      ["UALICE", (p) => `forget ${p}-alice-fact1`],
      ["UALICE", (p) => `approve ${p}-proposal-bob`],
      ["UALICE", (p) => `reject ${p}-proposal-bob2`],
      ["UALICE", (p) => `forget ${p}-in-alice-lesson`],
      [ADMIN, () => "pin deploy-checklist"],
      [ADMIN, () => "archive old-runbook"],
      [ADMIN, () => "restore vendor-escalation"],
      [ADMIN, (p) => `forget ${p}-rule`],
    ];
    for (const [user, line] of steps) {
      await openHome(user);
      const before = await click(user, { value: line("c") });
      const after = await republished(user, before);
      // The answer is on top of the republished tab; nothing was opened.
      expect(after.view.blocks[0]!.type).toBe("context");
      expect(slack.modals(user)).toHaveLength(before.modals);
      const reply = await runCommand(twin, user, line("t"));
      expect(reply.outcome).toBe("done");
    }
    expect(await snapshot(clicked.workspaceId, "c")).toEqual(await snapshot(typed.workspaceId, "t"));

    // Forget me: the answer in a modal whose submit runs `forget me confirm`.
    await openHome("UALICE");
    const first = await click("UALICE", { label: "Forget me" });
    const modal = await modalFor("UALICE", first);
    expect(modal.view.callback_id).toBe(HOME_CALLBACKS.next);
    expect(modal.view.submit?.text).toBe("Erase everything");
    expect(modalText(modal)).toContain("This erases your profile");
    // Nothing is erased before the second step.
    expect(await db().memoryEntry.count({ where: { id: "c-alice-fact2" } })).toBe(1);
    const second = await submit("UALICE", modal);
    const answer = await modalFor("UALICE", second);
    expect(modalText(answer)).toMatch(/^Done\. Erased 2 profile entries/);
    const after = await republished("UALICE", second);
    expect(items(after).profile ?? []).toEqual([]);
    await runCommand(twin, "UALICE", "forget me");
    expect((await runCommand(twin, "UALICE", "forget me confirm")).outcome).toBe("done");

    const clickedRows = await snapshot(clicked.workspaceId, "c");
    expect(clickedRows).toEqual(await snapshot(typed.workspaceId, "t"));
    // And what that is, spelled out: the approval made a rule, the rejection and archives are revisions, the erasure took Alice's rows.
    expect(clickedRows.entries.filter((e) => e.includes('"owner":"UALICE"'))).toEqual([]);
    expect(clickedRows.messages.filter((m) => m.includes('"author":"UALICE"')).every((m) => m.includes(TOMBSTONE))).toBe(true);
    expect(clickedRows.entries).toContain(JSON.stringify({ id: "new:rule:ALWAYS run the migration dry run first", scope: "team", kind: "rule", status: "active", text: "ALWAYS run the migration dry run first", owner: null, by: "UBOB", channel: null, proposed: false, replaces: null }));
    const actions = clickedRows.revisions.map((r) => JSON.parse(r) as { entity: string; action: string; actor: string });
    expect(actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ entity: "proposal-bob2", action: "reject", actor: "UALICE" }),
        expect.objectContaining({ entity: "in-alice-lesson", action: "archive", actor: "UALICE" }),
        expect.objectContaining({ entity: "rule", action: "archive", actor: ADMIN }),
        expect.objectContaining({ entity: "skill:deploy-checklist", actor: ADMIN }),
        expect.objectContaining({ entity: "skill:old-runbook", actor: ADMIN }),
        expect.objectContaining({ entity: "skill:vendor-escalation", actor: ADMIN }),
      ]),
    );
    const skills = await db().skill.findMany({ where: { workspaceId: clicked.workspaceId, name: { in: ["deploy-checklist", "old-runbook", "vendor-escalation"] } }, orderBy: { name: "asc" } });
    expect(skills.map((s) => [s.name, s.status, s.pinned])).toEqual([
      ["deploy-checklist", "active", true],
      ["old-runbook", "archived", false],
      ["vendor-escalation", "active", false],
    ]);
  });

  it("changes nothing on a click the command refuses, and explains it in a modal: a non-admin's Pin, the proposer's own Approve, a non-admin's persona", async () => {
    const { workspaceId } = await seed(team, "r");
    const adminHome = await openHome(ADMIN);
    const bobHome = await openHome("UBOB");
    await openHome("UALICE");
    const rows = await snapshot(workspaceId, "r");

    // Buttons Alice was never offered (a stale or someone else's view): the command decides.
    const pin = await click("UALICE", { value: "pin deploy-checklist" }, adminHome);
    expect(modalText(await modalFor("UALICE", pin))).toBe("Only cairn admins can pin skills.");
    const own = await click("UALICE", { value: "approve r-proposal-alice" }, bobHome);
    expect(modalText(await modalFor("UALICE", own))).toBe("You proposed it, so your approval does not count: someone else (or a cairn admin) decides.");
    const rule = await click("UALICE", { value: "forget r-rule" }, adminHome);
    expect(modalText(await modalFor("UALICE", rule))).toMatch(/^Only cairn admins can remove team rules/);
    const edit = await click("UALICE", { label: "Edit persona" }, adminHome);
    const field = await modalFor("UALICE", edit);
    expect(field.view.callback_id).toBe(HOME_CALLBACKS.input);
    const sent = await submit("UALICE", field, { [INPUT_BLOCK_ID]: "Talk like a pirate." });
    expect(modalText(await modalFor("UALICE", sent))).toMatch(/^Only cairn admins can change the team persona/);
    // A button for something already gone: found nothing, told so.
    const gone = await click("UALICE", { value: "forget r-alice-fact1" });
    await republished("UALICE", gone);
    const again = await click("UALICE", { value: "forget r-alice-fact1" }, slack.homeViews("UALICE").at(-2));
    expect(modalText(await modalFor("UALICE", again))).toMatch(/^None of your entries has the id r-alice-fact1/);

    // Nothing changed but the one entry Alice could delete, and the Home tab was not republished for the refusals.
    const now = await snapshot(workspaceId, "r");
    expect(now.entries).toEqual(rows.entries.filter((e) => !e.includes('"id":"alice-fact1"')));
    expect(now.revisions).toEqual(rows.revisions);
    expect(now.skills).toEqual(rows.skills);
    expect(await db().persona.count({ where: { workspaceId } })).toBe(0);
    expect(slack.homeViews("UALICE")).toHaveLength(2);
  });

  it("hides a channel's lessons once the viewer has left it: clicks reuse the membership briefly, opening the tab asks again", async () => {
    await seed(team, "m");
    const home = await openHome("UALICE");
    expect(sorted(items(home)["channel-lessons"])).toEqual(["m-in-alice-lesson", "m-in-lesson"]);
    expect(MEMBERSHIP_TTL_MS).toBe(60_000);
    const asked = () => slack.callsTo("users.conversations").filter((c) => c.args.user === "UALICE").length;
    expect(asked()).toBe(1);

    slack.leaveChannel("UALICE", inside);
    // A click within the minute: the membership Slack gave a moment ago is reused.
    const next = await republished("UALICE", await click("UALICE", { value: "forget m-alice-fact1" }));
    expect(asked()).toBe(1);
    expect(sorted(items(next)["channel-lessons"])).toEqual(["m-in-alice-lesson", "m-in-lesson"]);
    // Opening the tab asks Slack again: the channel's lessons and proposals are gone.
    const reopened = await openHome("UALICE");
    expect(asked()).toBe(2);
    expect(items(reopened)["channel-lessons"]).toBeUndefined();
    expect(items(reopened).proposals).toBeUndefined();
    expect(textOf(reopened)).not.toContain("release branch");
    expect(textOf(reopened)).toContain("No lessons in the channels you are in.");

    // A private channel shows only where cairn is a member too (Slack answers a bot token so).
    const secret = `CPRIV${team.slice(2)}`;
    slack.joinChannel("UALICE", secret, { private: true });
    await db().memoryEntry.create({ data: { workspaceId: (await db().workspace.findFirstOrThrow({ where: { externalId: team } })).id, scope: "channel", kind: "lesson", text: "ALWAYS rotate the keys on Mondays", source: "tool", channelKey: secret } });
    expect(textOf(await openHome("UALICE"))).not.toContain("rotate the keys");
    slack.joinChannel(slack.bot.userId, secret);
    expect(textOf(await openHome("UALICE"))).toContain("rotate the keys");
  });

  it("publishes the next page on Show more and keeps the viewer's pages across clicks (Socket Mode)", async () => {
    const { workspaceId } = await seed(team, "s");
    await db().memoryEntry.createMany({ data: Array.from({ length: 22 }, (_, i) => ({ id: `s-fact-${String(i).padStart(2, "0")}`, workspaceId, scope: "team", kind: "fact", text: `Team fact number ${i}`, source: "tool", createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) })) });
    const before = slack.homeViews("UALICE").length;
    const opened = slack.pushEnvelope("events_api", eventCallback(team, slack.appHomeOpened("UALICE")));
    await slack.waitForAck(opened);
    const home = await waitUntil("the Home published", () => slack.homeViews("UALICE").length > before && slack.homeOf("UALICE"), 15_000);
    expect(textOf(home)).toContain("*Team memory*  (page 1 of 3, 23 in all)");
    const page1 = items(home)["team-memory"]!;
    expect(page1).toHaveLength(10);

    const more = viewButtons(home.view).find((b) => b.blockId === "nav:team-memory" && b.label === MORE_LABEL)!;
    const n = slack.homeViews("UALICE").length;
    const id = slack.pushEnvelope("interactive", slack.homeAction({ teamId: team, user: "UALICE", pick: { actionId: more.actionId } }));
    expect((await slack.waitForAck(id)).payload).toEqual({});
    const page2view = await waitUntil("page 2 published", () => slack.homeViews("UALICE").length > n && slack.homeOf("UALICE"), 15_000);
    expect(textOf(page2view)).toContain("*Team memory*  (page 2 of 3, 23 in all)");
    const page2 = items(page2view)["team-memory"]!;
    expect(page2).toHaveLength(10);
    expect(page2.filter((x) => page1.includes(x))).toEqual([]);
    expect(decodeState(page2view.view.private_metadata, 0).pages).toEqual({ "team-memory": 1 });
    expect(viewButtons(page2view.view).filter((b) => b.blockId === "nav:team-memory").map((b) => b.label)).toEqual(["Previous", MORE_LABEL]);

    // A command click republishes on the same page.
    const del = slack.pushEnvelope("interactive", slack.homeAction({ teamId: team, user: "UALICE", pick: { value: "forget s-alice-fact1" } }));
    await slack.waitForAck(del);
    const after = await waitUntil("republished after Delete", () => slack.homeViews("UALICE").length > n + 1 && slack.homeOf("UALICE"), 15_000);
    expect(items(after)["team-memory"]).toEqual(page2);
    expect(items(after).profile).toEqual(["s-alice-fact2"]);
  });

  it("publishes a library of 300 skills, with every other group full, within 100 blocks, and every item reachable by paging", async () => {
    const { workspaceId } = await seed(team, "l");
    const adminId = (await db().person.findFirstOrThrow({ where: { workspaceId, externalId: ADMIN } })).id;
    const bobId = (await db().person.findFirstOrThrow({ where: { workspaceId, externalId: "UBOB" } })).id;
    await db().skill.createMany({ data: Array.from({ length: 300 }, (_, i) => ({ id: `l-many-${i}`, workspaceId, name: `skill-${String(i).padStart(3, "0")}`, description: `Procedure number ${i}`, content: "---\n---\n", contentHash: `h${i}`, source: "tool" })) });
    const many = (kind: string, scope: string, extra: object) =>
      db().memoryEntry.createMany({ data: Array.from({ length: 25 }, (_, i) => ({ id: `l-${scope}-${kind}-${i}`, workspaceId, scope, kind, text: `${scope} ${kind} ${i}`, source: "tool", createdById: adminId, ...extra })) });
    await many("fact", "user", { ownerId: adminId });
    await many("lesson", "user", { ownerId: adminId });
    await many("rule", "team", {});
    await many("fact", "team", {});
    await many("lesson", "channel", { channelKey: inside });
    await db().memoryEntry.createMany({ data: Array.from({ length: 25 }, (_, i) => ({ id: `l-prop-${i}`, workspaceId, scope: "channel", kind: "lesson", text: `proposal ${i}`, source: "tool", createdById: bobId, channelKey: inside, proposalMessageId: 1 })) });

    const home = await openHome(ADMIN);
    // Ten items a page would be 116 blocks: the page size shrank to fit.
    const size = decodeState(home.view.private_metadata, 0).size;
    expect(size).toBeLessThan(10);
    expect(home.view.blocks.length).toBeLessThanOrEqual(100);
    expect(items(home).skills).toHaveLength(size);

    const expected = (await db().skill.findMany({ where: { OR: [{ workspaceId, status: { not: "archived" }, scope: "team" }, { workspaceId, scope: "team", status: "archived" }, { bundled: true }] } })).map((s) => s.id);
    const seen: string[] = [...items(home).skills!];
    let view = home;
    for (let page = 1; ; page++) {
      const more = viewButtons(view.view).find((b) => b.blockId === "nav:skills" && b.label === MORE_LABEL);
      if (!more) break;
      view = await republished(ADMIN, await click(ADMIN, { actionId: more.actionId }));
      expect(view.view.blocks.length).toBeLessThanOrEqual(100);
      expect(decodeState(view.view.private_metadata, 0).pages.skills).toBe(page);
      seen.push(...items(view).skills!);
    }
    expect(seen).toHaveLength(expected.length);
    expect(sorted(seen)).toEqual(sorted(expected));
    // Every publish was accepted by the fake's views.publish (it refuses over 100 blocks).
    expect(slack.calls.filter((c) => c.method === "views.publish" && !c.ok)).toEqual([]);
  }, 180_000);

  it("stores an admin's persona from Edit persona: the workspace's next session is prompted with it, another workspace's is not", async () => {
    const { workspaceId } = await seed(team, "p");
    const home = await openHome(ADMIN);
    const field = await modalFor(ADMIN, await click(ADMIN, { label: "Edit persona" }, home));
    expect(field.view.blocks[0]!.element).toMatchObject({ type: "plain_text_input", multiline: true, max_length: core.persona.limit });
    const persona = "Answer like a ship's captain: brief, and always end with 'Aye.'";
    const sent = await submit(ADMIN, field, { [INPUT_BLOCK_ID]: persona });
    const after = await republished(ADMIN, sent);
    expect(textOf(after)).toContain("ship's captain");
    expect((await db().persona.findUniqueOrThrow({ where: { workspaceId } })).text).toBe(persona);
    expect(await db().revision.count({ where: { workspaceId, entityType: "persona", action: "add" } })).toBe(1);
    // The next session in this workspace: the persona is in the system prompt.
    const ask = async (teamId: string) => {
      const n = anthropic.requests.length;
      const ts = slack.nextTs();
      const channel = `DBOB${teamId.slice(2)}`;
      expect((await postSigned(eventsUrl, eventCallback(teamId, { type: "message", channel, channel_type: "im", user: "UBOB", text: "how do we deploy?", ts, event_ts: ts }))).status).toBe(200);
      const [req] = (await anthropic.waitForRequests(n + 1, 15_000)).slice(n);
      return anthropic.systemText(req!);
    };
    expect(await ask(team)).toContain(persona);
    expect(await ask(uniqueId("T"))).not.toContain("ship's captain");
  });
});
