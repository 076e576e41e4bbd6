/**
 * The curator against a real Core on both databases, with the fake model server and a controllable
 * clock. Each test starts from an empty database (the run covers every workspace) with the bundled
 * skills imported, seeds a library, runs the `curator` job and compares every row before and after.
 *
 * The invariants of src/curator/curator.ts, and the tests that prove them:
 * - never deletes, archive is the strongest action: "changes only what the agent wrote on its own"
 *   (no row is gone) and "rollback restores the exact text ..." (archived items come back).
 * - touches only agent-made items: "changes only what the agent wrote on its own", "drops an
 *   invalid plan whole" (a plan naming a pinned skill, a person's fact).
 * - every change is a revision with reason and run id, history lists it, rollback undoes it:
 *   "changes only what ..." (revisions), "rollback restores the exact text ...", "the owner may
 *   roll back their private item, another non-admin may not".
 * - a dry run changes nothing: "a dry run changes nothing yet reports the changes".
 */
import { beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, resetData, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { systemText, type RecordedRequest } from "../fakes/anthropic.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { curatorJob } from "../../src/curator/job.ts";
import { DAY_MS } from "../../src/curator/policy.ts";
import type { MemoryEntry, Skill } from "../../src/db/generated/sqlite/client.ts";
import { expandIds } from "../support/short-ids.ts";

const T0 = new Date();
let clock = T0;
const at = (daysAfterT0: number) => new Date(T0.getTime() + daysAfterT0 * DAY_MS);
/** The seeds are dated back from the curator's run, which is 100 days after the bundled import. */
const RUN = 100;
const ago = (days: number) => at(RUN - days);

const md = (name: string, description: string, steps: string[]) => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n${steps.map((s, i) => `${i + 1}. ${s}`).join("\n")}\n`;

const WEB = md("deploy-web", "Use when deploying the web app", ["Check the deploy dashboard for open incidents", "Run `deployctl release web`", "Watch the web error rate for ten minutes", "Post the release note in #ops"]);
const API = md("deploy-api", "Use when deploying the api", ["Check the deploy dashboard for open incidents", "Run `deployctl release api`", "Run the api smoke tests", "Post the release note in #ops"]);
const UMBRELLA = md("deploy-service", "Use when deploying the web app or the api", [
  "Check the deploy dashboard for open incidents",
  "Run `deployctl release web` or `deployctl release api`",
  "Run `deployctl release web`",
  "Run `deployctl release api`",
  "Web: watch the web error rate for ten minutes",
  "Api: run the api smoke tests",
  "Post the release note in #ops",
]);
const LOSSY = md("deploy-service", "Use when deploying", ["Check the deploy dashboard for open incidents", "Run `deployctl release <app>`", "Post the release note in #ops"]);

/** Texts with odd spacing and characters, so "byte-equal" means something. */
const STANDUP_1 = "The daily standup is at 9:30  in the Zoom room — bring blockers ✅";
const STANDUP_2 = "Standup happens daily at 9:30 in the Zoom room\t(bring blockers)";
const FRIDAY_FACT = "Production deploys happen every Friday afternoon";
const FRIDAY_RULE = "NEVER deploy to production on Fridays";

const skillsPlan = (merges: unknown[]) => JSON.stringify({ merges });
const merge = (name: string, absorb: string[], content: string) => ({ name, absorb, content });

/** The prompt's short id for the entry whose text contains `fragment`. */
function label(prompt: string, fragment: string): string {
  const line = prompt.split("\n").find((l) => /^E\d+ \[/.test(l) && l.includes(fragment));
  if (!line) throw new Error(`no entry "${fragment}" in the prompt:\n${prompt}`);
  return line.split(" ")[0]!;
}

/** The prompt's short id for the pair of these two entries. */
function pairOf(prompt: string, a: string, b: string): string {
  for (const line of prompt.split("\n")) {
    const m = /^(P\d+): (E\d+) \/ (E\d+)$/.exec(line);
    if (m && [m[2], m[3]].sort().join() === [a, b].sort().join()) return m[1]!;
  }
  throw new Error(`no pair ${a}/${b} in the prompt:\n${prompt}`);
}

const promptOf = (req: RecordedRequest) => String(req.body.messages[0]!.content);

forEachDatabase("the curator", (getDb) => {
  const admins = accessPolicy({ admins: ["slack:UADMIN"], users: [], channels: [], roles: [] });
  const h = coreHarness(getDb, { settings: { access: admins }, now: () => clock, defaultReply: null });
  const db = () => getDb().prisma;
  const opts = (user: string, isDm = false): PlaceOptions => ({ workspace: h.ws, user, channel: isDm ? `D-${user}` : "C-ops", isDm, thread: null, name: user });

  beforeEach(async () => {
    await resetData(getDb());
    clock = T0;
    await h.core.start();
    clock = at(RUN);
  });

  /** Answers the curator's two requests; anything else gets "ok". */
  function model(skills: (prompt: string) => string, memory: (prompt: string) => string = () => '{"merges": [], "contradictions": []}') {
    h.fake.setDefault((req) => {
      const sys = systemText(req);
      if (sys.includes("library of skills")) return { text: skills(promptOf(req)) };
      if (sys.includes("assistant's memory")) return { text: memory(promptOf(req)) };
      return { text: "ok" };
    });
  }

  const curatorRequests = () => h.fake.requests.filter((r) => /library of skills|assistant's memory/.test(systemText(r)));

  async function run(dryRun = false, slot = `slot-${clock.toISOString()}`): Promise<string> {
    const summary = await curatorJob({ ...h.core.learning.ctx, curation: h.core.curation }).run({ slot, dryRun }, new AbortController().signal);
    return String(summary);
  }

  async function rows(workspaceId: string) {
    const skills = await db().skill.findMany({ where: { OR: [{ workspaceId }, { bundled: true }] } });
    const entries = await db().memoryEntry.findMany({ where: { workspaceId } });
    return { skills: new Map(skills.map((s) => [s.id, s])), entries: new Map(entries.map((e) => [e.id, e])) };
  }

  async function mkSkill(workspaceId: string, name: string, o: Partial<Skill> & { steps?: string[] } = {}): Promise<Skill> {
    const { steps, ...rest } = o;
    const content = rest.content ?? md(name, `Use when you need ${name.replace(/-/g, " ")}`, steps ?? [`Open the ${name} page`, `Do the ${name} work`]);
    return db().skill.create({ data: { workspaceId, name, description: `Use when you need ${name}`, content, contentHash: `h-${name}`, source: "tool", createdAt: ago(100), lastUsedAt: ago(1), ...rest } });
  }

  async function mkEntry(workspaceId: string, text: string, o: Partial<MemoryEntry> = {}): Promise<MemoryEntry> {
    return db().memoryEntry.create({ data: { workspaceId, scope: "team", text, source: "review", kind: "fact", createdAt: ago(10), ...o } });
  }

  /** The library of the main tests: every kind of skill and entry the curator must and must not touch. */
  async function seedLibrary() {
    const { scope } = await place(getDb(), opts("UALICE"));
    const ws = scope.workspaceId;
    const s = {
      pinned: await mkSkill(ws, "oncall-page", { pinned: true, lastUsedAt: ago(90), steps: ["Page the primary", "Wait five minutes", "Page the secondary"] }),
      learned: await mkSkill(ws, "expense-report", { source: "learn", lastUsedAt: ago(90), steps: ["Fill the expense form", "Attach receipts"] }),
      imported: await mkSkill(ws, "vendor-setup", { source: "import", lastUsedAt: ago(90), steps: ["Request a vendor id", "Sign the contract"] }),
      taughtLater: await mkSkill(ws, "laptop-setup", { lastUsedAt: ago(90), steps: ["Install the disk encryption", "Enroll the laptop"] }),
      toStale: await mkSkill(ws, "rotate-keys", { lastUsedAt: ago(20), steps: ["Generate a new signing key", "Revoke the old key"] }),
      toArchive: await mkSkill(ws, "renew-certs", { source: "review", lastUsedAt: ago(35), steps: ["Renew the TLS certificate", "Reload nginx"] }),
      young: await mkSkill(ws, "draft-changelog", { lastUsedAt: null, createdAt: ago(5), steps: ["Collect merged pull requests", "Group them by area"] }),
      reused: await mkSkill(ws, "triage-alerts", { status: "stale", lastUsedAt: ago(2), steps: ["Acknowledge the pager alert", "Label its severity"] }),
      web: await mkSkill(ws, "deploy-web", { content: WEB }),
      api: await mkSkill(ws, "deploy-api", { source: "review", content: API }),
    };
    await db().revision.create({ data: { workspaceId: ws, entityType: "skill", entityId: s.taughtLater.id, action: "patch", oldText: "a", newText: "b", source: "learn", createdAt: ago(50) } });
    const e = {
      personFact: await mkEntry(ws, "Alice prefers release notes as bullet points", { source: "tool" }),
      learnedFact: await mkEntry(ws, "Invoices go to the finance mailbox", { source: "learn" }),
      standup1: await mkEntry(ws, STANDUP_1, { createdAt: ago(30) }),
      standup2: await mkEntry(ws, STANDUP_2, { createdAt: ago(20) }),
      oldToolLesson: await mkEntry(ws, "Use the blue-green script for payment releases", { scope: "channel", channelKey: "C-ops", kind: "lesson", source: "tool", createdAt: ago(70) }),
      shownLesson: await mkEntry(ws, "Tag the security team on vendor questions", { scope: "channel", channelKey: "C-ops", kind: "lesson", createdAt: ago(90), lastUsedAt: ago(10) }),
      correctionLesson: await mkEntry(ws, "Quote invoices in euros", { scope: "channel", channelKey: "C-ops", kind: "lesson", source: "reaction", createdAt: ago(90) }),
      rule: await mkEntry(ws, FRIDAY_RULE, { kind: "rule", source: "reaction", createdAt: ago(90) }),
      fridayFact: await mkEntry(ws, FRIDAY_FACT, { createdAt: ago(15) }),
    };
    return { ws, scope, s, e };
  }

  const fullPlan = () =>
    model(
      () => skillsPlan([merge("deploy-service", ["deploy-web", "deploy-api"], UMBRELLA)]),
      (p) =>
        JSON.stringify({
          merges: [{ ids: [label(p, "daily standup is"), label(p, "Standup happens")], text: "Daily standup: 9:30 in the Zoom room; bring blockers" }],
          contradictions: [{ pair: pairOf(p, label(p, FRIDAY_RULE), label(p, FRIDAY_FACT)), note: "The fact says Friday deploys; the rule forbids them." }],
        }),
    );

  it("changes only what the agent wrote on its own: every other row is identical, nothing is deleted, every change is a revision of the run", async () => {
    const { ws, s, e } = await seedLibrary();
    fullPlan();
    const before = await rows(ws);
    const summary = await run(false, "2026-w10");
    const after = await rows(ws);

    // Nothing is gone.
    for (const id of [...before.skills.keys()]) expect(after.skills.has(id)).toBe(true);
    for (const id of [...before.entries.keys()]) expect(after.entries.has(id)).toBe(true);
    const changed = { updatedAt: expect.any(Date) };
    const expected = new Map<string, unknown>([
      [s.toStale.id, { ...before.skills.get(s.toStale.id), ...changed, status: "stale" }],
      [s.toArchive.id, { ...before.skills.get(s.toArchive.id), ...changed, status: "archived" }],
      [s.reused.id, { ...before.skills.get(s.reused.id), ...changed, status: "active" }],
      [s.web.id, { ...before.skills.get(s.web.id), ...changed, status: "archived" }],
      [s.api.id, { ...before.skills.get(s.api.id), ...changed, status: "archived" }],
      [e.standup1.id, { ...before.entries.get(e.standup1.id), ...changed, text: "Daily standup: 9:30 in the Zoom room; bring blockers", scannedWith: expect.any(String) }],
      [e.standup2.id, { ...before.entries.get(e.standup2.id), ...changed, status: "archived" }],
      [e.oldToolLesson.id, { ...before.entries.get(e.oldToolLesson.id), ...changed, status: "archived" }],
      [e.fridayFact.id, { ...before.entries.get(e.fridayFact.id), ...changed, flag: `contradicts ${e.rule.id}: The fact says Friday deploys; the rule forbids them.` }],
    ]);
    for (const [id, row] of [...before.skills, ...before.entries]) {
      const now = after.skills.get(id) ?? after.entries.get(id);
      expect(now, `row ${id}`).toEqual(expected.get(id) ?? row);
    }
    // One new skill: the umbrella, in the merged skills' place, made by the curator, starting fresh.
    const created = [...after.skills.values()].filter((x) => !before.skills.has(x.id));
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ name: "deploy-service", content: UMBRELLA, scope: "team", source: "curator", status: "active", workspaceId: ws, createdAt: clock });

    const revs = await db().revision.findMany({ where: { workspaceId: ws, source: "curator" } });
    expect(revs.every((r) => r.runId === "curator:2026-w10" && !!r.reason && r.actorId === null)).toBe(true);
    const byAction = (action: string) => revs.filter((r) => r.action === action).map((r) => r.entityId).sort();
    expect(byAction("stale")).toEqual([s.toStale.id]);
    expect(byAction("reactivate")).toEqual([s.reused.id]);
    expect(byAction("archive")).toEqual([s.toArchive.id, s.web.id, s.api.id, e.standup2.id, e.oldToolLesson.id].sort());
    expect(byAction("merge")).toEqual([e.standup1.id]);
    expect(byAction("create")).toEqual([created[0]!.id]);
    expect(byAction("flag")).toEqual([e.fridayFact.id]);
    expect(revs).toHaveLength(10);
    expect(revs.filter((r) => r.reason === "absorbed_into deploy-service").map((r) => r.entityId).sort()).toEqual([s.web.id, s.api.id].sort());

    // Two model calls, each shown only candidates: no protected skill or person's entry is in them.
    const calls = curatorRequests();
    expect(calls).toHaveLength(2);
    const shown = calls.map(promptOf).join("\n");
    expect(promptOf(calls[0]!)).toContain("Group 1 (team skills)");
    expect(promptOf(calls[0]!)).not.toContain("Group 2");
    for (const name of ["oncall-page", "expense-report", "vendor-setup", "laptop-setup", "renew-certs"]) expect(shown).not.toContain(name);
    expect(shown).not.toContain("Invoices go to");
    expect(summary).toContain("1 skills marked stale, 1 skills archived, 1 skills reactivated, 1 skill merges, 1 lessons archived, 1 memory merges, 1 entries flagged");
  });

  it("is run by the job worker: a queued curator job does its work", async () => {
    const { ws, s } = await seedLibrary();
    model(() => skillsPlan([]));
    await h.core.jobs.enqueue("curator", { slot: "queued", dryRun: false }, { uniqueKey: "curator:queued" });
    await h.core.learning.drain();
    expect((await db().skill.findUniqueOrThrow({ where: { id: s.toStale.id } })).status).toBe("stale");
    expect((await db().job.findFirstOrThrow({ where: { uniqueKey: "curator:queued" } })).status).toBe("done");
    expect(await db().revision.count({ where: { workspaceId: ws, runId: "curator:queued" } })).toBeGreaterThan(0);
  });

  it("a dry run changes nothing yet reports the changes", async () => {
    const { ws } = await seedLibrary();
    fullPlan();
    const before = await rows(ws);
    const revisionsBefore = await db().revision.count();
    const summary = await run(true);
    expect(await rows(ws)).toEqual(before);
    expect(await db().revision.count()).toBe(revisionsBefore);
    expect(summary).toMatch(/^curator dry run .* nothing changed: would /);
    for (const part of ["mark stale skill rotate-keys", "archive skill renew-certs", "reactivate skill triage-alerts", "merge skills deploy-web, deploy-api into deploy-service", "archive lesson", "merge entries", "flag entry"]) {
      expect(summary).toContain(part);
    }
  });

  it.each([
    ["bad JSON", () => "Sure! I would merge deploy-web and deploy-api into one skill.", "skills: the model's plan is not valid JSON"],
    ["a plan naming a pinned skill", () => skillsPlan([merge("deploy-service", ["deploy-web", "deploy-pinned"], UMBRELLA)]), "skills: the plan names 'deploy-pinned', a skill the curator may not change"],
    ["a lossy plan (drops more than a quarter of the steps)", () => skillsPlan([merge("deploy-service", ["deploy-web", "deploy-api"], LOSSY)]), "merge into deploy-service rejected: it keeps 3 of 6 steps"],
  ])("drops an invalid plan whole: %s changes nothing", async (_why, reply, because) => {
    const { scope } = await place(getDb(), opts("UALICE"));
    const ws = scope.workspaceId;
    await mkSkill(ws, "deploy-web", { content: WEB });
    await mkSkill(ws, "deploy-api", { content: API });
    await mkSkill(ws, "deploy-pinned", { pinned: true, content: WEB.replace(/deploy-web/g, "deploy-pinned") });
    await mkEntry(ws, STANDUP_1);
    await mkEntry(ws, STANDUP_2);
    await mkEntry(ws, "The daily standup is at 9:30 on Zoom", { source: "tool" });
    // The memory plan merges an entry a person asked to save: dropped too.
    let memoryPlanned = false;
    model(reply, (p) => {
      const ids = [label(p, "9:30 in the Zoom room — bring"), label(p, "9:30 on Zoom")];
      memoryPlanned = true;
      return JSON.stringify({ merges: [{ ids, text: "Standup 9:30" }], contradictions: [] });
    });
    const before = await rows(ws);
    const summary = await run();
    expect(await rows(ws)).toEqual(before);
    expect(await db().revision.count({ where: { workspaceId: ws } })).toBe(0);
    expect(curatorRequests()).toHaveLength(2);
    expect(memoryPlanned).toBe(true);
    expect(summary).toMatch(/nothing to do/);
    expect(summary).toContain(because);
    expect(summary).toContain("memory: the merge of");
  });

  it("rollback restores the exact text (byte-equal) and the status, is itself a revision, and can be rolled back", async () => {
    const { s, e } = await seedLibrary();
    fullPlan();
    await run();
    const admin = inboundFor(opts("UADMIN"));
    const revOf = (entityId: string, action: string) => db().revision.findFirstOrThrow({ where: { entityId, action, source: "curator" } });

    // history lists an entry's revisions by id, and a skill's by name, with their ids.
    const mergeRev = await revOf(e.standup1.id, "merge");
    const history = await h.core.command(admin, "history", [e.standup1.id]);
    expect(expandIds(history.text, [mergeRev.id])).toContain(mergeRev.id);
    expect(history.text).toContain("run curator:");
    const archiveRev = await revOf(s.web.id, "archive");
    expect(expandIds((await h.core.command(admin, "history", ["deploy-web"])).text, [archiveRev.id])).toContain(archiveRev.id);

    const undo = await h.core.command(admin, "rollback", [mergeRev.id]);
    expect(undo.text).toContain("Rolled back");
    const restored = await db().memoryEntry.findUniqueOrThrow({ where: { id: e.standup1.id } });
    expect(Buffer.from(restored.text).equals(Buffer.from(STANDUP_1))).toBe(true);
    const undoRev = await db().revision.findFirstOrThrow({ where: { entityId: e.standup1.id, action: "rollback" } });
    expect(undoRev).toMatchObject({ source: "tool", oldText: "Daily standup: 9:30 in the Zoom room; bring blockers", newText: STANDUP_1, reason: `rollback of revision ${mergeRev.id} (merge)`, createdAt: clock });

    // The absorbed entry and the archived skill come back as they were.
    await h.core.command(admin, "rollback", [(await revOf(e.standup2.id, "archive")).id]);
    expect(await db().memoryEntry.findUniqueOrThrow({ where: { id: e.standup2.id } })).toMatchObject({ status: "active", text: STANDUP_2 });
    await h.core.command(admin, "rollback", [archiveRev.id]);
    const web = await db().skill.findUniqueOrThrow({ where: { id: s.web.id } });
    expect(web.status).toBe("active");
    expect(Buffer.from(web.content).equals(Buffer.from(WEB))).toBe(true);
    // The stale mark and the flag too.
    await h.core.command(admin, "rollback", [(await revOf(s.toStale.id, "stale")).id]);
    expect((await db().skill.findUniqueOrThrow({ where: { id: s.toStale.id } })).status).toBe("active");
    await h.core.command(admin, "rollback", [(await revOf(e.fridayFact.id, "flag")).id]);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: e.fridayFact.id } })).flag).toBeNull();

    // A rollback can be rolled back: the merged text is back.
    await h.core.command(admin, "rollback", [undoRev.id]);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: e.standup1.id } })).text).toBe("Daily standup: 9:30 in the Zoom room; bring blockers");

    // A restored skill gets a full period: the next run, a day later, leaves it (and the restored one) alone.
    clock = at(RUN + 1);
    model(() => skillsPlan([]));
    await run();
    expect((await db().skill.findUniqueOrThrow({ where: { id: s.toStale.id } })).status).toBe("active");
  });

  it("the owner may roll back their private item, another non-admin may not (nor a shared one)", async () => {
    const alice = await place(getDb(), opts("UALICE", true));
    const ws = alice.scope.workspaceId;
    const mine = { scope: "user", ownerId: alice.scope.personId };
    const web = await mkSkill(ws, "deploy-web", { ...mine, content: WEB });
    await mkSkill(ws, "deploy-api", { ...mine, content: API });
    const team = await mkSkill(ws, "renew-certs", { lastUsedAt: ago(40) });
    model((p) => {
      expect(p).toContain("one person's private skills");
      return skillsPlan([merge("deploy-service", ["deploy-web", "deploy-api"], UMBRELLA)]);
    });
    await run();
    const umbrella = await db().skill.findFirstOrThrow({ where: { workspaceId: ws, name: "deploy-service" } });
    expect(umbrella).toMatchObject(mine);
    const rev = await db().revision.findFirstOrThrow({ where: { entityId: web.id, action: "archive" } });
    const teamRev = await db().revision.findFirstOrThrow({ where: { entityId: team.id, action: "archive" } });

    const asBob = inboundFor(opts("UBOB", true));
    expect((await h.core.command(asBob, "rollback", [rev.id])).text).toContain("Only that item's owner or a cairn admin");
    expect((await h.core.command(asBob, "history", ["deploy-web"])).text).toContain("No skill, entry or curator run");
    expect((await h.core.command(asBob, "rollback", [teamRev.id])).text).toContain("Only cairn admins");
    expect((await h.core.command(inboundFor(opts("UALICE", true)), "rollback", [teamRev.id])).text).toContain("Only cairn admins");
    expect((await db().skill.findUniqueOrThrow({ where: { id: web.id } })).status).toBe("archived");
    expect((await db().skill.findUniqueOrThrow({ where: { id: team.id } })).status).toBe("archived");

    const asAlice = inboundFor(opts("UALICE", true));
    expect(expandIds((await h.core.command(asAlice, "history", ["deploy-web"])).text, [rev.id])).toContain(rev.id);
    expect((await h.core.command(asAlice, "rollback", [rev.id])).text).toContain("Rolled back");
    expect((await db().skill.findUniqueOrThrow({ where: { id: web.id } })).status).toBe("active");
    expect(await db().revision.findFirst({ where: { entityId: web.id, action: "restore", actorId: alice.scope.personId } })).not.toBeNull();
  });

  it("a stale skill stays usable and marked, and is active again once used", async () => {
    const { scope } = await place(getDb(), opts("UALICE"));
    const ws = scope.workspaceId;
    const stale = await mkSkill(ws, "rotate-keys", { lastUsedAt: ago(20) });
    const gone = await mkSkill(ws, "renew-certs", { lastUsedAt: ago(40) });
    await run();
    expect((await db().skill.findUniqueOrThrow({ where: { id: stale.id } })).status).toBe("stale");
    expect((await db().skill.findUniqueOrThrow({ where: { id: gone.id } })).status).toBe("archived");
    const index = await h.core.skills.index(scope);
    expect(index.find((x) => x.name === "rotate-keys")).toMatchObject({ status: "stale" });
    expect(index.find((x) => x.name === "renew-certs")).toBeUndefined();

    // A turn reads it: its prompt marks it stale, and reading it makes it active at once.
    h.fake.enqueue({ toolUse: [{ name: "skill_view", input: { name: "rotate-keys" } }] }, { text: "Done." });
    const r = await h.core.handle(inboundFor(opts("UALICE"), "please rotate the keys"));
    expect(r.kind).toBe("reply");
    expect(systemText(h.fake.requests[0]!)).toContain("- rotate-keys (stale: unused lately):");
    expect((await db().skill.findUniqueOrThrow({ where: { id: stale.id } })).status).toBe("active");
    expect(await db().revision.findFirst({ where: { entityId: stale.id, action: "reactivate", reason: "used again" } })).not.toBeNull();

    // Pinning a stale skill makes it active: the curator keeps a pinned skill as it is.
    const pinnedLater = await mkSkill(ws, "pinned-later", { status: "stale", lastUsedAt: ago(20) });
    await h.core.command(inboundFor(opts("UADMIN")), "pin", ["pinned-later"]);
    expect(await db().skill.findUniqueOrThrow({ where: { id: pinnedLater.id } })).toMatchObject({ pinned: true, status: "active" });
  });

  it("archives lessons unused 60 days and keeps the ones shown with a message lately", async () => {
    const { scope } = await place(getDb(), opts("UALICE"));
    const ws = scope.workspaceId;
    const lesson = { scope: "channel", channelKey: "C-ops", kind: "lesson", source: "tool", createdAt: ago(90) };
    const shown = await mkEntry(ws, "Payment releases use the blue-green script", lesson);
    const unseen = await mkEntry(ws, "Expense reports are due on the fifth", lesson);
    // Shown with a message 10 days before the run.
    clock = at(RUN - 10);
    h.fake.enqueue({ text: "Use the blue-green script." });
    await h.core.handle(inboundFor(opts("UALICE"), "how do payment releases work with the blue-green script?"));
    expect(JSON.stringify(h.fake.requests[0]!.body.messages)).toContain("Payment releases use the blue-green script");
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: shown.id } })).lastUsedAt).toEqual(clock);
    clock = at(RUN);
    await run();
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: shown.id } })).status).toBe("active");
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: unseen.id } })).status).toBe("archived");
    expect(await db().revision.findFirst({ where: { entityId: unseen.id, action: "archive", source: "curator", reason: "not shown for 90 days" } })).not.toBeNull();
  });

  it("flags contradicting entries for a person and changes neither; a flagged entry is left for the person", async () => {
    const { scope } = await place(getDb(), opts("UALICE"));
    const ws = scope.workspaceId;
    const rule = await mkEntry(ws, FRIDAY_RULE, { kind: "rule", source: "reaction" });
    const fact = await mkEntry(ws, FRIDAY_FACT);
    model(
      () => skillsPlan([]),
      (p) => JSON.stringify({ merges: [], contradictions: [{ pair: pairOf(p, label(p, FRIDAY_RULE), label(p, FRIDAY_FACT)), note: "Fridays: allowed or forbidden?" }] }),
    );
    const before = await rows(ws);
    await run();
    const after = await rows(ws);
    expect(after.entries.get(rule.id)).toEqual(before.entries.get(rule.id));
    expect(after.entries.get(fact.id)).toEqual({ ...before.entries.get(fact.id), updatedAt: expect.any(Date), flag: `contradicts ${rule.id}: Fridays: allowed or forbidden?` });
    expect((await h.core.command(inboundFor(opts("UALICE")), "history", [fact.id])).text).toContain("Flagged for a person: contradicts");
    // The next run asks nothing about it: the flag waits for a person.
    h.fake.reset();
    await run();
    expect(curatorRequests()).toHaveLength(0);
    expect((await db().memoryEntry.findUniqueOrThrow({ where: { id: fact.id } })).text).toBe(FRIDAY_FACT);
  });
});
