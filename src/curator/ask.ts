/** The curator's model call: one compact request, the reply's text back; the caller validates it. */
import type { ModelClient } from "../agent/model.ts";


export interface Asker {
  model: ModelClient;
  reviewModel: string;
}

/** `workspaceId`: the workspace being curated, whose tokens the call counts in. */
export async function ask(ctx: Asker, workspaceId: string, system: string, content: string, maxTokens: number, signal?: AbortSignal): Promise<string> {
  const reply = await ctx.model.create({ model: ctx.reviewModel, max_tokens: maxTokens, system, messages: [{ role: "user", content }] }, { workspaceId, signal });
  return reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
}

