import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { configSchema } from "../../src/app/config.ts";
import { END, ENV_EXAMPLE, FIX, OPERATIONS_DOC, START, renderEnvExample, renderSettingsTable, settingDocs, settingsFiles, spliceSettings } from "../../scripts/settings-docs.ts";

const schemaNames = () => Object.keys(configSchema.shape).sort();
const tableOf = (doc: string) => doc.slice(doc.indexOf(START), doc.indexOf(END));

describe("the settings docs (docs/operations.md's table, .env.example)", () => {
  it("are what the generator writes from the schema: run the fix command when this fails", () => {
    for (const file of settingsFiles()) expect(file.have, `${file.path} is out of date: run \`${FIX}\``).toBe(file.want);
  });

  it("list every setting of the schema and no other, in both files", () => {
    const table = tableOf(readFileSync(OPERATIONS_DOC, "utf8"));
    const inTable = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(inTable).toEqual(schemaNames());
    const env = readFileSync(ENV_EXAMPLE, "utf8");
    const inEnv = [...env.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]).sort();
    expect(inEnv).toEqual(schemaNames());
  });

  it("take each default from the schema itself", () => {
    const defaults: Record<string, unknown> = configSchema.parse({});
    const docs = settingDocs();
    expect(docs.find((d) => d.name === "CAIRN_MAX_TOKENS")?.value).toBe(String(defaults.CAIRN_MAX_TOKENS));
    expect(docs.find((d) => d.name === "CAIRN_POSITIVE_EMOJI")?.value).toBe("👍,✅,⭐,🎉");
    // No default in the schema: the note says what unset means, and the file leaves the value empty.
    expect(docs.find((d) => d.name === "CAIRN_REVIEW_MODEL")).toMatchObject({ value: null, absent: "CAIRN_MODEL" });
    expect(renderEnvExample(docs)).toMatch(/^# CAIRN_REVIEW_MODEL=$/m);
    expect(renderEnvExample(docs)).toMatch(/^# CAIRN_CURATOR_CRON="0 3 \* \* 0"$/m);
    // The one setting a first start needs is the one line not commented out.
    expect(renderEnvExample(docs).match(/^[A-Z_]+=.*$/gm)).toEqual(["ANTHROPIC_API_KEY="]);
  });

  it("notice a table that drifted, and say how to fix it", () => {
    const doc = readFileSync(OPERATIONS_DOC, "utf8");
    const edited = doc.replace("| `CAIRN_MAX_TOKENS` | `4096` |", "| `CAIRN_MAX_TOKENS` | `8192` |");
    expect(edited).not.toBe(doc);
    expect(spliceSettings(edited, renderSettingsTable())).toBe(doc);
    expect(FIX).toBe("npm run docs:settings");
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts["docs:settings"]).toBe("tsx scripts/settings-docs.ts");
  });

  it("escape a pipe inside a table cell", () => {
    expect(renderSettingsTable()).toContain("`/cairn keep new\\|old\\|both <id>`");
  });
});
