/**
 * In-process fake models for the benchmarks: the real Core calls them through the same
 * ModelClient interface as the Anthropic client, with no network in between, so what is measured
 * is cairn's own work. Each records the requests it saw and the time spent inside it.
 */
import type Anthropic from "@anthropic-ai/sdk";
import type { ModelClient } from "../../src/agent/model.ts";
import { SCREEN_PROMPT } from "../../src/safety/screen.ts";

export type Reply = { text: string } | { toolUse: { name: string; input: unknown }[] };

export interface FakeModel extends ModelClient {
  requests: Anthropic.MessageCreateParamsNonStreaming[];
  /** Milliseconds spent inside create() (its own delay included). */
  spentMs: number;
  /** Calls of the safety screen (answered "allow", not recorded among `requests`: no prompt of a turn). */
  screenCalls: number;
}

/** The screen's request: its fixed prompt is the system text. */
function isScreen(params: Anthropic.MessageCreateParamsNonStreaming): boolean {
  const system = typeof params.system === "string" ? params.system : (params.system ?? []).map((b) => b.text).join("");
  return system === SCREEN_PROMPT;
}

let ids = 0;

export function message(model: string, reply: Reply): Anthropic.Message {
  const content =
    "text" in reply
      ? [{ type: "text", text: reply.text, citations: null }]
      : reply.toolUse.map((t) => ({ type: "tool_use", id: `toolu_bench_${++ids}`, name: t.name, input: t.input, caller: { type: "direct" } }));
  const msg = {
    id: `msg_bench_${++ids}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: "text" in reply ? "end_turn" : "tool_use",
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: null, server_tool_use: null, service_tier: null },
  };
  // The SDK's Message type grows fields release by release; the Core reads only those above.
  return msg as unknown as Anthropic.Message;
}

/** A model that answers at once (or after `delayMs`) with whatever `respond` says. */
export function fakeModel(respond: (req: Anthropic.MessageCreateParamsNonStreaming) => Reply, opts: { delayMs?: number; record?: boolean } = {}): FakeModel {
  const fake: FakeModel = {
    requests: [],
    spentMs: 0,
    screenCalls: 0,
    async create(params) {
      // The benchmarks' conventions are the team's own: the screen lets them through, as a model would.
      if (isScreen(params)) {
        fake.screenCalls++;
        return message(params.model, { text: '{"verdict": "allow"}' });
      }
      const t0 = performance.now();
      if (opts.record) fake.requests.push(structuredClone(params));
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      const out = message(params.model, respond(params));
      fake.spentMs += performance.now() - t0;
      return out;
    },
  };
  return fake;
}

/** The last user message's text (tool results excluded). */
export function lastUserText(req: Anthropic.MessageCreateParamsNonStreaming): string {
  const last = req.messages.at(-1);
  if (!last || last.role !== "user") return "";
  if (typeof last.content === "string") return last.content;
  return last.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
}

/** Everything the model is shown, as one string: system, messages (tool results included), tools. */
export function promptText(req: Anthropic.MessageCreateParamsNonStreaming): string {
  const system = typeof req.system === "string" ? req.system : (req.system ?? []).map((b) => b.text).join("\n");
  return `${system}\n${JSON.stringify(req.messages)}`;
}
