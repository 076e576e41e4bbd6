/**
 * The tool loop with streaming: the real model client against the fake Anthropic server, and a
 * small in-memory tool. Checks which calls stream, the order of text, resets and statuses the
 * adapter sees, and that a non-streaming client (or no `onText`) still answers.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { runToolLoop, type LoopInput } from "../../src/agent/loop.ts";
import { createModelClient, ModelUnavailableError, type ModelClient } from "../../src/agent/model.ts";
import { defineTool, ToolRegistry, type Tool, type ToolContext } from "../../src/tools/registry.ts";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic.ts";
import { forgeScope } from "../support/scopes.ts";

let fake: FakeAnthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

const lookup = defineTool({
  name: "lookup",
  description: "look something up",
  progress: "looking it up",
  input: z.object({ q: z.string() }),
  run: async ({ q }) => `found: ${q}`,
});

const ctx: ToolContext = {
  scope: forgeScope({ workspaceId: "w", personId: "p", conversationId: "c", channelKey: "C1", isDm: true }),
  sourceMessageId: 1,
  sessionId: "s",
  speakerName: "Alice",
};

const request: Anthropic.MessageCreateParamsNonStreaming = {
  model: "claude-test",
  max_tokens: 256,
  messages: [{ role: "user", content: "what is the deploy day?" }],
};

function model(): ModelClient {
  return createModelClient({ apiKey: fake.apiKey, baseURL: fake.url, maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 5000 });
}

/** Runs the loop and records every hook call, in order, as one event list. */
async function run(input: Partial<LoopInput> = {}, hooks = true) {
  const events: string[] = [];
  const result = await runToolLoop({
    model: model(),
    request,
    tools: new ToolRegistry([lookup as Tool]),
    ctx,
    maxIterations: 5,
    ...(hooks
      ? {
          onProgress: (s: string) => events.push(`progress:${s}`),
          onText: (d: string) => events.push(`text:${d}`),
          onTextReset: () => events.push("reset"),
        }
      : {}),
    ...input,
  });
  // Deltas are cut wherever the fake cuts them; merge runs of text so the order reads plainly.
  const merged = events.reduce<string[]>((out, e) => {
    const prev = out.at(-1);
    if (e.startsWith("text:") && prev?.startsWith("text:")) out[out.length - 1] = prev + e.slice(5);
    else out.push(e);
    return out;
  }, []);
  return { result, events: merged, raw: events };
}

describe("runToolLoop with onText", () => {
  it("streams every call: a preamble, its reset before the tool's status, then the answer", async () => {
    fake.enqueue(
      { text: "Let me look that up.", toolUse: [{ name: "lookup", input: { q: "deploy day" } }] },
      { text: "Deploys go out on **Tuesdays**.", pieces: 4 },
    );

    const { result, events, raw } = await run();

    expect(events).toEqual(["text:Let me look that up.", "reset", "progress:looking it up", "text:Deploys go out on **Tuesdays**."]);
    expect(raw.filter((e) => e.startsWith("text:")).length).toBeGreaterThan(4);
    expect(result).toMatchObject({ text: "Deploys go out on **Tuesdays**.", iterations: 2, stopReason: "answered" });
    expect(fake.requests.map((r) => r.body.stream)).toEqual([true, true]);
  });

  it("does not reset when a tool call came without text", async () => {
    fake.enqueue({ toolUse: [{ name: "lookup", input: { q: "x" } }] }, { text: "Done." });

    const { events } = await run();

    expect(events).toEqual(["progress:looking it up", "text:Done."]);
  });

  it("streams the forced final answer when the budget runs out", async () => {
    fake.enqueue(
      { text: "Checking.", toolUse: [{ name: "lookup", input: { q: "a" } }] },
      { text: "Still checking.", toolUse: [{ name: "lookup", input: { q: "b" } }] },
      { text: "Here is what I have." },
    );

    const { result, events } = await run({ maxIterations: 2 });

    expect(events).toEqual(["text:Checking.", "reset", "progress:looking it up", "text:Still checking.", "reset", "progress:looking it up", "text:Here is what I have."]);
    expect(result).toMatchObject({ text: "Here is what I have.", stopReason: "budget", iterations: 3 });
    expect(fake.requests.at(-1)?.body).toMatchObject({ stream: true, tool_choice: { type: "none" } });
  });

  it("makes plain calls without onText, and with a client that cannot stream", async () => {
    fake.enqueue({ toolUse: [{ name: "lookup", input: { q: "x" } }] }, { text: "Plain." });
    const plain = await run({ onProgress: () => {} }, false);
    expect(plain.result.text).toBe("Plain.");
    expect(fake.requests.map((r) => r.body.stream)).toEqual([undefined, undefined]);

    fake.reset();
    fake.enqueue({ text: "No streaming here." });
    const real = model();
    const createOnly: ModelClient = { create: (p, o) => real.create(p, o) };
    const { result, events } = await run({ model: createOnly });
    expect(result.text).toBe("No streaming here.");
    expect(events).toEqual([]);
    expect(fake.requests.map((r) => r.body.stream)).toEqual([undefined]);
  });

  it("fails the turn, without a retry, when the answer breaks off mid-stream", async () => {
    fake.enqueue({ streamThenFail: "Deploys go out on", pieces: 2 }, { text: "never requested" });

    const err = await run().then(
      () => null,
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(ModelUnavailableError);
    expect(err).toMatchObject({ reason: "interrupted" });
    expect(fake.requests).toHaveLength(1);
  });
});

describe("runToolLoop with doneAfter (a caller nobody waits on)", () => {
  const done = (round: readonly { name: string; isError: boolean }[]) => round.every((c) => !c.isError);

  it("ends on a round it accepts, without another call for closing words", async () => {
    fake.enqueue({ toolUse: [{ name: "lookup", input: { q: "a" } }, { name: "lookup", input: { q: "b" } }] }, { text: "never asked for" });
    const { result } = await run({ doneAfter: done }, false);
    expect(result).toMatchObject({ stopReason: "tools_done", iterations: 1, text: "" });
    expect(result.toolCalls.map((c) => c.isError)).toEqual([false, false]);
    expect(fake.requests).toHaveLength(1);
  });

  it("goes on after a round with an error, so the model can act on it", async () => {
    fake.enqueue({ toolUse: [{ name: "lookup", input: { wrong: 1 } }] }, { toolUse: [{ name: "lookup", input: { q: "a" } }] }, { text: "never asked for" });
    const { result } = await run({ doneAfter: done }, false);
    expect(result).toMatchObject({ stopReason: "tools_done", iterations: 2 });
    expect(fake.requests).toHaveLength(2);
  });
});
