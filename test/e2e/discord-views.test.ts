/**
 * `/cairn me|team|skills` on Discord end to end: the real discord.js client against the fake Discord
 * (gateway over a real WebSocket, REST over real HTTP), the real Core on the test databases.
 *
 * The views are clicked as a person would: a button of a recorded message, by the custom id Discord
 * would send back, as a given user, in a given channel. Every button runs a command; the tests show
 * that a click changes the database exactly as the same command typed does (the row and its
 * revisions, compared with a twin the typed command changed), that what a person is not allowed to
 * do stays undone whoever clicks, and that every message cairn draws keeps Discord's limits (the
 * fake answers 400 beyond them, as Discord does).
 *
 * Each test has a guild of its own (its own workspace). Nothing sleeps: a test waits until the
 * client has received its dispatch and the adapter has finished every handler it started.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachDatabase } from "../support/db.ts";
import { makeCore } from "../support/agent.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { snowflake, startFakeDiscord, waitFor, type FakeDiscord, type FakeGuild, type FakeUser, type PostedMessage } from "../fakes/discord.ts";
import type { Core } from "../../src/app/core.ts";
import type { Place } from "../../src/history/store/store.ts";
import type { Provenance } from "../../src/db/revisions.ts";
import { scopeOf } from "../../src/history/store/store.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { createRule, saveLesson } from "../../src/lessons/lesson-store.ts";
import { startDiscord, type DiscordAdapter } from "../../src/platforms/discord/adapter.ts";
import { UNKNOWN_INTERACTION_REPLY } from "../../src/platforms/discord/commands/slash.ts";

const person = (username: string, globalName: string): FakeUser => ({ id: snowflake(), username, globalName });
const alice = person("alice", "Alice");
const bob = person("bob", "Bob");
/** The cairn admin (CAIRN_ADMINS=discord:<id>). */
const ada = person("ada", "Ada");

interface TestGuild extends FakeGuild {
  a: string;
  b: string;
}
const GUILDS: TestGuild[] = Array.from({ length: 12 }, (_, i) => {
  const a = snowflake();
  const b = snowflake();
  return { id: snowflake(), name: `Guild ${i}`, a, b, channels: [{ id: a, name: "alpha" }, { id: b, name: "beta" }], members: [alice, bob, ada] };
});

const skillMd = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n1. Do the first thing.\n2. Then the next.\n`;

/** What the embeds of a message say, titles and descriptions in order. */
const textOf = (m: Pick<PostedMessage, "embeds">): string => m.embeds.flatMap((e) => [e.title ?? "", e.description ?? ""]).join("\n");
const buttonsOf = (m: Pick<PostedMessage, "components">) => m.components.flatMap((row) => row.components);
const labelsOf = (m: Pick<PostedMessage, "components">): string[] => buttonsOf(m).map((b) => b.label ?? "");

/** Every limit Discord checks on a message's embeds and buttons. */
function expectWithinLimits(m: Pick<PostedMessage, "embeds" | "components">): void {
  expect(m.embeds.length).toBeLessThanOrEqual(10);
  const chars = m.embeds.reduce((n, e) => n + (e.title ?? "").length + (e.description ?? "").length + (e.fields ?? []).reduce((k, f) => k + f.name.length + f.value.length, 0), 0);
  expect(chars).toBeLessThanOrEqual(6000);
  for (const e of m.embeds) expect((e.description ?? "").length).toBeLessThanOrEqual(4096);
  expect(m.components.length).toBeLessThanOrEqual(5);
  for (const row of m.components) expect(row.components.length).toBeLessThanOrEqual(5);
  const buttons = buttonsOf(m);
  for (const b of buttons) {
    expect((b.label ?? "").length).toBeLessThanOrEqual(80);
    expect((b.custom_id ?? "").length).toBeLessThanOrEqual(100);
  }
  expect(new Set(buttons.map((b) => b.custom_id)).size).toBe(buttons.length);
}

forEachDatabase("discord views end to end", (getDb) => {
  let anthropic: FakeAnthropic;
  let discord: FakeDiscord;
  let core: Core;
  let adapter: DiscordAdapter;
  let used = 0;
  const db = () => getDb().prisma;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    anthropic.setDefault({ text: "ok" });
    discord = await startFakeDiscord({ guilds: GUILDS });
    core = makeCore(getDb(), anthropic, { access: accessPolicy({ admins: [`discord:${ada.id}`], users: [], channels: [], roles: [] }) });
    // Imports the bundled skills: they show in every workspace's skills view.
    await core.start();
    adapter = await startDiscord(core, { token: discord.token, applicationId: discord.applicationId, apiUrl: discord.apiUrl }, silentLogger, { interactionDeferMs: 2_000, shutdownGraceMs: 5_000 });
  });
  afterAll(async () => {
    await adapter?.stop();
    await discord?.close();
    await anthropic?.close();
  });

  const nextGuild = (): TestGuild => {
    const g = GUILDS[used++];
    if (!g) throw new Error("not enough test guilds");
    return g;
  };

  /** The person's place in a guild channel, as a message of theirs there would resolve it. */
  const placeOf = (guild: TestGuild, user: FakeUser, channel = guild.a): Promise<Place> =>
    core.history.resolve({
      platform: "discord",
      workspace: { externalId: guild.id, name: guild.name },
      author: { externalId: user.id, displayName: user.globalName ?? user.username },
      channel: { externalId: channel, isDm: false },
      threadId: null,
      messageId: `seed-${snowflake()}`,
      text: "",
      sentAt: new Date(),
    });
  const by = (p: Place, reason = "seeded by the test"): Provenance => ({ source: "tool", actorId: p.person.id, sourceMessageId: null, reason });

  const profileEntry = async (p: Place, text: string) => {
    await core.memory.apply(scopeOf(p), [{ action: "add", target: "user", content: text }], by(p));
    return db().memoryEntry.findFirstOrThrow({ where: { workspaceId: p.workspace.id, ownerId: p.person.id, text } });
  };
  let proposalPost = 1_000_000;
  /** A lesson of `channel` taught by `p`; proposed as a team rule when `proposed` (its proposal post is not cairn's here). */
  const channelLesson = async (p: Place, channel: string, text: string, proposed = false) => {
    const row = await getDb().prisma.$transaction((tx) => saveLesson(tx, { workspaceId: p.workspace.id, target: "channel", ownerId: null, channelKey: channel, text, quote: text, origin: "", prov: by(p) }));
    return proposed ? db().memoryEntry.update({ where: { id: row.id }, data: { proposalMessageId: proposalPost++ } }) : row;
  };
  const teamRule = (p: Place, text: string) =>
    getDb().prisma.$transaction((tx) => createRule(tx, { workspaceId: p.workspace.id, from: [], text, quote: null, origin: null, replaces: null, pending: false, teamBudget: 2200, prov: by(p) }));
  const teamSkill = (p: Place, name: string, description = `Use when someone asks about ${name}.`) => core.skills.create(scopeOf(p), skillMd(name, description), "team", by(p));

  /** Resolves when the client has received the INTERACTION_CREATE `send` dispatched and every handler it started is done. */
  const settled = async (send: () => string): Promise<string> => {
    const box: { id?: string } = {};
    const got = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("timed out waiting for the client to receive the interaction")), 5_000);
      const listener = (packet: { t?: string; d?: { id?: string } }) => {
        if (packet.t === "INTERACTION_CREATE" && packet.d?.id !== undefined && packet.d.id === box.id) {
          clearTimeout(timer);
          adapter.client.off("raw", listener);
          resolve();
        }
      };
      adapter.client.on("raw", listener);
    });
    box.id = send();
    await got;
    await adapter.idle();
    return box.id;
  };
  const answersTo = (interactionId: string) => discord.posts.filter((p) => p.interactionId === interactionId);
  const callbackOf = (interactionId: string) => discord.calls("POST", new RegExp(`^/interactions/${interactionId}/`))[0]?.body as { type: number; data?: { flags?: number } } | undefined;

  /** `/cairn <pane>` as `user` in `channel`: the view message as first posted. */
  const openView = async (user: FakeUser, channelId: string, pane: "me" | "team" | "skills"): Promise<PostedMessage> => {
    const id = await settled(() => discord.sendCommand({ user, channelId, subcommand: pane }));
    const posted = answersTo(id)[0];
    if (!posted) throw new Error(`no answer to /cairn ${pane}`);
    return posted;
  };
  /** The message as it reads now (after updates). */
  const now = (id: string) => {
    const m = discord.message(id);
    if (!m) throw new Error(`message ${id} is gone`);
    return { ...m, embeds: m.embeds as PostedMessage["embeds"] };
  };
  /** The number the message gives the item whose text contains `text`. */
  const numberOf = (messageId: string, text: string): number => {
    const line = textOf(now(messageId))
      .split("\n")
      .find((l) => l.includes(text));
    const n = line ? /^\*\*(\d+)\.\*\*/.exec(line)?.[1] : undefined;
    if (!n) throw new Error(`no numbered item with "${text}" in: ${textOf(now(messageId))}`);
    return Number(n);
  };
  const customIdOf = (messageId: string, label: string): string => {
    const b = buttonsOf(now(messageId)).find((x) => x.label === label);
    if (!b?.custom_id) throw new Error(`no button "${label}" on the message (it has ${labelsOf(now(messageId)).join(", ")})`);
    return b.custom_id;
  };
  /** `user` clicks the button labelled `label` on the message; the interaction's id once it is answered. */
  const click = (messageId: string, label: string, user: FakeUser): Promise<string> => {
    const customId = customIdOf(messageId, label);
    return settled(() => discord.click({ messageId, customId, user }));
  };
  /** Clicks the action button of the item whose text contains `text` ("Delete 2"). */
  const clickItem = (messageId: string, action: string, text: string, user: FakeUser) => click(messageId, `${action} ${numberOf(messageId, text)}`, user);
  /** The same command typed: `/cairn <subcommand> <option>`. */
  const typed = (user: FakeUser, channelId: string, subcommand: string, options: Record<string, string>) => settled(() => discord.sendCommand({ user, channelId, subcommand, options }));
  /** The ephemeral follow-up a click got: the command's answer. */
  const followUpOf = (interactionId: string) => answersTo(interactionId).find((p) => p.via === "followup");

  /** What a change left on a row: its revisions (who, through what, why; ids in reasons as <id>). */
  const revisions = async (entityId: string) =>
    (await db().revision.findMany({ where: { entityId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] })).map((r) => ({
      entityType: r.entityType,
      action: r.action,
      actorId: r.actorId,
      source: r.source,
      reason: r.reason?.replace(/\bc[a-z0-9]{20,}\b/g, "<id>") ?? null,
    }));

  it("/cairn me shows the viewer's own entries only, ephemerally, with a numbered Delete for each", async () => {
    const g = nextGuild();
    const [pa, pb] = [await placeOf(g, alice), await placeOf(g, bob)];
    await profileEntry(pa, "Alice prefers bullet points");
    await profileEntry(pa, "Alice works on the billing service");
    await profileEntry(pb, "Bob is on call this week");

    const view = await openView(alice, g.a, "me");
    expect(view).toMatchObject({ via: "interaction", flags: 64 });
    expect(callbackOf(view.interactionId!)).toMatchObject({ type: 4, data: { flags: 64 } });
    expectWithinLimits(view);
    const text = textOf(view);
    expect(text).toContain("Your profile");
    expect(text).toContain("Alice prefers bullet points");
    expect(text).toContain("Alice works on the billing service");
    expect(text).not.toContain("Bob is on call");
    expect(labelsOf(view).sort()).toEqual(["Delete 1", "Delete 2", "Forget me"]);

    const bobs = await openView(bob, g.a, "me");
    expect(bobs.flags).toBe(64);
    expect(textOf(bobs)).toContain("Bob is on call this week");
    expect(textOf(bobs)).not.toContain("Alice");
  });

  it("/cairn team in channel A shows A's lessons and proposals, never B's; in B, B's; in a DM, none", async () => {
    const g = nextGuild();
    const [pa, pb] = [await placeOf(g, alice), await placeOf(g, bob, g.b)];
    await channelLesson(pa, g.a, "Alpha deploys go through the release train");
    await channelLesson(pb, g.b, "Beta uses the staging cluster first");
    await channelLesson(pb, g.b, "Beta tickets need a severity label", true);
    await teamRule(pa, "ALWAYS write dates as YYYY-MM-DD");

    const inA = await openView(alice, g.a, "team");
    expect(inA.flags).toBe(64);
    expectWithinLimits(inA);
    expect(textOf(inA)).toContain("Alpha deploys go through the release train");
    expect(textOf(inA)).toContain("ALWAYS write dates as YYYY-MM-DD");
    expect(textOf(inA)).not.toContain("Beta");

    const inB = await openView(alice, g.b, "team");
    expect(textOf(inB)).toContain("Beta uses the staging cluster first");
    expect(textOf(inB)).toContain("Beta tickets need a severity label");
    expect(textOf(inB)).not.toContain("Alpha");

    // A DM is its own workspace on Discord, and no channel's lessons reach it.
    const inDm = await openView(alice, discord.dmChannel(alice), "team");
    expect(inDm.flags).toBe(64);
    expect(textOf(inDm)).not.toMatch(/Alpha|Beta/);
  });

  it("Delete, Approve and Reject change the database exactly as the typed commands do, with revisions, and redraw the view", async () => {
    const g = nextGuild();
    const [pa, pb] = [await placeOf(g, alice), await placeOf(g, bob)];

    // Delete: the entry and its history go.
    const clickedEntry = await profileEntry(pa, "Alice likes short answers (click)");
    const typedEntry = await profileEntry(pa, "Alice likes short answers (typed)");
    expect(await revisions(clickedEntry.id)).toHaveLength(1);
    const me = await openView(alice, g.a, "me");
    const deleted = await clickItem(me.id, "Delete", "(click)", alice);
    expect(callbackOf(deleted)).toMatchObject({ type: 7 });
    expect(followUpOf(deleted)).toMatchObject({ flags: 64, content: "Deleted. It is gone from cairn's memory and history of changes." });
    expect(textOf(now(me.id))).not.toContain("(click)");
    await typed(alice, g.a, "forget", { what: typedEntry.id });
    for (const e of [clickedEntry, typedEntry]) {
      expect(await db().memoryEntry.findUnique({ where: { id: e.id } })).toBeNull();
      expect(await revisions(e.id)).toEqual([]);
    }

    // Approve and Reject: bob's proposals, judged by alice.
    const approveClick = await channelLesson(pb, g.a, "Release notes list every migration (click)", true);
    const approveTyped = await channelLesson(pb, g.a, "Release notes list every migration (typed)", true);
    const rejectClick = await channelLesson(pb, g.a, "Friday deploys are fine (click)", true);
    const rejectTyped = await channelLesson(pb, g.a, "Friday deploys are fine (typed)", true);
    const team = await openView(alice, g.a, "team");
    expect(labelsOf(team)).toEqual(expect.arrayContaining(["Approve 1", "Reject 1", "Approve 4", "Reject 4"]));

    const approved = await clickItem(team.id, "Approve", "migration (click)", alice);
    expect(followUpOf(approved)?.content).toBe("Approved. Team rule from now on: **Release notes list every migration (click)**");
    // Redrawn: the proposal is now a team rule.
    expect(textOf(now(team.id))).toMatch(/Team rules[^\n]*\n(.*\n)*\*\*\d+\.\*\* Release notes list every migration \(click\)/);
    await typed(alice, g.a, "approve", { id: approveTyped.id });

    const rejected = await clickItem(team.id, "Reject", "fine (click)", alice);
    expect(followUpOf(rejected)?.content).toBe("Rejected: it stays a lesson of its channel, no longer proposed.");
    await typed(alice, g.a, "reject", { id: rejectTyped.id });

    const state = async (id: string) => {
      const row = await db().memoryEntry.findUniqueOrThrow({ where: { id } });
      return { status: row.status, proposed: row.proposalMessageId !== null, revisions: await revisions(id) };
    };
    const ruleFrom = async (text: string) => {
      const rule = await db().memoryEntry.findFirstOrThrow({ where: { workspaceId: pa.workspace.id, kind: "rule", text } });
      return { status: rule.status, createdById: rule.createdById, revisions: await revisions(rule.id) };
    };
    expect(await state(approveClick.id)).toEqual(await state(approveTyped.id));
    expect(await state(approveClick.id)).toMatchObject({ status: "archived" });
    expect((await state(approveClick.id)).revisions.map((r) => r.action)).toContain("promote");
    expect((await state(approveClick.id)).revisions.at(-1)).toMatchObject({ actorId: pa.person.id });
    expect(await ruleFrom("Release notes list every migration (click)")).toEqual(await ruleFrom("Release notes list every migration (typed)"));
    expect(await ruleFrom("Release notes list every migration (click)")).toMatchObject({ status: "active", createdById: pb.person.id });

    expect(await state(rejectClick.id)).toEqual(await state(rejectTyped.id));
    expect(await state(rejectClick.id)).toMatchObject({ status: "active", proposed: false });
    expect((await state(rejectClick.id)).revisions.at(-1)).toMatchObject({ action: "reject", actorId: pa.person.id, source: "tool", reason: "rejected" });
  });

  it("Pin, Archive and Restore (an admin's) change the database exactly as the typed commands do, with revisions", async () => {
    const g = nextGuild();
    const admin = await placeOf(g, ada);
    for (const name of ["pin-click", "pin-typed", "archive-click", "archive-typed", "restore-click", "restore-typed"]) await teamSkill(admin, name);
    for (const name of ["restore-click", "restore-typed"]) await core.skills.archive(scopeOf(admin), name, by(admin));
    const skills = await openView(ada, g.a, "skills");
    expectWithinLimits(skills);
    // Bundled skills are listed, without buttons: they ship with cairn.
    expect(textOf(skills)).toContain("`cairn-guide` (bundled)");

    const pinned = await clickItem(skills.id, "Pin", "`pin-click`", ada);
    expect(followUpOf(pinned)?.content).toBe("Pinned `pin-click`.");
    expect(textOf(now(skills.id))).toContain("`pin-click` (pinned)");
    expect(labelsOf(now(skills.id))).toContain(`Unpin ${numberOf(skills.id, "`pin-click`")}`);
    await typed(ada, g.a, "pin", { skill: "pin-typed" });

    const archived = await clickItem(skills.id, "Archive", "`archive-click`", ada);
    expect(followUpOf(archived)?.content).toContain("Archived `archive-click`");
    expect(textOf(now(skills.id))).toContain("`archive-click` (archived)");
    await typed(ada, g.a, "archive", { skill: "archive-typed" });

    const restored = await clickItem(skills.id, "Restore", "`restore-click`", ada);
    expect(followUpOf(restored)?.content).toBe("Restored `restore-click`: active again from the next session.");
    await typed(ada, g.a, "restore", { skill: "restore-typed" });

    const state = async (name: string) => {
      const row = await db().skill.findFirstOrThrow({ where: { workspaceId: admin.workspace.id, name } });
      return { status: row.status, pinned: row.pinned, revisions: (await revisions(row.id)).map((r) => ({ ...r, reason: r.reason })) };
    };
    for (const [action, expected] of [
      ["pin", { status: "active", pinned: true }],
      ["archive", { status: "archived", pinned: false }],
      ["restore", { status: "active", pinned: false }],
    ] as const) {
      const clicked = await state(`${action}-click`);
      expect(clicked).toEqual(await state(`${action}-typed`));
      expect(clicked).toMatchObject(expected);
      expect(clicked.revisions.at(-1)).toMatchObject({ entityType: "skill", actorId: admin.person.id, source: "tool", reason: `${action} by an admin` });
    }
  });

  it("Forget me takes two explicit steps: the first asks, Erase everything erases", async () => {
    const g = nextGuild();
    const pa = await placeOf(g, alice);
    await profileEntry(pa, "Alice lives in Lisbon");
    await profileEntry(pa, "Alice prefers tea");
    const me = await openView(alice, g.a, "me");

    const asked = await click(me.id, "Forget me", alice);
    const step = answersTo(asked)[0]!;
    expect(step).toMatchObject({ via: "interaction", flags: 64 });
    expect(step.content).toContain("To go ahead, send `forget me confirm` within 10 minutes");
    expect(buttonsOf(step)).toEqual([expect.objectContaining({ label: "Erase everything", style: 4, custom_id: "cairn:x:forget me confirm" })]);
    // Nothing is erased yet, and the view is as it was.
    expect(await db().memoryEntry.count({ where: { ownerId: pa.person.id } })).toBe(2);
    expect(await db().erasureRequest.count({ where: { personId: pa.person.id } })).toBe(1);
    expect(answersTo(asked).some((p) => p.id === me.id)).toBe(false);

    const erased = await click(step.id, "Erase everything", alice);
    expect(callbackOf(erased)).toMatchObject({ type: 7 });
    const done = now(step.id);
    expect(done.content).toMatch(/^Done\. Erased 2 profile entries/);
    expect(done.components).toEqual([]);
    expect(await db().memoryEntry.count({ where: { ownerId: pa.person.id } })).toBe(0);
    expect(await db().erasureRequest.count({ where: { personId: pa.person.id } })).toBe(0);
  });

  it("an unauthorized click changes nothing, and the clicker is told why, ephemerally", async () => {
    const g = nextGuild();
    const [pa, pb, admin] = [await placeOf(g, alice), await placeOf(g, bob), await placeOf(g, ada)];
    await teamSkill(admin, "deploy-guide");
    const proposal = await channelLesson(pb, g.a, "Hotfixes skip the release train", true);
    const before = { skill: await db().skill.findFirstOrThrow({ where: { workspaceId: admin.workspace.id, name: "deploy-guide" } }), revisions: await db().revision.count({ where: { workspaceId: pa.workspace.id } }) };

    // bob is no admin: his own view has no Pin; a Pin that reaches cairn from him anyway (an old
    // view, a forged click) is the command's to refuse.
    const bobsSkills = await openView(bob, g.a, "skills");
    expect(labelsOf(bobsSkills).some((l) => l.startsWith("Pin"))).toBe(false);
    const adaSkills = await openView(ada, g.a, "skills");
    const pin = await clickItem(adaSkills.id, "Pin", "`deploy-guide`", bob);
    expect(followUpOf(pin)).toMatchObject({ flags: 64, content: "Only cairn admins can pin skills." });

    // The proposer's own Approve does not count: alice's view offers it, bob clicks it.
    const alicesTeam = await openView(alice, g.a, "team");
    const bobsTeam = await openView(bob, g.a, "team");
    expect(labelsOf(bobsTeam).some((l) => l.startsWith("Approve"))).toBe(false);
    const approve = await clickItem(alicesTeam.id, "Approve", "Hotfixes skip", bob);
    expect(followUpOf(approve)).toMatchObject({ flags: 64, content: "You proposed it, so your approval does not count: someone else (or a cairn admin) decides." });

    expect(await db().skill.findFirstOrThrow({ where: { id: before.skill.id } })).toMatchObject({ pinned: false, status: "active" });
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: proposal.id } })).toMatchObject({ status: "active", proposalMessageId: proposal.proposalMessageId });
    expect(await db().revision.count({ where: { workspaceId: pa.workspace.id } })).toBe(before.revisions);
  });

  it("pages: the next page shows the next items in the same message, and a click there stays on that page", async () => {
    const g = nextGuild();
    const pa = await placeOf(g, alice);
    const texts = Array.from({ length: 7 }, (_, i) => `Alice fact number ${i + 1}`);
    for (const t of texts) await profileEntry(pa, t);
    const me = await openView(alice, g.a, "me");
    const shown = (id: string) => texts.filter((t) => textOf(now(id)).includes(t));
    const first = shown(me.id);
    expect(first).toHaveLength(5);
    expect(textOf(me)).toContain("Your profile · page 1 of 2 (7 in all)");
    expect(labelsOf(me)).toContain("Your profile: page 2 ▶");
    expect(labelsOf(me)).not.toContain("◀ Your profile: page 1");

    const next = await click(me.id, "Your profile: page 2 ▶", alice);
    expect(callbackOf(next)).toMatchObject({ type: 7 });
    const second = shown(me.id);
    expect(second).toHaveLength(2);
    expect([...first, ...second].sort()).toEqual([...texts].sort());
    expect(textOf(now(me.id))).toContain("Your profile · page 2 of 2 (7 in all)");
    expect(labelsOf(now(me.id))).toEqual(["Delete 1", "Delete 2", "Forget me", "◀ Your profile: page 1"]);

    await click(me.id, "Delete 1", alice);
    expect(textOf(now(me.id))).toContain("Your profile · page 2 of 2 (6 in all)");
    expect(shown(me.id)).toEqual([second[1]]);
  });

  it("60 skills page correctly, ten to a page, and no message exceeds Discord's limits", async () => {
    const g = nextGuild();
    const admin = await placeOf(g, ada);
    const names = Array.from({ length: 60 }, (_, i) => `skill-${String(i).padStart(2, "0")}-${"x".repeat(40)}`);
    for (const name of names) await teamSkill(admin, name, `Use when someone asks about the ${name} procedure, step by step, with every detail the team agreed on for it.`);
    const all = (await db().skill.findMany({ where: { OR: [{ bundled: true, status: { not: "archived" } }, { workspaceId: admin.workspace.id }] }, orderBy: { name: "asc" } })).map((s) => s.name);
    expect(all.length).toBe(63);

    const view = await openView(ada, g.a, "skills");
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const m = now(view.id);
      expectWithinLimits(m);
      expect(textOf(m)).toContain(`Skills · page ${page} of 7 (63 in all)`);
      const onPage = all.filter((name) => textOf(m).includes(`\`${name}\``));
      expect(onPage).toHaveLength(page < 7 ? 10 : 3);
      seen.push(...onPage);
      if (page === 7) {
        expect(labelsOf(m)).not.toContain("Skills: page 8 ▶");
        break;
      }
      await click(view.id, `Skills: page ${page + 1} ▶`, ada);
    }
    expect(seen).toEqual(all);
    expect(discord.restCalls.filter((c) => c.status >= 400)).toEqual([]);
  });

  it("an admin's Edit persona opens a modal with the current text, and its submission stores the persona", async () => {
    const g = nextGuild();
    const admin = await placeOf(g, ada);
    expect(labelsOf(await openView(alice, g.a, "team"))).not.toContain("Edit persona");
    const team = await openView(ada, g.a, "team");
    expect(textOf(team)).toContain("no persona set");

    const opened = await click(team.id, "Edit persona", ada);
    expect(callbackOf(opened)).toMatchObject({ type: 9 });
    const modal = discord.modals.find((m) => m.interactionId === opened)!;
    expect(modal).toMatchObject({ title: "Team persona", messageId: team.id, customId: "cairn:m:team::persona set" });
    expect(modal.inputs).toEqual([{ customId: "text", label: expect.stringContaining("How cairn speaks and what it always does"), style: 2, required: true, maxLength: core.persona.limit }]);

    const persona = "Answer in plain English.\nAlways link the runbook when deploys come up.";
    const submitted = await settled(() => discord.submitModal(modal, ada, { text: persona }));
    expect(callbackOf(submitted)).toMatchObject({ type: 7 });
    expect(followUpOf(submitted)?.content).toContain("Saved the team persona");
    expect(textOf(now(team.id))).toContain("Always link the runbook");
    expect(await core.persona.get(scopeOf(admin))).toMatchObject({ text: persona, updatedById: admin.person.id });
    expect(await revisions(admin.workspace.id)).toEqual([{ entityType: "persona", action: "add", actorId: admin.person.id, source: "tool", reason: "persona set by an admin" }]);

    // The next modal starts from the stored text.
    const again = await click(team.id, "Edit persona", ada);
    expect(discord.modals.find((m) => m.interactionId === again)!.inputs[0]).toMatchObject({ value: persona });

    // A non-admin's click on it (an old view, a forged click) opens nothing.
    const refused = await click(team.id, "Edit persona", alice);
    expect(discord.modals.some((m) => m.interactionId === refused)).toBe(false);
    expect(answersTo(refused)[0]).toMatchObject({ flags: 64, content: expect.stringContaining("This button is no longer offered to you.") });
  });

  it("answers unknown and tampered custom ids with the usual 'I don't know that one'", async () => {
    const g = nextGuild();
    const me = await openView(alice, g.a, "me");
    for (const customId of ["weather:now", "cairn:c:me::dance now", "cairn:v:home:", "cairn:m:team::persona set"]) {
      const id = await settled(() => discord.sendInteraction({ type: 3, user_id: alice.id, channel_id: g.a, data: { custom_id: customId, component_type: 2 }, message: discord.message(me.id) }));
      expect(answersTo(id)[0], customId).toMatchObject({ content: UNKNOWN_INTERACTION_REPLY, flags: 64 });
    }
  });

  describe("when the core is slow", () => {
    it("defers: the view is edited in, a page click and a command click update the message after a deferral", async () => {
      const g = nextGuild();
      const pa = await placeOf(g, alice);
      for (let i = 1; i <= 6; i++) await profileEntry(pa, `Alice slow fact ${i}`);
      const slow = await startFakeDiscord({ guilds: [g] });
      // The core takes 200 ms, against a 20 ms deferral threshold.
      const delayed: Pick<Core, "view" | "command"> = { view: core.view.bind(core), command: core.command.bind(core) };
      const slowCore = makeCore(getDb(), anthropic, { access: accessPolicy({ admins: [`discord:${ada.id}`], users: [], channels: [], roles: [] }) });
      slowCore.view = async (...args) => {
        await new Promise((r) => setTimeout(r, 200));
        return delayed.view(...args);
      };
      slowCore.command = async (...args) => {
        await new Promise((r) => setTimeout(r, 200));
        return delayed.command(...args);
      };
      const second = await startDiscord(slowCore, { token: slow.token, applicationId: slow.applicationId, apiUrl: slow.apiUrl }, silentLogger, { interactionDeferMs: 20 });
      try {
        const opened = slow.sendCommand({ user: alice, channelId: g.a, subcommand: "me" });
        const view = await waitFor(() => slow.posts.find((p) => p.interactionId === opened && p.via === "edit"), "the view edited in");
        expect(slow.calls("POST", new RegExp(`^/interactions/${opened}/`))[0]!.body).toMatchObject({ type: 5, data: { flags: 64 } });
        expect(view).toMatchObject({ flags: 64 });
        expect(textOf(view)).toContain("Your profile · page 1 of 2 (6 in all)");

        const paged = slow.click({ messageId: view.id, customId: buttonsOf(view).find((b) => b.label === "Your profile: page 2 ▶")!.custom_id!, user: alice });
        await waitFor(() => slow.posts.find((p) => p.interactionId === paged && p.via === "edit"), "the page edited in");
        expect(slow.calls("POST", new RegExp(`^/interactions/${paged}/`))[0]!.body).toMatchObject({ type: 6 });
        expect(textOf(slow.message(view.id) as unknown as PostedMessage)).toContain("page 2 of 2");

        const deleteId = (slow.message(view.id)!.components[0]!.components[0]!.custom_id)!;
        const deleted = slow.click({ messageId: view.id, customId: deleteId, user: alice });
        const told = await waitFor(() => slow.posts.find((p) => p.interactionId === deleted && p.via === "followup"), "the delete's answer");
        expect(told).toMatchObject({ flags: 64, content: "Deleted. It is gone from cairn's memory and history of changes." });
        expect(slow.calls("POST", new RegExp(`^/interactions/${deleted}/`))[0]!.body).toMatchObject({ type: 6 });
        expect(slow.posts.filter((p) => p.interactionId === deleted).map((p) => p.via)).toEqual(["edit", "followup"]);
        // Five left: one page, and the view is back on it.
        expect(textOf(slow.message(view.id) as unknown as PostedMessage)).toContain("Your profile (5)\n");
      } finally {
        await second.stop();
        await slow.close();
      }
    });
  });
});

describe("the fake Discord refuses buttons Discord refuses", () => {
  let discord: FakeDiscord;
  const channel = snowflake();
  beforeAll(async () => {
    discord = await startFakeDiscord({ guilds: [{ id: snowflake(), name: "Limits", channels: [{ id: channel, name: "limits" }], members: [alice] }] });
  });
  afterAll(async () => {
    await discord?.close();
  });

  const post = async (components: unknown): Promise<{ status: number; body: { code?: number; errors?: unknown } }> => {
    const res = await fetch(`${discord.apiUrl}/v10/channels/${channel}/messages`, {
      method: "POST",
      headers: { authorization: `Bot ${discord.token}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "buttons", components }),
    });
    return { status: res.status, body: (await res.json()) as { code?: number; errors?: unknown } };
  };
  const btn = (id: string, label = "Go") => ({ type: 2, style: 2, label, custom_id: id });
  const row = (...buttons: unknown[]) => ({ type: 1, components: buttons });
  const error = (code: string) => ({ _errors: [expect.objectContaining({ code })] });

  it("with Discord's 400 Invalid Form Body and where the fault is", async () => {
    // At the limits: 5 rows of 5, ids of 100, labels of 80.
    const full = Array.from({ length: 5 }, (_, r) => row(...Array.from({ length: 5 }, (_, b) => btn(`${r}${b}`.padEnd(100, "x"), "L".repeat(80)))));
    expect((await post(full)).status).toBe(200);
    expect(discord.posts.at(-1)!.components).toEqual(full);

    expect(await post([row(btn("x".repeat(101)))])).toEqual({ status: 400, body: expect.objectContaining({ code: 50035, errors: { components: { "0": { components: { "0": { custom_id: error("BASE_TYPE_MAX_LENGTH") } } } } } }) });
    expect(await post([row(btn("a", "L".repeat(81)))])).toEqual({ status: 400, body: expect.objectContaining({ code: 50035, errors: { components: { "0": { components: { "0": { label: error("BASE_TYPE_MAX_LENGTH") } } } } } }) });
    expect(await post([row(...Array.from({ length: 6 }, (_, i) => btn(`b${i}`)))])).toEqual({ status: 400, body: expect.objectContaining({ code: 50035, errors: { components: { "0": { components: error("BASE_TYPE_BAD_LENGTH") } } } }) });
    expect(await post(Array.from({ length: 6 }, (_, i) => row(btn(`r${i}`))))).toEqual({ status: 400, body: expect.objectContaining({ code: 50035, errors: { components: error("BASE_TYPE_BAD_LENGTH") } }) });
    expect(await post([row(btn("same"), btn("same"))])).toEqual({ status: 400, body: expect.objectContaining({ code: 50035, errors: { components: { "0": { components: { "1": { custom_id: error("COMPONENT_CUSTOM_ID_DUPLICATED") } } } } } }) });
    expect(await post([row({ type: 2, style: 1, label: "no id" })])).toEqual({ status: 400, body: expect.objectContaining({ code: 50035 }) });
  });
});
