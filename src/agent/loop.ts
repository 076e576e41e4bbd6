/**
 * The tool loop of one turn: call the model, run the tools it asks for, feed the results back, until
 * it answers in text or the iteration budget is spent. Guards: a tool call that already failed with
 * the same arguments is not run again, and a model stuck repeating failures is made to answer.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelClient } from "./model.ts";
import type { ToolContext, ToolRegistry } from "../tools/registry.ts";

export interface LoopResult {
  text: string;
  iterations: number;
  /** Every call the model asked for, with its arguments (what a skill_view read, for the learning loop). */
  toolCalls: { name: string; isError: boolean; input: unknown }[];
  stopReason: "answered" | "budget" | "repeated_failures" | "tools_done";
}

export interface LoopInput {
  model: ModelClient;
  request: Anthropic.MessageCreateParamsNonStreaming;
  tools: ToolRegistry;
  ctx: ToolContext;
  maxIterations: number;
  /** Told what the agent is doing while tools run (adapters show typing or a status line). */
  onProgress?: (status: string) => void;
  /**
   * Given, every model call is streamed (when the client can) and its text deltas forwarded; see
   * `TurnHooks.onText`. Absent, the loop makes plain calls: nobody would see the deltas.
   */
  onText?: (delta: string) => void;
  /** After a streamed call that ends in tool calls: its text was a preamble, not the answer. */
  onTextReset?: () => void;
  /**
   * For a caller nobody waits on (a review): true for a round of tool calls that finishes the work,
   * and the loop ends there, without one more call for closing words no one reads (that call
   * re-sends the whole prompt: half of what a review cost).
   */
  doneAfter?: (round: readonly { name: string; isError: boolean }[]) => boolean;
}

type Ask = (params: Anthropic.MessageCreateParamsNonStreaming) => Promise<Anthropic.Message>;

/** Same call twice = same name and same arguments, whatever the key order. */
function callKey(name: string, input: unknown): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable);
    if (v && typeof v === "object") {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, stable(x)]));
    }
    return v;
  };
  return `${name}:${JSON.stringify(stable(input))}`;
}

const textOf = (msg: Anthropic.Message) =>
  msg.content
    .filter((b): b is Anthropic.TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("")
    .trim();

/** How many times the model may repeat an already-failed call before it is made to answer. */
const MAX_REPEATS = 2;

export async function runToolLoop({ model, request, tools, ctx, maxIterations, onProgress, onText, onTextReset, doneAfter }: LoopInput): Promise<LoopResult> {
  const messages: Anthropic.MessageParam[] = [...request.messages];
  const failed = new Map<string, string>();
  const toolCalls: LoopResult["toolCalls"] = [];
  let repeats = 0;
  // Whether the latest call forwarded any text: only then is there a draft to reset.
  let streamed = false;
  const stream = onText && model.stream?.bind(model);
  // Counted in the workspace the tools act in: the place the loop serves.
  const call = { workspaceId: ctx.scope.workspaceId };
  const ask: Ask = stream
    ? (params) => {
        streamed = false;
        return stream(params, (delta) => {
          streamed = true;
          onText(delta);
        }, call);
      }
    : (params) => model.create(params, call);

  for (let iteration = 1; iteration <= maxIterations; iteration++) {
    const reply = await ask({ ...request, messages });
    const uses = reply.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
    if (reply.stop_reason !== "tool_use" || uses.length === 0) {
      return { text: textOf(reply), iterations: iteration, toolCalls, stopReason: "answered" };
    }
    // Before any tool's status: the adapter drops the preamble, then shows what the tools do.
    if (streamed) onTextReset?.();
    messages.push({ role: "assistant", content: reply.content as Anthropic.ContentBlockParam[] });
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const use of uses) {
      const key = callKey(use.name, use.input);
      const earlier = failed.get(key);
      if (earlier !== undefined) {
        repeats++;
        toolCalls.push({ name: use.name, isError: true, input: use.input });
        results.push({
          type: "tool_result",
          tool_use_id: use.id,
          is_error: true,
          content: `Not run: this exact ${use.name} call already failed in this turn with:\n${earlier}\nRepeating it cannot succeed. Change the arguments, try another approach, or answer the user.`,
        });
        continue;
      }
      onProgress?.(tools.progressLabel(use.name));
      const outcome = await tools.execute(use.name, use.input, ctx);
      toolCalls.push({ name: use.name, isError: outcome.isError, input: use.input });
      if (outcome.isError) failed.set(key, outcome.content);
      results.push({ type: "tool_result", tool_use_id: use.id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) });
    }
    messages.push({ role: "user", content: results });
    if (doneAfter?.(toolCalls.slice(-uses.length))) return { text: "", iterations: iteration, toolCalls, stopReason: "tools_done" };
    if (repeats >= MAX_REPEATS) return finalAnswer(ask, request, messages, iteration, toolCalls, "repeated_failures");
  }
  return finalAnswer(ask, request, messages, maxIterations, toolCalls, "budget");
}

/** Out of budget (or stuck): one last call with tools disabled, so the person still gets an answer. */
async function finalAnswer(
  ask: Ask,
  request: Anthropic.MessageCreateParamsNonStreaming,
  messages: Anthropic.MessageParam[],
  iterations: number,
  toolCalls: LoopResult["toolCalls"],
  stopReason: LoopResult["stopReason"],
): Promise<LoopResult> {
  const note =
    stopReason === "budget"
      ? "You have used this turn's tool budget. Answer the user now with what you have, and say what is unfinished."
      : "Your tool calls keep failing the same way. Stop calling tools and answer the user now, saying what did not work.";
  const last = messages.at(-1);
  if (last && last.role === "user" && Array.isArray(last.content)) {
    messages[messages.length - 1] = { role: "user", content: [...last.content, { type: "text", text: note }] };
  }
  const reply = await ask({ ...request, messages, tool_choice: { type: "none" } });
  return { text: textOf(reply), iterations: iterations + 1, toolCalls, stopReason };
}
