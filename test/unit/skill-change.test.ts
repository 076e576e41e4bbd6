/** The pure parts of a skill proposal: the change checked as the store checks it, and the diff people judge it by. */
import { describe, expect, it } from "vitest";
import { SkillError, textChange } from "../../src/skills/change.ts";
import { diffCounts, lineDiff } from "../../src/skills/diff.ts";

const MD = (body: string, name = "deploy") => `---\nname: ${name}\ndescription: Use when deploying\n---\n# Deploy\n${body}\n`;
const skill = { name: "deploy", content: MD("1. Build.\n2. Ship."), files: [{ path: "references/hosts.md", content: "web-1\nweb-2\n" }] };

describe("textChange", () => {
  it("computes a patch, an edit and a support file's text without writing, refusing what the store would refuse", () => {
    expect(textChange(skill, { action: "patch", patch: { old_string: "2. Ship.", new_string: "2. Ship, then tag." } })).toEqual({ path: null, oldText: skill.content, newText: MD("1. Build.\n2. Ship, then tag.") });
    expect(textChange(skill, { action: "patch", patch: { old_string: "web-2", new_string: "web-3", file_path: "references/hosts.md" } })).toEqual({ path: "references/hosts.md", oldText: "web-1\nweb-2\n", newText: "web-1\nweb-3\n" });
    expect(textChange(skill, { action: "write_file", path: "references/new.md", content: "x" })).toEqual({ path: "references/new.md", oldText: null, newText: "x" });
    expect(() => textChange(skill, { action: "patch", patch: { old_string: "3.", new_string: "4." } })).toThrow(/was not found in SKILL.md/);
    expect(() => textChange(skill, { action: "edit", content: MD("x", "other") })).toThrow(/must stay 'deploy'/);
    expect(() => textChange(skill, { action: "edit", content: skill.content })).toThrow(SkillError);
    expect(() => textChange(skill, { action: "write_file", path: "../etc/passwd", content: "x" })).toThrow(SkillError);
  });
});

describe("lineDiff", () => {
  it("shows removed then added lines with a little context, long unchanged runs elided", () => {
    const before = ["a", "b", "c", "d", "e", "f", "g", "h"].join("\n");
    const after = before.replace("b", "B").replace("h", "h\ni");
    expect(lineDiff(before, after)).toEqual(["  a", "- b", "+ B", "  c", "  d", "  …", "  g", "  h", "+ i"]);
    expect(diffCounts(before, after)).toEqual({ added: 2, removed: 1 });
    expect(lineDiff(null, "x\ny")).toEqual(["+ x", "+ y"]);
    expect(lineDiff("", Array.from({ length: 50 }, (_, i) => `l${i}`).join("\n"), 10).at(-1)).toBe("  … (41 more lines)");
  });
});
