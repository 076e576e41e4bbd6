/**
 * SkillStore against a real database, on SQLite and PostgreSQL. Bundled skills are imported once per
 * suite from the real `skills/` folder; every other test works in its own workspace.
 */
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import type { Provenance } from "../../src/db/revisions.ts";
import { loadBundledSkills, type BundledSkill } from "../../src/skills/bundled.ts";
import { SkillError, SkillStore } from "../../src/skills/store.ts";
import { checkedMark } from "../../src/safety/scanner.ts";
import { forEachDatabase, place, uniqueId, type Database } from "../support/db.ts";

const SKILLS_DIR = fileURLToPath(new URL("../../skills", import.meta.url));

function skillMd(name: string, body = "# Steps\n\n1. Check the dashboard.\n2. Roll back the release.\n3. Post in #ops.", description = `Use when you need ${name}`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
}

function prov(scope: Scope, sourceMessageId: number | null = 11): Provenance {
  return { source: "tool", actorId: scope.personId, sourceMessageId };
}

/** Catches the SkillError an operation throws (failing the test if it resolves or throws something else). */
async function skillError(p: Promise<unknown>): Promise<SkillError> {
  const err: unknown = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SkillError);
  return err as SkillError;
}

forEachDatabase("SkillStore", (getDb) => {
  let bundled: BundledSkill[] = [];
  let firstImport: Awaited<ReturnType<SkillStore["importBundled"]>>;
  const store = () => new SkillStore(getDb().prisma);

  beforeAll(async () => {
    bundled = await loadBundledSkills(SKILLS_DIR);
    firstImport = await store().importBundled(bundled);
  });

  async function scopeIn(db: Database, workspace: string, user = "U1", channel = "C1", isDm = false): Promise<Scope> {
    return (await place(db, { workspace, user, channel, isDm })).scope;
  }

  const names = async (scope: Scope) => (await store().list(scope)).map((s) => s.name);
  const revisionCount = (where: { entityId?: string; workspaceId?: string | null } = {}) =>
    getDb().prisma.revision.count({ where: { entityType: "skill", ...where } });

  /** A fresh workspace (external id `ws`) holding one team skill `deploy-rollback`. */
  async function withSkill(content = skillMd("deploy-rollback")) {
    const ws = uniqueId("ws");
    const scope = await scopeIn(getDb(), ws);
    const skill = await store().create(scope, content, "team", prov(scope));
    return { ws, scope, skill };
  }

  describe("the cached skills index", () => {
    it("shows each scope exactly the skills the database query shows it, before and after writes", async () => {
      const db = getDb();
      const ws = uniqueId("ws");
      const alice = await scopeIn(db, ws, "UA", "C1");
      const aliceDm = await scopeIn(db, ws, "UA", "D-UA", true);
      const bobOther = await scopeIn(db, ws, "UB", "C2");
      const stranger = await scopeIn(db, uniqueId("ws"), "UA", "C1");
      const s = store();
      await s.create(alice, skillMd("team-deploy"), "team", prov(alice));
      await s.create(alice, skillMd("c1-triage"), "channel", prov(alice));
      await s.create(alice, skillMd("alice-notes"), "user", prov(alice));
      await s.create(bobOther, skillMd("c2-triage"), "channel", prov(bobOther));
      await s.create(bobOther, skillMd("bob-notes"), "user", prov(bobOther));
      const scopes = [alice, aliceDm, bobOther, stranger];
      const indexNames = async (scope: Scope) => (await s.index(scope)).map((e) => e.name);
      const agree = async () => {
        for (const scope of scopes) expect(await indexNames(scope)).toEqual(await names(scope));
      };
      await agree();
      const own = (n: string[]) => n.filter((x) => !bundled.some((b) => b.name === x));
      expect(own(await indexNames(alice))).toEqual(["alice-notes", "c1-triage", "team-deploy"]);
      expect(own(await indexNames(aliceDm))).toEqual(["alice-notes", "team-deploy"]);
      expect(own(await indexNames(bobOther))).toEqual(["bob-notes", "c2-triage", "team-deploy"]);
      expect(own(await indexNames(stranger))).toEqual([]);
      // Writes through the store show in the next index at once.
      await s.archive(alice, "c1-triage", prov(alice));
      await s.create(bobOther, skillMd("team-oncall"), "team", prov(bobOther));
      await agree();
      expect(own(await indexNames(alice))).toEqual(["alice-notes", "team-deploy", "team-oncall"]);
    });
  });

  describe("bundled skills", () => {
    it("imports the real skills/ folder once; a second import changes nothing", async () => {
      const db = getDb();
      expect(bundled.length).toBeGreaterThanOrEqual(3);
      expect(firstImport).toEqual({ created: bundled.length, updated: 0, unchanged: 0, archived: 0 });
      const rows = await db.prisma.skill.findMany({ where: { bundled: true }, include: { files: { orderBy: { path: "asc" } } }, orderBy: { name: "asc" } });
      expect(rows.map((r) => [r.name, r.workspaceId, r.status, r.contentHash, r.content])).toEqual(
        bundled.map((b) => [b.name, null, "active", b.hash, b.content]),
      );
      for (const b of bundled) {
        const row = rows.find((r) => r.name === b.name);
        expect(row?.files.map((f) => [f.path, f.content])).toEqual(b.files.map((f) => [f.path, f.content]));
      }
      const revisionsBefore = await revisionCount({ workspaceId: null });
      expect(revisionsBefore).toBe(bundled.length);
      const updatedAt = rows.map((r) => r.updatedAt.getTime());

      const again = await store().importBundled(await loadBundledSkills(SKILLS_DIR));
      expect(again).toEqual({ created: 0, updated: 0, unchanged: bundled.length, archived: 0 });
      expect(await revisionCount({ workspaceId: null })).toBe(revisionsBefore);
      const after = await db.prisma.skill.findMany({ where: { bundled: true }, orderBy: { name: "asc" } });
      expect(after.map((r) => r.updatedAt.getTime())).toEqual(updatedAt);
      expect(await db.prisma.skillFile.count({ where: { skill: { bundled: true } } })).toBe(bundled.reduce((n, b) => n + b.files.length, 0));
    });

    it("marks the descriptions it imports, and marks on the next start a row imported before marks existed", async () => {
      const db = getDb();
      const rows = await db.prisma.skill.findMany({ where: { bundled: true } });
      for (const r of rows) expect(r.descriptionChecked, r.name).toBe(checkedMark(r.description));
      const [first] = rows;
      await db.prisma.skill.update({ where: { id: first!.id }, data: { descriptionChecked: null } });
      const revisions = await revisionCount({ workspaceId: null });
      expect(await store().importBundled(await loadBundledSkills(SKILLS_DIR))).toEqual({ created: 0, updated: 0, unchanged: bundled.length, archived: 0 });
      expect((await db.prisma.skill.findUniqueOrThrow({ where: { id: first!.id } })).descriptionChecked).toBe(checkedMark(first!.description));
      expect(await revisionCount({ workspaceId: null })).toBe(revisions);
    });

    it("are visible in every workspace, with their support files", async () => {
      const db = getDb();
      const bundledNames = bundled.map((b) => b.name);
      for (const scope of [await scopeIn(db, uniqueId("ws")), await scopeIn(db, uniqueId("ws"), "U9", "D9", true)]) {
        expect(await names(scope)).toEqual(expect.arrayContaining(bundledNames));
        const guide = await store().find(scope, "cairn-guide");
        expect(guide?.bundled).toBe(true);
        expect(guide?.files.map((f) => f.path)).toEqual(bundled.find((b) => b.name === "cairn-guide")?.files.map((f) => f.path));
      }
    });

    it("refuse patch, edit, archive, write_file and remove_file with a read-only message", async () => {
      const scope = await scopeIn(getDb(), uniqueId("ws"));
      const s = store();
      const guide = bundled.find((b) => b.name === "cairn-guide");
      expect(guide).toBeDefined();
      const before = await revisionCount();
      // Thunks, run one at a time: each runs its own transaction.
      const attempts: (() => Promise<unknown>)[] = [
        () => s.patch(scope, "cairn-guide", { old_string: "cairn", new_string: "CAIRN", replace_all: true }, prov(scope)),
        () => s.edit(scope, "cairn-guide", skillMd("cairn-guide"), prov(scope)),
        () => s.archive(scope, "cairn-guide", prov(scope)),
        () => s.writeFile(scope, "cairn-guide", "references/extra.md", "more", prov(scope)),
        () => s.removeFile(scope, "cairn-guide", "references/memory-guidelines.md", prov(scope)),
      ];
      for (const attempt of attempts) {
        const err = await skillError(attempt());
        expect(err.message).toContain("'cairn-guide' is a bundled skill that ships with cairn and is read-only");
        expect(err.message).toContain("create a new skill with another name");
      }
      const row = await getDb().prisma.skill.findFirstOrThrow({ where: { bundled: true, name: "cairn-guide" }, include: { files: true } });
      expect(row.status).toBe("active");
      expect(row.content).toBe(guide?.content);
      expect(row.files.map((f) => f.path).sort()).toEqual(guide?.files.map((f) => f.path));
      expect(await revisionCount()).toBe(before);
      // Creating a workspace skill under a bundled name is refused too.
      const err = await skillError(s.create(scope, skillMd("cairn-guide"), "team", prov(scope)));
      expect(err.message).toContain("a bundled skill has that name");
    });
  });

  describe("visibility", () => {
    it("lists a created team skill in its workspace only", async () => {
      const db = getDb();
      const { ws, scope, skill } = await withSkill();
      expect(skill).toMatchObject({ workspaceId: scope.workspaceId, scope: "team", name: "deploy-rollback", description: "Use when you need deploy-rollback", bundled: false, source: "tool", createdById: scope.personId, sourceMessageId: 11 });
      expect(await names(scope)).toContain("deploy-rollback");
      // Another person, another channel, a DM: same workspace, so visible.
      const sameWs = await scopeIn(db, ws, "U2", "D2", true);
      expect(await names(sameWs)).toContain("deploy-rollback");
      const other = await scopeIn(db, uniqueId("ws"));
      expect(await names(other)).not.toContain("deploy-rollback");
      expect(await store().find(other, "deploy-rollback")).toBeNull();
      // The other workspace may create its own skill of that name.
      const own = await store().create(other, skillMd("deploy-rollback", "# Ours\n\nDifferent steps."), "team", prov(other));
      expect(own.id).not.toBe(skill.id);
      expect((await store().find(scope, "deploy-rollback"))?.id).toBe(skill.id);
      expect((await store().find(other, "deploy-rollback"))?.id).toBe(own.id);
    });

    it("shows a user-scope skill to its owner only", async () => {
      const db = getDb();
      const ws = uniqueId("ws");
      const owner = await scopeIn(db, ws, "UA", "C1");
      const ownerDm = await scopeIn(db, ws, "UA", "D-A", true);
      const colleague = await scopeIn(db, ws, "UB", "C1");
      await store().create(owner, skillMd("my-shortcuts"), "user", prov(owner));
      expect(await names(owner)).toContain("my-shortcuts");
      expect(await names(ownerDm)).toContain("my-shortcuts");
      expect(await names(colleague)).not.toContain("my-shortcuts");
      expect(await store().find(colleague, "my-shortcuts")).toBeNull();
      const err = await skillError(store().patch(colleague, "my-shortcuts", { old_string: "Roll back", new_string: "Ship" }, prov(colleague)));
      expect(err.message).toContain("No active skill named 'my-shortcuts'");
    });

    it("shows a channel-scope skill in that channel only", async () => {
      const db = getDb();
      const ws = uniqueId("ws");
      const c1 = await scopeIn(db, ws, "UA", "C1");
      const c1Other = await scopeIn(db, ws, "UB", "C1");
      const c2 = await scopeIn(db, ws, "UA", "C2");
      const dm = await scopeIn(db, ws, "UA", "D-A", true);
      const created = await store().create(c1, skillMd("billing-triage"), "channel", prov(c1));
      expect(created).toMatchObject({ scope: "channel", channelKey: "C1", ownerId: null });
      expect(await names(c1)).toContain("billing-triage");
      expect(await names(c1Other)).toContain("billing-triage");
      expect(await names(c2)).not.toContain("billing-triage");
      expect(await names(dm)).not.toContain("billing-triage");
      // No channel in a DM: a channel skill cannot be created there.
      const err = await skillError(store().create(dm, skillMd("dm-channel-skill"), "channel", prov(dm)));
      expect(err.message).toContain("direct message");
      expect(await db.prisma.skill.count({ where: { name: "dm-channel-skill" } })).toBe(0);
    });
  });

  describe("create", () => {
    it("refuses a name that reads like one incident", async () => {
      const scope = await scopeIn(getDb(), uniqueId("ws"));
      const err = await skillError(store().create(scope, skillMd("fix-login-2024-05-01"), "team", prov(scope)));
      expect(err.message).toContain("looks like one incident");
      expect(err.message).toContain("Nothing was saved");
      expect(await getDb().prisma.skill.count({ where: { workspaceId: scope.workspaceId } })).toBe(0);
      expect(await revisionCount({ workspaceId: scope.workspaceId })).toBe(0);
    });

    it("refuses a duplicate name, and invalid SKILL.md", async () => {
      const { scope } = await withSkill();
      const err = await skillError(store().create(scope, skillMd("deploy-rollback", "# Other\n\nSteps."), "user", prov(scope)));
      expect(err.message).toContain("Cannot create 'deploy-rollback': a skill with that name exists; change it with 'patch' or 'edit' instead");
      const bad = await skillError(store().create(scope, "no frontmatter here", "team", prov(scope)));
      expect(bad.message).toContain("must start with a YAML frontmatter block");
      expect(await getDb().prisma.skill.count({ where: { workspaceId: scope.workspaceId } })).toBe(1);
      expect(await revisionCount({ workspaceId: scope.workspaceId })).toBe(1);
    });
  });

  describe("patch and edit", () => {
    const body = "# Steps\n\n1. Page the on-call.\n2. Roll back.\n3. Roll back the flags.\n4. Tell #ops.";

    it("patches a unique string, and refuses a repeated one unless replace_all", async () => {
      const { scope, skill } = await withSkill(skillMd("deploy-rollback", body));
      const s = store();

      const patched = await s.patch(scope, "deploy-rollback", { old_string: "Page the on-call", new_string: "Page the primary on-call" }, prov(scope));
      expect(patched.content).toBe(skillMd("deploy-rollback", body.replace("Page the on-call", "Page the primary on-call")));
      expect(patched.contentHash).not.toBe(skill.contentHash);

      const before = patched.content;
      const err = await skillError(s.patch(scope, "deploy-rollback", { old_string: "Roll back", new_string: "Revert" }, prov(scope)));
      expect(err.message).toContain("old_string occurs 2 times in SKILL.md of 'deploy-rollback'");
      expect(err.message).toContain("set replace_all: true");
      expect((await s.find(scope, "deploy-rollback"))?.content).toBe(before);

      const all = await s.patch(scope, "deploy-rollback", { old_string: "Roll back", new_string: "Revert", replace_all: true }, prov(scope));
      expect(all.content).toContain("2. Revert.\n3. Revert the flags.");
      expect(all.content).not.toContain("Roll back");

      const missing = await skillError(s.patch(scope, "deploy-rollback", { old_string: "Not in the skill", new_string: "x" }, prov(scope)));
      expect(missing.message).toContain("old_string was not found in SKILL.md of 'deploy-rollback'");
      expect(missing.message).toContain("Nothing was saved");

      const noSkill = await skillError(s.patch(scope, "no-such-skill", { old_string: "a", new_string: "b" }, prov(scope)));
      expect(noSkill.message).toContain("No active skill named 'no-such-skill'. Available:");
      expect(noSkill.message).toContain("deploy-rollback");

      expect((await s.find(scope, "deploy-rollback"))?.content).toBe(all.content);
      // create + two successful patches.
      expect(await revisionCount({ entityId: skill.id })).toBe(3);
    });

    it("patches a support file by file_path", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      await s.writeFile(scope, "deploy-rollback", "references/flags.md", "Flag: checkout-v2\nFlag: search-v3\n", prov(scope));
      await s.patch(scope, "deploy-rollback", { old_string: "search-v3", new_string: "search-v4", file_path: "references/flags.md" }, prov(scope));
      const found = await s.find(scope, "deploy-rollback");
      expect(found?.files.map((f) => [f.path, f.content])).toEqual([["references/flags.md", "Flag: checkout-v2\nFlag: search-v4\n"]]);
      expect(found?.content).toBe(skill.content);
      const err = await skillError(s.patch(scope, "deploy-rollback", { old_string: "a", new_string: "b", file_path: "references/none.md" }, prov(scope)));
      expect(err.message).toContain("has no file 'references/none.md'");
      const revs = await getDb().prisma.revision.findMany({ where: { entityId: skill.id, action: "patch" } });
      expect(revs.map((r) => [r.path, r.oldText, r.newText])).toEqual([["references/flags.md", "Flag: checkout-v2\nFlag: search-v3\n", "Flag: checkout-v2\nFlag: search-v4\n"]]);
    });

    it("refuses a patch that breaks the frontmatter, saving nothing", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      const before = await revisionCount({ entityId: skill.id });
      const noDescription = await skillError(
        s.patch(scope, "deploy-rollback", { old_string: "description: Use when you need deploy-rollback\n", new_string: "" }, prov(scope)),
      );
      expect(noDescription.message).toContain("missing the required field 'description'");
      expect(noDescription.message).toContain("Nothing was saved");
      const unclosed = await skillError(s.patch(scope, "deploy-rollback", { old_string: "---\n\n#", new_string: "\n#" }, prov(scope)));
      expect(unclosed.message).toContain("frontmatter is never closed");
      const row = await getDb().prisma.skill.findUniqueOrThrow({ where: { id: skill.id } });
      expect(row.content).toBe(skill.content);
      expect(row.contentHash).toBe(skill.contentHash);
      expect(await revisionCount({ entityId: skill.id })).toBe(before);
    });

    it("edits the whole SKILL.md but refuses a rename", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      const renamed = await skillError(s.edit(scope, "deploy-rollback", skillMd("rollback-deploys"), prov(scope)));
      expect(renamed.message).toContain("The frontmatter name must stay 'deploy-rollback' (renaming is not supported); got 'rollback-deploys'");
      expect(await names(scope)).not.toContain("rollback-deploys");
      expect((await s.find(scope, "deploy-rollback"))?.content).toBe(skill.content);

      const next = skillMd("deploy-rollback", "# Steps\n\n1. Revert.", "Use when a deploy must be undone");
      const edited = await s.edit(scope, "deploy-rollback", next, prov(scope));
      expect(edited).toMatchObject({ content: next, description: "Use when a deploy must be undone" });
      // Saving the same text again is not a change.
      await s.edit(scope, "deploy-rollback", next, prov(scope));
      const revs = await getDb().prisma.revision.findMany({ where: { entityId: skill.id, action: "edit" } });
      expect(revs.map((r) => [r.oldText, r.newText, r.actorId, r.source])).toEqual([[skill.content, next, scope.personId, "tool"]]);
    });
  });

  describe("support files", () => {
    it("writes a file under references/ that find() then returns", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      const updated = await s.writeFile(scope, "deploy-rollback", "references//checklist.md", "- [ ] flags off\n", prov(scope));
      expect(updated.contentHash).not.toBe(skill.contentHash);
      const found = await s.find(scope, "deploy-rollback");
      expect(found?.files.map((f) => [f.path, f.content])).toEqual([["references/checklist.md", "- [ ] flags off\n"]]);
      // Overwriting keeps one row and records the old text.
      await s.writeFile(scope, "deploy-rollback", "references/checklist.md", "- [ ] flags off\n- [ ] cache purged\n", prov(scope));
      const again = await s.find(scope, "deploy-rollback");
      expect(again?.files.map((f) => f.content)).toEqual(["- [ ] flags off\n- [ ] cache purged\n"]);
      const revs = await getDb().prisma.revision.findMany({ where: { entityId: skill.id, action: "write_file" } });
      // Both writes may share a timestamp: order by the text they replaced (none first).
      expect(revs.map((r) => [r.path, r.oldText]).sort((x, y) => String(x[1] ?? "").localeCompare(String(y[1] ?? "")))).toEqual([
        ["references/checklist.md", null],
        ["references/checklist.md", "- [ ] flags off\n"],
      ]);
    });

    it("refuses paths that escape the skill folder", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      for (const bad of ["../x", "references/../../x", "/etc/passwd", "notes/x.md", "references/"]) {
        const err = await skillError(s.writeFile(scope, "deploy-rollback", bad, "pwned", prov(scope)));
        expect(err.message).toContain("Support files must be relative paths inside one of references/");
        expect(err.message).toContain("Nothing was saved");
      }
      expect(await getDb().prisma.skillFile.count({ where: { skillId: skill.id } })).toBe(0);
      expect(await revisionCount({ entityId: skill.id })).toBe(1);
    });

    it("removes a file but keeps its text in a revision", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      await s.writeFile(scope, "deploy-rollback", "templates/post.md", "Rolled back {{service}}", prov(scope));
      await s.removeFile(scope, "deploy-rollback", "templates/post.md", prov(scope, 77));
      const found = await s.find(scope, "deploy-rollback");
      expect(found?.files).toEqual([]);
      expect(found?.contentHash).toBe(skill.contentHash);
      const rev = await getDb().prisma.revision.findFirstOrThrow({ where: { entityId: skill.id, action: "remove_file" } });
      expect(rev).toMatchObject({ path: "templates/post.md", oldText: "Rolled back {{service}}", newText: null, sourceMessageId: 77, actorId: scope.personId });
      const err = await skillError(s.removeFile(scope, "deploy-rollback", "templates/post.md", prov(scope)));
      expect(err.message).toContain("has no file 'templates/post.md'");
    });
  });

  describe("archive and revisions", () => {
    it("archive hides the skill from list and find but keeps the row and the name", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      await s.archive(scope, "deploy-rollback", prov(scope));
      expect(await names(scope)).not.toContain("deploy-rollback");
      expect(await s.find(scope, "deploy-rollback")).toBeNull();
      const row = await getDb().prisma.skill.findUniqueOrThrow({ where: { id: skill.id } });
      expect(row).toMatchObject({ status: "archived", content: skill.content });
      const err = await skillError(s.create(scope, skillMd("deploy-rollback"), "team", prov(scope)));
      expect(err.message).toContain("an archived skill has that name");
      const again = await skillError(s.archive(scope, "deploy-rollback", prov(scope)));
      expect(again.message).toContain("No active skill named 'deploy-rollback'");
    });

    it("writes exactly one revision per change", async () => {
      const { scope, skill } = await withSkill();
      const s = store();
      const count = () => revisionCount({ entityId: skill.id });
      expect(await count()).toBe(1);
      await s.patch(scope, "deploy-rollback", { old_string: "Post in #ops", new_string: "Post in #deploys" }, prov(scope));
      expect(await count()).toBe(2);
      await s.edit(scope, "deploy-rollback", skillMd("deploy-rollback", "# Steps\n\n1. Revert."), prov(scope));
      expect(await count()).toBe(3);
      await s.writeFile(scope, "deploy-rollback", "references/a.md", "A", prov(scope));
      expect(await count()).toBe(4);
      await s.writeFile(scope, "deploy-rollback", "references/a.md", "A", prov(scope)); // unchanged: no revision
      expect(await count()).toBe(4);
      await s.removeFile(scope, "deploy-rollback", "references/a.md", prov(scope));
      expect(await count()).toBe(5);
      await s.archive(scope, "deploy-rollback", prov(scope));
      expect(await count()).toBe(6);
      const revs = await getDb().prisma.revision.findMany({ where: { entityId: skill.id } });
      expect(revs.map((r) => r.action).sort()).toEqual(["archive", "create", "edit", "patch", "remove_file", "write_file"]);
      for (const r of revs) expect(r).toMatchObject({ workspaceId: scope.workspaceId, entityType: "skill", source: "tool", actorId: scope.personId, sourceMessageId: 11 });
    });
  });
});
