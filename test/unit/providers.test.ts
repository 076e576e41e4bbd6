/**
 * The budgets of src/providers/providers.ts that the end-to-end suite (test/e2e/memory-providers.test.ts)
 * does not reach: at most MAX_PROVIDER_ITEMS items and MAX_PROVIDER_CHARS characters from all
 * providers together, in their order; a source cut to one line; a sync only for a reply delivered.
 */
import { expect, it } from "vitest";
import { MAX_PROVIDER_CHARS, MAX_PROVIDER_ITEMS, Providers } from "../../src/providers/providers.ts";
import { Metrics } from "../../src/ops/metrics.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { InMemoryProvider } from "../support/memory-provider.ts";
import { forgeScope } from "../support/scopes.ts";

const scope = forgeScope({ workspaceId: "w1", personId: "p1", conversationId: "c1", channelKey: "C1", isDm: false });
const turn = { text: "anything", recent: [] };
const make = (...providers: InMemoryProvider[]) => new Providers({ providers, deadlineMs: 1_000, metrics: new Metrics({ processMetrics: false }), log: silentLogger });

it("keeps the first items within the item budget, in the providers' order", async () => {
  const a = new InMemoryProvider("a");
  const b = new InMemoryProvider("b");
  a.planted = Array.from({ length: 5 }, (_, i) => ({ text: `a${i}`, source: `s\n${i}` }));
  b.planted = Array.from({ length: 5 }, (_, i) => ({ text: `b${i}`, source: "s" }));
  const items = await make(a, b).prefetch(scope, turn);
  expect(items).toHaveLength(MAX_PROVIDER_ITEMS);
  expect(items.map((i) => i.text)).toEqual(["a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2"]);
  expect(items[1]).toEqual({ provider: "a", text: "a1", source: "s 1" });
});

it("cuts the item that passes the character budget and adds none after it", async () => {
  const a = new InMemoryProvider("a");
  a.planted = [{ text: "x".repeat(3_000), source: "one" }, { text: "y".repeat(3_000), source: "two" }, { text: "z", source: "three" }];
  const items = await make(a).prefetch(scope, turn);
  expect(items.map((i) => i.source)).toEqual(["one", "two"]);
  expect(items.reduce((n, i) => n + i.text.length, 0)).toBe(MAX_PROVIDER_CHARS);
  expect(items[1]!.text.endsWith("…")).toBe(true);
});

it("syncs a reply only once it is delivered, and never one that was not", async () => {
  const a = new InMemoryProvider("a");
  const providers = make(a);
  const synced = { question: "q", answer: "a", messageId: 1, replyMessageId: 2 };
  providers.replied(scope, synced);
  providers.replied(scope, { ...synced, messageId: 3, replyMessageId: 4 });
  providers.undelivered(4);
  providers.delivered(4);
  providers.delivered(2);
  providers.delivered(2);
  await providers.syncsDone();
  expect(a.calls.map((c) => [c.call, c.turn])).toEqual([["sync", synced]]);
});

it("does not let a provider hung in forget hold the erasure: it is counted late and the others are told", async () => {
  const hung = new InMemoryProvider("hung");
  const ok = new InMemoryProvider("ok");
  hung.hangForget = true;
  const metrics = new Metrics({ processMetrics: false });
  const providers = new Providers({ providers: [hung, ok], deadlineMs: 1_000, metrics, log: silentLogger });
  await providers.forget(scope, { kind: "person", personId: "p1" }, 50);
  expect(ok.calls.map((c) => c.call)).toEqual(["forget"]);
  const text = await metrics.expose();
  expect(text).toMatch(/cairn_provider_calls_total\{provider="hung",call="forget",result="late"\} 1/);
  expect(text).toMatch(/cairn_provider_calls_total\{provider="ok",call="forget",result="ok"\} 1/);
  hung.releaseHeld();
});
