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

