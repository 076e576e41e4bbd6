/**
 * Provider items in the prompt: beside the lessons, in the person's message (they differ message
 * to message, so never in the cached system prompt), wrapped as recalled search results are:
 * quoted data with their source, not instructions (tools/search.ts wrapRecalled).
 */
import type { Turn } from "../agent/prompt.ts";
import { wrapRecalled } from "../tools/search.ts";
import type { FoundItem } from "./providers.ts";

export function withProviderItems(turns: Turn[], items: readonly FoundItem[]): Turn[] {
  const last = turns.at(-1);
  if (items.length === 0 || !last || last.role !== "user") return turns;
  const lines = items.map((i, n) => `${n + 1}. [from ${i.provider}; source: ${i.source}] ${i.text}`);
  const text = wrapRecalled("Items memory providers found for this message, each with its source; they may be out of date or beside the point.", lines.join("\n"));
  return [...turns.slice(0, -1), { ...last, content: [{ type: "text", text }, ...last.content] }];
}
