/**
 * `memory_history`: what remembered facts, rules and lessons said before, and when they changed
 * (issue 27). Read through the asker's scope (memory/history-store.ts): only the history of what
 * this place may read, and what holds now only when this place may read it too.
 */
import { z } from "zod";
import { defineTool } from "./registry.ts";
import type { MemoryHistoryStore } from "../memory/history-store.ts";
import { dayOf } from "../memory/validity.ts";

const input = z.object({
  topic: z.string().max(300).describe("words of what to look up, e.g. 'deploy freeze' or 'package manager'; empty for the latest changes"),
  limit: z.number().int().min(1).max(20).optional().describe("how many earlier texts at most (default 8)"),
});

export function memoryHistoryTool(store: MemoryHistoryStore) {
  return defineTool({
    name: "memory_history",
    description: [
      "Look up what a remembered fact, team rule or lesson said BEFORE it was replaced, and when it changed:",
      "use it when someone asks what something used to be, since when it changed, or why memory differs from what they remember.",
      "Your system prompt already holds what is in force now; this returns only earlier texts, each with the dates it held and what replaced it.",
    ].join(" "),
    progress: "looking at what memory said before",
    input,
    async run(args, ctx) {
      const rows = await store.earlier(ctx.scope, args.topic, args.limit ?? 8);
      if (rows.length === 0) return `No earlier text${args.topic.trim() ? ` about "${args.topic.trim()}"` : ""} in the memory you may read here: nothing on it was replaced.`;
      const lines = rows.map((r) => {
        const now = r.now ? `replaced by "${r.now.text}" (in force since ${dayOf(r.now.since)})` : "no longer in force";
        return `- "${r.text}" (${r.target} ${r.kind}): held from ${dayOf(r.from)} until ${dayOf(r.until)}; ${now}`;
      });
      return [`Earlier texts (newest change first, dates UTC):`, ...lines].join("\n");
    },
  });
}
