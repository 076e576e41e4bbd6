/**
 * The skills index read below Prisma (skills/index-store.ts), as a new session's first turn reads
 * it: the same rows, with every column as Prisma reads it, as the Prisma read, for places in and out
 * of the workspace, on both databases. Skills of every scope and status, bundled and marked ones
 * among them.
 */
import { expect, it } from "vitest";
import { SkillStore } from "../../src/skills/store.ts";
import { checkedMark } from "../../src/safety/scanner.ts";
import type { Scope } from "../../src/ground/types.ts";
import { forEachDatabase, place, uniqueId } from "../support/db.ts";

const md = (name: string, description: string) => `---\nname: ${name}\ndescription: ${description}\n---\n# Steps\n1. Check.\n`;

forEachDatabase("skills index read below Prisma", (getDb) => {
  it("finds what the Prisma read finds, every column alike", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const at = async (user: string, channel: string, isDm = false): Promise<Scope> => (await place(db, { workspace: ws, user, channel, isDm })).scope;
    const alice = await at("UA", "C1");
    const bobDm = await at("UB", "DB", true);
    const elsewhere = (await place(db, { workspace: uniqueId("ws"), user: "UA", channel: "C1", isDm: false })).scope;
    const t0 = Date.UTC(2026, 4, 1, 9);
    let n = 0;
    const add = (workspaceId: string | null, data: Record<string, unknown>) => {
      const name = `skill-${uniqueId("s").toLowerCase()}-${n}`;
      const description = `Use when doing task ${n}`;
      return db.prisma.skill.create({
        data: { workspaceId, name, description, content: md(name, description), contentHash: `h${n}`, source: "tool", createdAt: new Date(t0 + n++ * 1000), ...data } as never,
      });
    };
    await add(alice.workspaceId, { scope: "team", createdById: alice.personId, verifiedAt: new Date(t0 + 5), descriptionChecked: checkedMark("Use when doing task 0") });
    await add(alice.workspaceId, { scope: "channel", channelKey: alice.channelKey, status: "stale" });
    await add(alice.workspaceId, { scope: "user", ownerId: alice.personId });
    await add(alice.workspaceId, { scope: "user", ownerId: bobDm.personId, status: "held" });
    await add(alice.workspaceId, { scope: "team", status: "archived" });
    await add(null, { scope: "team", bundled: true, source: "import", name: `zz-bundled-${uniqueId("b").toLowerCase()}` });
    await add(elsewhere.workspaceId, { scope: "team" });

    const viaPrisma = new SkillStore(db.prisma);
    const direct = new SkillStore(db.prisma, db);
    const key = (s: { name: string; workspaceId: string | null }) => `${s.name}|${s.workspaceId ?? ""}`;
    const sorted = <T extends { name: string; workspaceId: string | null }>(xs: T[]) => [...xs].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    let compared = 0;
    for (const scope of [alice, bobDm, elsewhere]) {
      const want = await viaPrisma.index(scope);
      const got = await direct.index(scope);
      expect(sorted(got)).toEqual(sorted(want));
      // Ordered by name, as the prompt lists them.
      expect(got.map((s) => s.name)).toEqual([...got.map((s) => s.name)].sort());
      compared += want.length;
    }
    const mine = (await direct.index(alice)).filter((s) => s.workspaceId === alice.workspaceId);
    // Alice in C1: the team skill, C1's (stale is live) and her own; not Bob's held one, not the archived one.
    expect(mine.map((s) => s.status).sort()).toEqual(["active", "active", "stale"]);
    expect(mine.find((s) => s.scope === "team")).toMatchObject({ bundled: false, descriptionChecked: checkedMark("Use when doing task 0"), verifiedAt: new Date(t0 + 5), createdAt: new Date(t0) });
    expect((await direct.index(elsewhere)).some((s) => s.workspaceId === alice.workspaceId)).toBe(false);
    expect((await direct.index(elsewhere)).some((s) => s.bundled)).toBe(true);
    expect(compared).toBeGreaterThan(5);
  });
});
