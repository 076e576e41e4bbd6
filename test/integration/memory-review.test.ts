/**
 * MemoryStore's `review` option and confirmation of pending entries, against a real database (SQLite
 * and PostgreSQL): a review may not change team memory or what a person wrote on its own; such
 * changes wait, as pending entries, for the person whose conversation it was.
 */
import { expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import type { Provenance } from "../../src/db/revisions.ts";
import { MemoryError, MemoryStore, type MemoryBudgets } from "../../src/memory/store.ts";
import { forEachDatabase, place, uniqueId } from "../support/db.ts";

const BUDGETS: MemoryBudgets = { user: 100, channel: 1500, team: 2200 };
const REVIEW = { review: true };

const prov = (scope: Scope, source: Provenance["source"] = "tool"): Provenance => ({ source, actorId: scope.personId, sourceMessageId: 11, reason: source === "review" ? "memory review of reply 12" : null });

forEachDatabase("MemoryStore: a review's writes", (getDb) => {
  const setup = async () => {
    const db = getDb();
    const scope = (await place(db, { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false })).scope;
    return { db: db.prisma, scope, store: new MemoryStore(db.prisma, BUDGETS) };
  };

  it("holds a review's team add for the person, while a turn's team add in a channel is active at once", async () => {
    const { db, scope, store } = await setup();
    await store.apply(scope, [{ action: "add", target: "team", content: "Standup is at 9:30" }], prov(scope));
    const out = await store.apply(scope, [{ action: "add", target: "team", content: "Deploys happen on Tuesdays" }], prov(scope, "review"), REVIEW);
    expect(out.writes).toEqual([expect.objectContaining({ action: "add", target: "team", pending: true, text: "Deploys happen on Tuesdays" })]);
    expect(out.lines.at(-1)).toMatch(/is held as PENDING \(id \w+\): a review changes team memory/);
    expect((await store.entries(scope, "team")).map((e) => e.text)).toEqual(["Standup is at 9:30"]);
    expect(await db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "Deploys happen on Tuesdays" } })).toMatchObject({
      status: "pending",
      source: "review",
      createdById: scope.personId,
      sourceMessageId: 11,
    });
  });

  it("turns a review's replace or remove of a person's entry into a pending change, the entry left as it is", async () => {
    const { db, scope, store } = await setup();
    await store.apply(scope, [{ action: "add", target: "user", content: "Prefers tabs" }, { action: "add", target: "channel", content: "Alerts go to #ops" }], prov(scope));
    const out = await store.apply(
      scope,
      [
        { action: "replace", target: "user", old_text: "tabs", content: "Prefers spaces" },
        { action: "remove", target: "channel", old_text: "#ops" },
      ],
      prov(scope, "review"),
      REVIEW,
    );
    expect(out.writes.map((w) => [w.action, w.target, w.pending, w.text])).toEqual([
      ["replace", "user", true, "Prefers spaces"],
      ["remove", "channel", true, ""],
    ]);
    expect((await store.entries(scope, "user")).map((e) => e.text)).toEqual(["Prefers tabs"]);
    expect((await store.entries(scope, "channel")).map((e) => e.text)).toEqual(["Alerts go to #ops"]);
    const [tabs, ops] = await Promise.all([
      db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "Prefers tabs" } }),
      db.memoryEntry.findFirstOrThrow({ where: { workspaceId: scope.workspaceId, text: "Alerts go to #ops" } }),
    ]);
    const pending = await store.pendingBy(scope);
    expect(pending.map((e) => [e.replacesId, e.text, e.scope])).toEqual([
      [tabs.id, "Prefers spaces", "user"],
      [ops.id, "", "channel"],
    ]);

    const confirmed = await store.confirm(scope, pending.map((e) => e.id), prov(scope));
    expect(confirmed.map((e) => e.id)).toEqual(pending.map((e) => e.id));
    expect((await store.entries(scope, "user")).map((e) => e.text)).toEqual(["Prefers spaces"]);
    expect(await store.entries(scope, "channel")).toEqual([]);
    // Replaced: its text kept, closed and superseded by the confirmed entry (memory/validity.ts).
    const confirmedTabs = confirmed.find((e) => e.replacesId === tabs.id)!;
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: tabs.id } })).toMatchObject({ status: "superseded", supersededById: confirmedTabs.id, text: "Prefers tabs" });
    const revisions = await db.revision.findMany({ where: { entityId: { in: [tabs.id, ops.id] }, action: { in: ["replace", "remove"] } } });
    expect(revisions.map((r) => [r.entityId, r.action, r.newText]).sort()).toEqual([[ops.id, "remove", null], [tabs.id, "replace", "Prefers spaces"]].sort());
    expect(await store.pendingBy(scope)).toEqual([]);
  });

  it("lets a review change its own entries directly, except in team memory", async () => {
    const { scope, store } = await setup();
    await store.apply(scope, [{ action: "add", target: "user", content: "Works on billing" }], prov(scope, "review"), REVIEW);
    const out = await store.apply(scope, [{ action: "replace", target: "user", old_text: "billing", content: "Works on payments" }], prov(scope, "review"), REVIEW);
    expect(out.writes).toEqual([expect.objectContaining({ action: "replace", pending: false })]);
    expect((await store.entries(scope, "user")).map((e) => e.text)).toEqual(["Works on payments"]);

    await store.apply(scope, [{ action: "add", target: "team", content: "Payments is on-call" }], prov(scope, "review"), REVIEW);
    await store.confirm(scope, (await store.pendingBy(scope)).map((e) => e.id), prov(scope));
    const again = await store.apply(scope, [{ action: "remove", target: "team", old_text: "on-call" }], prov(scope, "review"), REVIEW);
    expect(again.writes).toEqual([expect.objectContaining({ action: "remove", pending: true })]);
    expect((await store.entries(scope, "team")).map((e) => e.text)).toEqual(["Payments is on-call"]);
  });

  it("drops a pending change whose entry changed since, and keeps a confirmation within the budget", async () => {
    const { db, scope, store } = await setup();
    await store.apply(scope, [{ action: "add", target: "user", content: "Likes short answers" }], prov(scope));
    await store.apply(scope, [{ action: "replace", target: "user", old_text: "short", content: "Likes very short answers" }], prov(scope, "review"), REVIEW);
    await store.apply(scope, [{ action: "remove", target: "user", old_text: "short" }], prov(scope));
    const [stale] = await store.pendingBy(scope);
    expect(await store.confirm(scope, [stale!.id], prov(scope))).toEqual([]);
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: stale!.id } })).toMatchObject({ status: "archived" });
    expect(await store.entries(scope, "user")).toEqual([]);

    await store.apply(scope, [{ action: "add", target: "user", content: "x".repeat(60) }], prov(scope));
    await store.apply(scope, [{ action: "replace", target: "user", old_text: "xxx", content: "y".repeat(120) }], prov(scope, "review"), REVIEW);
    const [big] = await store.pendingBy(scope);
    await expect(store.confirm(scope, [big!.id], prov(scope))).rejects.toBeInstanceOf(MemoryError);
    expect((await store.entries(scope, "user")).map((e) => e.text)).toEqual(["x".repeat(60)]);
  });

  it("never lets a person confirm a pending team rule alone: rules wait for others' approval", async () => {
    const { db, scope, store } = await setup();
    const rule = await db.memoryEntry.create({
      data: { workspaceId: scope.workspaceId, scope: "team", kind: "rule", status: "pending", text: "ALWAYS tag releases", source: "reaction", createdById: scope.personId },
    });
    expect(await store.pendingBy(scope)).toEqual([]);
    expect(await store.confirm(scope, [rule.id], prov(scope))).toEqual([]);
    expect(await db.memoryEntry.findUniqueOrThrow({ where: { id: rule.id } })).toMatchObject({ status: "pending" });
  });
});
