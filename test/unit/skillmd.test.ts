import { createHash } from "node:crypto";
import { describe, it, expect } from "vitest";
import {
  contentHash,
  parseSkillMd,
  serializeSkillMd,
  SUPPORT_DIRS,
  validateSkillName,
  validateSupportPath,
  type ParsedSkill,
} from "../../src/skills/skillmd.ts";

function ok(text: string): ParsedSkill {
  const r = parseSkillMd(text);
  if (!r.ok) throw new Error(`expected parse to succeed: ${r.error}`);
  return r.skill;
}

function err(text: string): string {
  const r = parseSkillMd(text);
  if (r.ok) throw new Error("expected parse to fail");
  return r.error;
}

const BASIC = "---\nname: deploy-rollback\ndescription: Use when a deploy must be undone\n---\n# Rollback\n\n1. Do it.\n";

describe("parseSkillMd", () => {
  it("parses name, description and body", () => {
    const s = ok(BASIC);
    expect(s).toEqual({
      name: "deploy-rollback",
      description: "Use when a deploy must be undone",
      extra: {},
      body: "# Rollback\n\n1. Do it.",
    });
    expect("version" in s).toBe(false);
    expect("tags" in s).toBe(false);
  });

  it("handles CRLF line endings and a BOM", () => {
    const s = ok("\uFEFF" + BASIC.replace(/\n/g, "\r\n"));
    expect(s.name).toBe("deploy-rollback");
    expect(s.body).toBe("# Rollback\n\n1. Do it.");
    expect(s.body).not.toContain("\r");
  });

  it("keeps version as written, coercing numbers to strings", () => {
    expect(ok("---\nname: a\ndescription: d\nversion: 2\n---\nb").version).toBe("2");
    expect(ok("---\nname: a\ndescription: d\nversion: 1.10\n---\nb").version).toBe("1.10");
    expect(ok("---\nname: a\ndescription: d\nversion: '1.2.0'\n---\nb").version).toBe("1.2.0");
    expect(ok("---\nname: a\ndescription: d\nversion:\n---\nb").version).toBeUndefined();
  });

  it("reads tags and preserves unknown keys in extra", () => {
    const s = ok("---\nname: a\ndescription: d\ntags: [ops, deploy]\nauthor: sam\nmeta:\n  level: 2\n---\nbody");
    expect(s.tags).toEqual(["ops", "deploy"]);
    expect(s.extra).toEqual({ author: "sam", meta: { level: 2 } });
  });

  it("trims the description and tolerates blank lines before the opening fence", () => {
    const s = ok("\n\n---\nname: a\ndescription: |\n  Use when x\n---\nbody");
    expect(s.description).toBe("Use when x");
  });

  it("refuses text without frontmatter, with an example", () => {
    const e = err("# Just a body\n");
    expect(e).toContain("must start with a YAML frontmatter block between '---' lines");
    expect(e).toContain("name: my-skill");
    expect(e).toContain("description:");
  });

  it("tells the model not to wrap the file in a code fence", () => {
    expect(err("```markdown\n---\nname: a\ndescription: d\n---\nbody\n```")).toContain("code fence");
  });

  it("refuses unclosed frontmatter", () => {
    expect(err("---\nname: a\ndescription: d\n# body")).toContain("never closed");
  });

  it("refuses invalid YAML with a quoting hint", () => {
    const e = err("---\nname: a\ndescription: Use when: things break\n---\nbody");
    expect(e).toContain("not valid YAML");
    expect(e).toContain("quotes");
    // Line numbers count from the top of the file, not from the start of the frontmatter.
    expect(e).toContain("at line 3,");
  });

  it("refuses duplicate keys", () => {
    const e = err("---\nname: a\nname: b\ndescription: d\n---\nbody");
    expect(e).toContain("not valid YAML");
    expect(e).toContain("only once");
  });

  it("refuses frontmatter that is not a mapping", () => {
    expect(err("---\n- a\n- b\n---\nbody")).toContain("must be a YAML mapping");
    expect(err("---\njust a string\n---\nbody")).toContain("must be a YAML mapping");
  });

  it("refuses empty frontmatter", () => {
    expect(err("---\n---\nbody")).toContain("frontmatter is empty");
  });

  it("refuses a missing name or description", () => {
    expect(err("---\ndescription: d\n---\nbody")).toContain("missing the required field 'name'");
    expect(err("---\nname: a\n---\nbody")).toContain("missing the required field 'description'");
  });

  it("reports every problem when there are several", () => {
    const e = err("---\nfoo: 1\n---\nbody");
    expect(e).toContain("2 problems");
    expect(e).toContain("'name'");
    expect(e).toContain("'description'");
  });

  it("refuses a bad name with the rule and the value", () => {
    expect(err("---\nname: My Skill\ndescription: d\n---\nbody")).toBe(
      "frontmatter field 'name' must match ^[a-z0-9][a-z0-9._-]*$ (lowercase letters, digits, '.', '_' or '-'); got 'My Skill'",
    );
    expect(err("---\nname: -lead\ndescription: d\n---\nbody")).toContain("got '-lead'");
  });

  it("refuses a non-string name and suggests quoting", () => {
    const e = err("---\nname: 2048\ndescription: d\n---\nbody");
    expect(e).toContain("'name' must be a string");
    expect(e).toContain("quote");
  });

  it("refuses a name longer than 64 characters", () => {
    expect(err(`---\nname: ${"a".repeat(65)}\ndescription: d\n---\nbody`)).toContain("at most 64 characters");
    expect(ok(`---\nname: ${"a".repeat(64)}\ndescription: d\n---\nbody`).name).toHaveLength(64);
  });

  it("refuses an empty or over-long description", () => {
    expect(err("---\nname: a\ndescription: '   '\n---\nbody")).toContain("'description' is empty");
    expect(err(`---\nname: a\ndescription: ${"x".repeat(1025)}\n---\nbody`)).toContain("at most 1024 characters");
    expect(ok(`---\nname: a\ndescription: ${"x".repeat(1024)}\n---\nbody`).description).toHaveLength(1024);
  });

  it("refuses bad version and tags types", () => {
    expect(err("---\nname: a\ndescription: d\nversion: [1]\n---\nbody")).toContain("'version' must be a string or number");
    expect(err("---\nname: a\ndescription: d\ntags: ops\n---\nbody")).toContain("'tags' must be a list of strings");
    expect(err("---\nname: a\ndescription: d\ntags: [ops, 3]\n---\nbody")).toContain("every entry of frontmatter field 'tags'");
  });

  it("refuses an empty body", () => {
    expect(err("---\nname: a\ndescription: d\n---\n")).toContain("body is empty");
    expect(err("---\nname: a\ndescription: d\n---\n  \n\n")).toContain("body is empty");
    expect(err("---\nname: a\ndescription: d\n---")).toContain("body is empty");
  });

  it("does not apply the incident-name policy when reading (stored skills must stay readable)", () => {
    expect(ok("---\nname: fix-deploy-2024-05-01\ndescription: d\n---\nbody").name).toBe("fix-deploy-2024-05-01");
  });
});

describe("serializeSkillMd", () => {
  it("round-trips a full skill", () => {
    const skill: ParsedSkill = {
      name: "release.checklist",
      description: "Use when: cutting a release - #1 rule, 'quotes' and \"double\"",
      version: "1.10",
      tags: ["release", "ops: prod"],
      extra: { author: "sam", nested: { list: [1, "two", true], n: null }, "odd key": "---" },
      body: "# Release\n\n---\n\n1. Tag it.\n   ```sh\n   git tag v1\n   ```",
    };
    const text = serializeSkillMd(skill);
    expect(parseSkillMd(text)).toEqual({ ok: true, skill });
    // Stable: serialising the parsed result again gives the same text.
    expect(serializeSkillMd(ok(text))).toBe(text);
  });

  it("writes name and description first, then version, tags and extra", () => {
    const text = serializeSkillMd({
      name: "a",
      description: "d",
      version: "2",
      tags: ["x"],
      extra: { zeta: 1 },
      body: "b",
    });
    expect(text).toBe("---\nname: a\ndescription: d\nversion: \"2\"\ntags:\n  - x\nzeta: 1\n---\n\nb\n");
  });

  it("round-trips a minimal skill and a multi-line description", () => {
    const minimal: ParsedSkill = { name: "a", description: "d", extra: {}, body: "body" };
    expect(parseSkillMd(serializeSkillMd(minimal))).toEqual({ ok: true, skill: minimal });
    const multi: ParsedSkill = { name: "a", description: "line one\nline two", extra: {}, body: "body" };
    expect(parseSkillMd(serializeSkillMd(multi))).toEqual({ ok: true, skill: multi });
  });

  it("round-trips a parsed file", () => {
    const s = ok(BASIC);
    expect(ok(serializeSkillMd(s))).toEqual(s);
  });

  it("does not let known keys in extra override real fields", () => {
    const text = serializeSkillMd({ name: "a", description: "d", extra: { name: "evil" }, body: "b" });
    expect(ok(text).name).toBe("a");
  });
});

describe("validateSkillName", () => {
  it.each(["deploy-rollback", "release.checklist", "oncall_handover", "k8s-upgrade", "a", "s3-backup", "ipv6-setup"])(
    "accepts %s",
    (name) => {
      expect(validateSkillName(name)).toBeNull();
    },
  );

  it("refuses empty, too long and badly formed names", () => {
    expect(validateSkillName("")).toContain("empty");
    expect(validateSkillName("a".repeat(65))).toContain("at most 64");
    expect(validateSkillName("a".repeat(64))).toBeNull();
    expect(validateSkillName("My Skill")).toContain("got 'My Skill'");
    expect(validateSkillName("_private")).toContain("must match");
    expect(validateSkillName("Deploy")).toContain("must match");
  });

  it.each([
    ["fix-login", "starts with 'fix-'"],
    ["fix_login", "starts with 'fix_'"],
    ["debug-cache", "starts with 'debug-'"],
    ["hotfix-payments", "starts with 'hotfix-'"],
    ["incident-db-outage", "starts with 'incident-'"],
    ["deploy-2024-05-01", "date"],
    ["deploy-20240501", "date"],
    ["outage-2023", "year ('2023')"],
    ["1999-migration", "year ('1999')"],
    ["review-pr-123", "PR or issue number ('pr-123')"],
    ["pr123-notes", "PR or issue number ('pr123')"],
    ["issue-45", "PR or issue number ('issue-45')"],
    ["bug-77-workaround", "PR or issue number ('bug-77')"],
    ["ticket-9", "PR or issue number ('ticket-9')"],
    ["ops-4512", "('4512')"],
    ["cleanup.123", "('123')"],
  ])("refuses incident-like name %s", (name, detail) => {
    const reason = validateSkillName(name);
    expect(reason).toContain(detail);
    expect(reason).toContain("a skill is a reusable procedure for a class of task, not a record of one incident");
    expect(reason).toContain("'deploy-rollback' rather than 'fix-deploy-2024-05-01'");
  });

  it("does not mistake words that merely contain the prefixes for incidents", () => {
    expect(validateSkillName("fixture-setup")).toBeNull();
    expect(validateSkillName("debugging-guide")).toBeNull();
    expect(validateSkillName("bug-triage")).toBeNull();
    expect(validateSkillName("pr-review")).toBeNull();
    expect(validateSkillName("oauth2-setup")).toBeNull();
  });
});

describe("validateSupportPath", () => {
  function refused(path: string): string {
    const r = validateSupportPath(path);
    if (r.ok) throw new Error(`expected '${path}' to be refused`);
    expect(r.error).toContain("references/, templates/, scripts/, assets/");
    expect(r.error).toContain("references/api.md");
    return r.error;
  }

  it.each(["references/api.md", "templates/sub/dir/x.md", "scripts/run.sh", "assets/logo.svg", "references/.hidden"])(
    "accepts %s",
    (path) => {
      expect(validateSupportPath(path)).toEqual({ ok: true, path });
    },
  );

  it("normalises duplicate slashes", () => {
    expect(validateSupportPath("references//api.md")).toEqual({ ok: true, path: "references/api.md" });
  });

  it("refuses traversal", () => {
    expect(refused("../x")).toContain("'..'");
    expect(refused("references/../../etc/passwd")).toContain("'..'");
    expect(refused("references/../templates/x.md")).toContain("'..'");
    expect(refused("references/..")).toContain("'..'");
  });

  it("refuses absolute paths, backslashes, NUL and control characters", () => {
    expect(refused("/etc/passwd")).toContain("absolute");
    expect(refused("references\\x")).toContain("backslash");
    expect(refused("references/a\0b.md")).toContain("NUL");
    expect(refused("references/a\nb.md")).toContain("control character");
  });

  it("refuses '.' segments", () => {
    expect(refused("./references/x.md")).toContain("'.' segment");
    expect(refused("references/./x.md")).toContain("'.' segment");
  });

  it("refuses empty paths, trailing slashes and bare folders", () => {
    expect(refused("")).toContain("is empty");
    expect(refused("references/")).toContain("ends with '/'");
    expect(refused("references/sub/")).toContain("ends with '/'");
    expect(refused("references")).toContain("no file inside it");
  });

  it("refuses paths outside the allowed folders", () => {
    expect(refused("other/x.md")).toContain("not inside an allowed folder");
    expect(refused("x.md")).toContain("not inside an allowed folder");
    expect(refused("SKILL.md")).toContain("not inside an allowed folder");
    expect(refused("References/x.md")).toContain("not inside an allowed folder");
  });

  it("refuses paths over 200 characters", () => {
    const base = "references/";
    expect(validateSupportPath(base + "a".repeat(200 - base.length)).ok).toBe(true);
    expect(refused(base + "a".repeat(201 - base.length))).toContain("limit is 200");
  });

  it("exports the four support folders", () => {
    expect([...SUPPORT_DIRS]).toEqual(["references", "templates", "scripts", "assets"]);
  });
});

describe("contentHash", () => {
  it("is sha256 hex over the parts joined by NUL", () => {
    expect(contentHash(["a", "b"])).toBe(createHash("sha256").update("a\0b").digest("hex"));
    expect(contentHash(["a", "b"])).toMatch(/^[0-9a-f]{64}$/);
    expect(contentHash(["a", "b"])).toBe(contentHash(["a\0b"]));
  });

  it("is deterministic and sensitive to part boundaries and order", () => {
    expect(contentHash(["x", "y"])).toBe(contentHash(["x", "y"]));
    expect(contentHash(["xy"])).not.toBe(contentHash(["x", "y"]));
    expect(contentHash(["y", "x"])).not.toBe(contentHash(["x", "y"]));
  });
});
