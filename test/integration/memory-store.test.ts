/**
 * MemoryStore against a real database, on SQLite and PostgreSQL. Every test works in its own
 * workspace (unique external id), so tests do not see each other's rows.
 */
import { describe, expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import type { Provenance } from "../../src/db/revisions.ts";
import { budgetHeader, LESSON_LIMITS, MemoryError, MemoryStore, type MemoryBudgets, type MemoryOp } from "../../src/memory/store.ts";
import { forEachDatabase, place, uniqueId, type Database } from "../support/db.ts";

const BUDGETS: MemoryBudgets = { user: 1375, channel: 1500, team: 2200 };

function prov(scope: Scope, sourceMessageId: number | null = 7, source: Provenance["source"] = "tool"): Provenance {
  return { source, actorId: scope.personId, sourceMessageId };
}

/** Catches the MemoryError an operation throws (failing the test if it resolves or throws something else). */
async function memoryError(p: Promise<unknown>): Promise<MemoryError> {
  const err: unknown = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MemoryError);
  return err as MemoryError;
}

describe("budgetHeader", () => {
  it("formats percent and thousands the way the prompt shows them", () => {
    expect(budgetHeader(1474, 2200)).toBe("[67% - 1,474/2,200 chars]");
    expect(budgetHeader(0, 2200)).toBe("[0% - 0/2,200 chars]");
  });
});

forEachDatabase("MemoryStore", (getDb) => {
  const store = (budgets: MemoryBudgets = BUDGETS) => new MemoryStore(getDb().prisma, budgets);

  async function channelScope(db: Database, opts: { workspace?: string; user?: string; channel?: string } = {}) {
    const workspace = opts.workspace ?? uniqueId("ws");
    return (await place(db, { workspace, user: opts.user ?? "U1", channel: opts.channel ?? "C1", isDm: false })).scope;
  }

  async function counts(workspaceId: string) {
    const db = getDb();
    const [entries, active, revisions] = await Promise.all([
      db.prisma.memoryEntry.count({ where: { workspaceId } }),
      db.prisma.memoryEntry.count({ where: { workspaceId, status: "active" } }),
      db.prisma.revision.count({ where: { workspaceId, entityType: "memory" } }),
    ]);
    return { entries, active, revisions };
  }

  const texts = async (scope: Scope, target: MemoryOp["target"], s = store()) => (await s.entries(scope, target)).map((e) => e.text);

  it("adds, replaces and removes entries", async () => {
    const scope = await channelScope(getDb());
    const s = store();

    const added = await s.apply(
      scope,
      [
        { action: "add", target: "team", content: "Deploys happen on Tuesdays" },
        { action: "add", target: "team", content: "  The on-call rota lives in PagerDuty  " },
      ],
      prov(scope),
    );
    expect(added.changed).toBe(2);
    expect(added.lines).toEqual([
      'added to team: "Deploys happen on Tuesdays"',
      'added to team: "The on-call rota lives in PagerDuty"',
    ]);
    expect(added.usage).toEqual([{ target: "team", used: 26 + 35, limit: 2200, count: 2, lessons: 0 }]);
    expect(await texts(scope, "team")).toEqual(["Deploys happen on Tuesdays", "The on-call rota lives in PagerDuty"]);

    const replaced = await s.apply(scope, [{ action: "replace", target: "team", old_text: "tuesdays", content: "Deploys happen on Wednesdays" }], prov(scope));
    expect(replaced.changed).toBe(1);
    expect(replaced.lines).toEqual(['replaced in team: "Deploys happen on Tuesdays" -> "Deploys happen on Wednesdays"']);
    expect(await texts(scope, "team")).toEqual(["Deploys happen on Wednesdays", "The on-call rota lives in PagerDuty"]);

    const removed = await s.apply(scope, [{ action: "remove", target: "team", old_text: "PagerDuty" }], prov(scope));
    expect(removed.changed).toBe(1);
    expect(removed.lines).toEqual(['removed from team: "The on-call rota lives in PagerDuty"']);
    expect(await texts(scope, "team")).toEqual(["Deploys happen on Wednesdays"]);

    // Remove archives: the row stays, out of every read.
    const archived = await getDb().prisma.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, status: "archived" } });
    expect(archived.map((e) => e.text)).toEqual(["The on-call rota lives in PagerDuty"]);
    // The replaced text is kept too, superseded by the entry that holds the new one.
    const superseded = await getDb().prisma.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId, status: "superseded" } });
    expect(superseded.map((e) => e.text)).toEqual(["Deploys happen on Tuesdays"]);
    expect(await counts(scope.workspaceId)).toEqual({ entries: 3, active: 1, revisions: 4 });
  });

  it("stores user and channel entries under the person and the channel", async () => {
    const scope = await channelScope(getDb());
    await store().apply(
      scope,
      [
        { action: "add", target: "user", content: "Prefers answers in French" },
        { action: "add", target: "channel", content: "This channel is about billing" },
      ],
      prov(scope),
    );
    const rows = await getDb().prisma.memoryEntry.findMany({ where: { workspaceId: scope.workspaceId }, orderBy: { scope: "asc" } });
    expect(rows.map((r) => ({ scope: r.scope, ownerId: r.ownerId, channelKey: r.channelKey }))).toEqual([
      { scope: "channel", ownerId: null, channelKey: "C1" },
      { scope: "user", ownerId: scope.personId, channelKey: null },
    ]);
  });

  it("applies a batch all-or-nothing: a failing second operation leaves the first unwritten", async () => {
    const scope = await channelScope(getDb());
    const s = store();
    await s.apply(scope, [{ action: "add", target: "team", content: "Standup is at 9:30" }], prov(scope));
    const before = await counts(scope.workspaceId);
    expect(before).toEqual({ entries: 1, active: 1, revisions: 1 });

    const err = await memoryError(
      s.apply(
        scope,
        [
          { action: "add", target: "team", content: "Retro is every other Friday" },
          { action: "replace", target: "team", old_text: "no such entry", content: "whatever" },
        ],
        prov(scope),
      ),
    );
    expect(err.message).toContain("Operation 2 (replace team)");
    expect(err.message).toContain("Nothing was saved");
    expect(await counts(scope.workspaceId)).toEqual(before);
    expect(await texts(scope, "team")).toEqual(["Standup is at 9:30"]);

    // Same with the failure in a different target than the first operation.
    await memoryError(
      s.apply(
        scope,
        [
          { action: "add", target: "user", content: "Works from Lisbon" },
          { action: "remove", target: "channel", old_text: "missing" },
        ],
        prov(scope),
      ),
    );
    expect(await counts(scope.workspaceId)).toEqual(before);
    expect(await texts(scope, "user")).toEqual([]);
  });

  it("skips an exact or near-exact duplicate and writes nothing for it", async () => {
    const scope = await channelScope(getDb());
    const s = store();
    await s.apply(scope, [{ action: "add", target: "user", content: "Prefers short answers" }], prov(scope));
    const out = await s.apply(scope, [{ action: "add", target: "user", content: "prefers   SHORT answers." }], prov(scope));
    expect(out.changed).toBe(0);
    expect(out.lines).toEqual(['skipped duplicate in user: "prefers   SHORT answers." is already stored']);
    expect(await counts(scope.workspaceId)).toEqual({ entries: 1, active: 1, revisions: 1 });

    // Two adds of the same text in one batch store it once.
    const batch = await s.apply(
      scope,
      [
        { action: "add", target: "user", content: "Uses vim" },
        { action: "add", target: "user", content: "uses vim" },
      ],
      prov(scope),
    );
    expect(batch.changed).toBe(1);
    expect(await texts(scope, "user")).toEqual(["Prefers short answers", "Uses vim"]);
  });

  it("refuses a replace matching no entry, listing the entries and saying what to do", async () => {
    const scope = await channelScope(getDb());
    const s = store();
    await s.apply(
      scope,
      [
        { action: "add", target: "team", content: "Staging is at staging.example.com" },
        { action: "add", target: "team", content: "Prod deploys need two approvals" },
      ],
      prov(scope),
    );
    const before = await counts(scope.workspaceId);
    const err = await memoryError(s.apply(scope, [{ action: "replace", target: "team", old_text: "kubernetes", content: "x" }], prov(scope)));
    expect(err.message).toContain('no team entry contains "kubernetes"');
    expect(err.message).toContain("  - Staging is at staging.example.com");
    expect(err.message).toContain("  - Prod deploys need two approvals");
    expect(err.message).toContain("Retry with old_text copied from one of these");
    expect(err.message).toContain("Nothing was saved");
    expect(await counts(scope.workspaceId)).toEqual(before);
  });

  it("refuses a replace matching two entries, listing both and asking for a longer old_text", async () => {
    const scope = await channelScope(getDb());
    const s = store();
    await s.apply(
      scope,
      [
        { action: "add", target: "team", content: "Deploy window: Tuesday" },
        { action: "add", target: "team", content: "Deploy freeze in December" },
        { action: "add", target: "team", content: "Lunch at noon" },
      ],
      prov(scope),
    );
    const before = await counts(scope.workspaceId);
    const err = await memoryError(s.apply(scope, [{ action: "replace", target: "team", old_text: "deploy", content: "x" }], prov(scope)));
    expect(err.message).toContain('old_text "deploy" matched 2 team entries');
    expect(err.message).toContain("  - Deploy window: Tuesday");
    expect(err.message).toContain("  - Deploy freeze in December");
    expect(err.message).not.toContain("Lunch at noon");
    expect(err.message).toContain("Retry with a longer old_text that appears in only one entry");
    expect(await counts(scope.workspaceId)).toEqual(before);
    expect(await texts(scope, "team")).toEqual(["Deploy window: Tuesday", "Deploy freeze in December", "Lunch at noon"]);
  });

  it("refuses a batch that would go over budget, lists the entries and writes nothing", async () => {
    const scope = await channelScope(getDb());
    const s = store({ user: 100, channel: 100, team: 90 });
    const first = "a".repeat(20) + " team fact one";
    const second = "b".repeat(20) + " team fact two";
    await s.apply(scope, [{ action: "add", target: "team", content: first }, { action: "add", target: "team", content: second }], prov(scope));
    const before = await counts(scope.workspaceId);

    const err = await memoryError(s.apply(scope, [{ action: "add", target: "team", content: "one more fact that does not fit" }], prov(scope)));
    expect(err.message).toContain("team memory would hold 99/90 chars, over its budget by 9");
    expect(err.message).toContain("Nothing was saved");
    expect(err.message).toContain("Consolidate first");
    expect(err.message).toContain(`  - ${first}`);
    expect(err.message).toContain(`  - ${second}`);
    expect(await counts(scope.workspaceId)).toEqual(before);

    // Consolidating in one batch (remove + add) that ends within budget is accepted.
    const ok = await s.apply(
      scope,
      [
        { action: "remove", target: "team", old_text: "fact one" },
        { action: "add", target: "team", content: "one more fact" },
      ],
      prov(scope),
    );
    expect(ok.usage).toEqual([{ target: "team", used: second.length + 13, limit: 90, count: 2, lessons: 0 }]);
  });

  it("keeps lessons out of the fact budget and the fact blocks, under their own cap and length", async () => {
    const scope = await channelScope(getDb());
    const s = store({ user: 100, channel: 40, team: 100 });
    const lessons = Array.from({ length: 5 }, (_, i) => ({ action: "add", target: "channel", kind: "lesson", content: `Lesson ${i}: ${"x".repeat(60)}` }) as const);
    const out = await s.apply(scope, [...lessons, { action: "add", target: "channel", content: "Standup at 10" }], prov(scope));
    expect(out.usage).toEqual([{ target: "channel", used: 13, limit: 40, count: 1, lessons: 5 }]);
    expect(out.lines[0]).toBe(`added lesson to channel: "Lesson 0: ${"x".repeat(60)}"`);
    const blocks = await s.blocks(scope);
    expect(blocks.find((b) => b.target === "channel")!.entries.map((e) => e.text)).toEqual(["Standup at 10"]);
    expect((await s.visible(scope, "lesson")).map((e) => e.text)).toEqual(lessons.map((l) => l.content));

    const before = await counts(scope.workspaceId);
    const long = await memoryError(s.apply(scope, [{ action: "add", target: "channel", kind: "lesson", content: "y".repeat(LESSON_LIMITS.chars + 1) }], prov(scope)));
    expect(long.message).toContain(`a lesson holds at most ${LESSON_LIMITS.chars} chars`);
    const many = Array.from({ length: LESSON_LIMITS.perTarget - 4 }, (_, i) => ({ action: "add", target: "channel", kind: "lesson", content: `Rule ${i}` }) as const);
    const capped = await memoryError(s.apply(scope, many, prov(scope)));
    expect(capped.message).toContain(`would hold ${LESSON_LIMITS.perTarget + 1} lessons, over its cap of ${LESSON_LIMITS.perTarget}`);
    expect(capped.message).toContain(`  - (lesson) Lesson 0: ${"x".repeat(60)}`);
    expect(await counts(scope.workspaceId)).toEqual(before);
    // A lesson is replaced and removed like any entry.
    await s.apply(scope, [{ action: "replace", target: "channel", old_text: "Lesson 1", content: "Lesson 1: shorter" }, { action: "remove", target: "channel", old_text: "Lesson 2" }], prov(scope));
    expect((await s.visible(scope, "lesson")).map((e) => e.text)).toEqual([lessons[0]!.content, "Lesson 1: shorter", lessons[3]!.content, lessons[4]!.content]);
  });

  it("refuses a channel target in a DM and writes nothing", async () => {
    const db = getDb();
    const { scope } = await place(db, { workspace: uniqueId("ws"), user: "U1", channel: "D1", isDm: true });
    const err = await memoryError(
      store().apply(
        scope,
        [
          { action: "add", target: "user", content: "Likes tea" },
          { action: "add", target: "channel", content: "Channel fact" },
        ],
        prov(scope),
      ),
    );
    expect(err.message).toContain("direct message");
    expect(err.message).toContain("Use target 'user'");
    expect(await counts(scope.workspaceId)).toEqual({ entries: 0, active: 0, revisions: 0 });
  });

  it("writes a revision with provenance for every change", async () => {
    const scope = await channelScope(getDb());
    const s = store();
    await s.apply(scope, [{ action: "add", target: "team", content: "Version one" }], prov(scope, 101));
    await s.apply(scope, [{ action: "replace", target: "team", old_text: "one", content: "Version two" }], { source: "review", actorId: null, sourceMessageId: 102, reason: "consolidated" });
    await s.apply(scope, [{ action: "remove", target: "team", old_text: "two" }], prov(scope, 103, "reaction"));
    // A skipped duplicate is not a change and leaves no revision.
    await s.apply(scope, [{ action: "add", target: "user", content: "Fact" }], prov(scope, 104));
    await s.apply(scope, [{ action: "add", target: "user", content: "fact" }], prov(scope, 105));

    const entry = await getDb().prisma.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, scope: "team" } });
    expect(entry).toMatchObject({ source: "tool", createdById: scope.personId, sourceMessageId: 101, status: "archived", text: "Version two" });

    const revs = await getDb().prisma.revision.findMany({
      where: { workspaceId: scope.workspaceId, entityType: "memory" },
      orderBy: { sourceMessageId: "asc" },
    });
    expect(
      revs.map((r) => ({
        entityId: r.entityId === entry.id ? "team" : "other",
        action: r.action,
        oldText: r.oldText,
        newText: r.newText,
        source: r.source,
        actorId: r.actorId,
        sourceMessageId: r.sourceMessageId,
        reason: r.reason,
      })),
    ).toEqual([
      { entityId: "team", action: "add", oldText: null, newText: "Version one", source: "tool", actorId: scope.personId, sourceMessageId: 101, reason: null },
      { entityId: "team", action: "replace", oldText: "Version one", newText: "Version two", source: "review", actorId: null, sourceMessageId: 102, reason: "consolidated" },
      { entityId: "team", action: "remove", oldText: "Version two", newText: null, source: "reaction", actorId: scope.personId, sourceMessageId: 103, reason: null },
      { entityId: "other", action: "add", oldText: null, newText: "Fact", source: "tool", actorId: scope.personId, sourceMessageId: 104, reason: null },
    ]);
  });

  describe("scope rules", () => {
    it("keeps a person's user entries from another person of the same workspace", async () => {
      const db = getDb();
      const workspace = uniqueId("ws");
      const a = await channelScope(db, { workspace, user: "UA" });
      const b = await channelScope(db, { workspace, user: "UB" });
      expect(b.workspaceId).toBe(a.workspaceId);
      const s = store();
      await s.apply(a, [{ action: "add", target: "user", content: "A is allergic to peanuts" }], prov(a));
      expect(await texts(a, "user")).toEqual(["A is allergic to peanuts"]);
      expect(await texts(b, "user")).toEqual([]);
      // Nor can B reach A's entry by substring.
      await memoryError(s.apply(b, [{ action: "remove", target: "user", old_text: "peanuts" }], prov(b)));
      expect(await texts(a, "user")).toEqual(["A is allergic to peanuts"]);
      // A's profile follows A into a DM.
      const aDm = (await place(db, { workspace, user: "UA", channel: "D-A", isDm: true })).scope;
      expect(await texts(aDm, "user")).toEqual(["A is allergic to peanuts"]);
    });

    it("keeps channel entries of one channel out of another", async () => {
      const db = getDb();
      const workspace = uniqueId("ws");
      const c1 = await channelScope(db, { workspace, channel: "C1" });
      const c2 = await channelScope(db, { workspace, channel: "C2" });
      const c1Thread = (await place(db, { workspace, user: "U2", channel: "C1", isDm: false, thread: "1700000000.000100" })).scope;
      await store().apply(c1, [{ action: "add", target: "channel", content: "C1 is for incidents" }], prov(c1));
      expect(await texts(c1, "channel")).toEqual(["C1 is for incidents"]);
      expect(await texts(c2, "channel")).toEqual([]);
      // A thread of C1 (another conversation, another person) shares C1's channel memory.
      expect(c1Thread.conversationId).not.toBe(c1.conversationId);
      expect(await texts(c1Thread, "channel")).toEqual(["C1 is for incidents"]);
    });

    it("keeps team entries inside their workspace", async () => {
      const db = getDb();
      const w1 = await channelScope(db, { user: "U1", channel: "C1" });
      const w2 = await channelScope(db, { user: "U1", channel: "C1" });
      expect(w2.workspaceId).not.toBe(w1.workspaceId);
      await store().apply(w1, [{ action: "add", target: "team", content: "W1 ships on Fridays" }], prov(w1));
      expect(await texts(w1, "team")).toEqual(["W1 ships on Fridays"]);
      expect(await texts(w2, "team")).toEqual([]);
      expect(await texts(w2, "channel")).toEqual([]);
      expect(await texts(w2, "user")).toEqual([]);
    });

    it("shows no channel block in a DM, and team/channel/user blocks in a channel", async () => {
      const db = getDb();
      const workspace = uniqueId("ws");
      const ch = await channelScope(db, { workspace, user: "U1", channel: "C1" });
      const s = store();
      await s.apply(
        ch,
        [
          { action: "add", target: "team", content: "Team fact" },
          { action: "add", target: "channel", content: "Channel fact" },
          { action: "add", target: "user", content: "User fact" },
        ],
        prov(ch),
      );
      const chBlocks = await s.blocks(ch);
      expect(chBlocks.map((b) => [b.target, b.entries.map((e) => e.text), b.used, b.limit])).toEqual([
        ["team", ["Team fact"], 9, 2200],
        ["channel", ["Channel fact"], 12, 1500],
        ["user", ["User fact"], 9, 1375],
      ]);

      const dm = (await place(db, { workspace, user: "U1", channel: "D1", isDm: true })).scope;
      const dmBlocks = await s.blocks(dm);
      expect(dmBlocks.map((b) => [b.target, b.entries.map((e) => e.text)])).toEqual([
        ["team", ["Team fact"]],
        ["user", ["User fact"]],
      ]);
      // A DM whose channel id happens to equal a channel key still sees no channel memory.
      const oddDm = (await place(db, { workspace, user: "U3", channel: "C1", isDm: true })).scope;
      expect(await texts(oddDm, "channel")).toEqual([]);
    });
  });
});
