import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, it, expect } from "vitest";
import { loadBundledSkills } from "../../src/skills/bundled.ts";
import { contentHash, parseSkillMd, validateSkillName } from "../../src/skills/skillmd.ts";

const SKILLS_DIR = fileURLToPath(new URL("../../skills", import.meta.url));

const temps: string[] = [];

async function tempSkills(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "cairn-bundled-"));
  temps.push(root);
  const dir = join(root, "skills");
  await mkdir(dir);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

function skillMd(name: string, body = "# Steps\n\n1. Do it."): string {
  return `---\nname: ${name}\ndescription: Use when testing ${name}\n---\n${body}\n`;
}

afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("loadBundledSkills on the real skills/ folder", () => {
  it("loads every bundled skill, sorted, with names matching folders", async () => {
    const skills = await loadBundledSkills(SKILLS_DIR);
    const names = skills.map((s) => s.name);
    expect(names).toContain("cairn-guide");
    expect(names).toContain("team-runbook");
    expect(names).toEqual([...names].sort());
    for (const s of skills) {
      const parsed = parseSkillMd(s.content);
      expect(parsed.ok, `${s.name}: ${parsed.ok ? "" : parsed.error}`).toBe(true);
      if (!parsed.ok) continue;
      expect(parsed.skill.name).toBe(s.name);
      expect(parsed.skill.description).toBe(s.description);
      // Bundled skills must follow the same naming policy the model is held to.
      expect(validateSkillName(s.name)).toBeNull();
      expect(s.hash).toMatch(/^[0-9a-f]{64}$/);
    }
  });

  it("reads the support files each SKILL.md points to", async () => {
    const skills = await loadBundledSkills(SKILLS_DIR);
    const byName = new Map(skills.map((s) => [s.name, s]));
    const guide = byName.get("cairn-guide");
    const runbook = byName.get("team-runbook");
    expect(guide?.files.map((f) => f.path)).toContain("references/memory-guidelines.md");
    expect(runbook?.files.map((f) => f.path)).toContain("templates/runbook.md");
    for (const s of skills) {
      for (const f of s.files) {
        expect(f.content.trim().length).toBeGreaterThan(0);
        // A support file nobody mentions is never read; each one must be referenced from its SKILL.md.
        expect(s.content, `${s.name} should mention ${f.path}`).toContain(f.path);
      }
    }
  });

  it("gives the same hash on every load", async () => {
    const a = await loadBundledSkills(SKILLS_DIR);
    const b = await loadBundledSkills(SKILLS_DIR);
    expect(b.map((s) => [s.name, s.hash])).toEqual(a.map((s) => [s.name, s.hash]));
  });
});

describe("loadBundledSkills on temp folders", () => {
  it("hashes SKILL.md and files in sorted path order, ignoring dotfiles and other folders", async () => {
    const dir = await tempSkills({
      "beta/SKILL.md": skillMd("beta"),
      "alpha/SKILL.md": skillMd("alpha"),
      "alpha/templates/z.md": "zed",
      "alpha/references/deep/a.md": "aye",
      "alpha/references/.DS_Store": "junk",
      "alpha/.git/config": "junk",
      "alpha/notes/ignored.md": "not a support folder",
      "alpha/README.md": "ignored",
      "no-skill-here/readme.md": "no SKILL.md, not a skill",
    });
    const skills = await loadBundledSkills(dir);
    expect(skills.map((s) => s.name)).toEqual(["alpha", "beta"]);
    const alpha = skills[0];
    expect(alpha?.files).toEqual([
      { path: "references/deep/a.md", content: "aye" },
      { path: "templates/z.md", content: "zed" },
    ]);
    expect(alpha?.content).toBe(skillMd("alpha"));
    expect(alpha?.description).toBe("Use when testing alpha");
    expect(alpha?.hash).toBe(contentHash([skillMd("alpha"), "references/deep/a.md", "aye", "templates/z.md", "zed"]));
    expect(skills[1]?.files).toEqual([]);
  });

  it("changes the hash when a support file changes", async () => {
    const dir1 = await tempSkills({ "a/SKILL.md": skillMd("a"), "a/references/x.md": "one" });
    const dir2 = await tempSkills({ "a/SKILL.md": skillMd("a"), "a/references/x.md": "two" });
    const [h1] = (await loadBundledSkills(dir1)).map((s) => s.hash);
    const [h2] = (await loadBundledSkills(dir2)).map((s) => s.hash);
    expect(h1).not.toBe(h2);
  });

  it("rejects a folder whose name differs from the frontmatter name", async () => {
    const dir = await tempSkills({ "deploy/SKILL.md": skillMd("deploy-rollback") });
    await expect(loadBundledSkills(dir)).rejects.toThrow(/folder 'deploy'.*'deploy-rollback'/);
  });

  it("rejects an invalid SKILL.md, naming the folder and the parse error", async () => {
    const dir = await tempSkills({ "broken/SKILL.md": "# no frontmatter\n" });
    await expect(loadBundledSkills(dir)).rejects.toThrow(/'broken'.*must start with a YAML frontmatter block/s);
  });

  it("rejects a support file that escapes the skill folder through '../'", async () => {
    const dir = await tempSkills({ "a/SKILL.md": skillMd("a"), "outside.md": "secret" });
    await mkdir(join(dir, "a", "references"));
    await symlink("../../outside.md", join(dir, "a", "references", "escape.md"));
    await expect(loadBundledSkills(dir)).rejects.toThrow(/'a'.*references\/escape\.md.*symbolic link/);
  });

  it("rejects a support file path that validateSupportPath refuses", async () => {
    const dir = await tempSkills({ "a/SKILL.md": skillMd("a"), "a/references/bad\\name.md": "x" });
    await expect(loadBundledSkills(dir)).rejects.toThrow(/'a'.*backslash/);
  });

  it("rejects files over 256 KiB, naming the file", async () => {
    const dir = await tempSkills({ "a/SKILL.md": skillMd("a"), "a/assets/big.txt": "x".repeat(256 * 1024 + 1) });
    await expect(loadBundledSkills(dir)).rejects.toThrow(/a\/assets\/big\.txt.*limit/);
  });

  it("accepts a file of exactly 256 KiB", async () => {
    const dir = await tempSkills({ "a/SKILL.md": skillMd("a"), "a/assets/big.txt": "x".repeat(256 * 1024) });
    const [a] = await loadBundledSkills(dir);
    expect(a?.files[0]?.content.length).toBe(256 * 1024);
  });

  it("rejects binary files", async () => {
    const dir = await tempSkills({ "a/SKILL.md": skillMd("a") });
    await mkdir(join(dir, "a", "assets"));
    await writeFile(join(dir, "a", "assets", "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]));
    await expect(loadBundledSkills(dir)).rejects.toThrow(/a\/assets\/logo\.png.*not UTF-8/);
  });
});
