import { describe, expect, it } from "vitest";
import { commandArgs, parseCommandLine } from "../../src/ground/commands.ts";
import { onlyLinks } from "../../src/commands/learn.ts";
import { markdownLinks } from "../../src/platforms/slack/commands/slash.ts";

describe("command lines", () => {
  it("splits arguments into words, and keeps learn's text whole", () => {
    expect(parseCommandLine("forget me  confirm")).toEqual({ name: "forget", args: ["me", "confirm"] });
    expect(parseCommandLine("")).toEqual({ name: "help", args: [] });
    expect(parseCommandLine("dance")).toBeNull();
    expect(parseCommandLine("learn  How to release:\n1. tag\n2. push  ")).toEqual({ name: "learn", args: ["How to release:\n1. tag\n2. push"] });
    expect(parseCommandLine("LEARN")).toEqual({ name: "learn", args: [] });
    expect(commandArgs("learn", "   ")).toEqual([]);
    expect(commandArgs("confirm", " a  b ")).toEqual(["a", "b"]);
    // Slack's `/cairn jobs run curator --dry-run` and the console's `/jobs ...` arrive as these words.
    expect(parseCommandLine("jobs  run curator --dry-run")).toEqual({ name: "jobs", args: ["run", "curator", "--dry-run"] });
    expect(parseCommandLine("Jobs")).toEqual({ name: "jobs", args: [] });
  });

  it("tells a text of links only from a text with links in it", () => {
    expect(onlyLinks("https://wiki.example.com/page")).toBe(true);
    // Slack's link markup reaches the core as Markdown (the Slack adapter turns it).
    expect(onlyLinks(markdownLinks("<https://wiki.example.com/page|the runbook>  www.example.com/x,"))).toBe(true);
    expect(markdownLinks("<https://wiki.example.com/page|the runbook> <https://a.io> <@U1>")).toBe("[the runbook](https://wiki.example.com/page) https://a.io <@U1>");
    expect(onlyLinks("see https://wiki.example.com/page for the steps")).toBe(false);
    expect(onlyLinks("")).toBe(false);
  });
});
