/** The curator's model call: one compact request, the reply's text back; the caller validates it. */
import type { ModelClient } from "../agent/model.ts";

export interface Asker {
  model: ModelClient;
  reviewModel: string;
}

export async function ask(ctx: Asker, system: string, content: string, maxTokens: number, signal?: AbortSignal): Promise<string> {
  const reply = await ctx.model.create({ model: ctx.reviewModel, max_tokens: maxTokens, system, messages: [{ role: "user", content }] }, signal ? { signal } : undefined);
  return reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
}

/** The JSON object in a reply (code fences and words around it tolerated); undefined when there is none. */
export function jsonIn(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}
