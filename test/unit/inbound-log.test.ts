/**
 * The inbound journal's dispatcher on its own (src/journal/inbound-log.ts), over a journal kept in
 * memory: the order events are handed on in, conversations held while storage is down, the bound
 * on events in hand, redeliveries kept once, and an event given up when storage answers and it
 * still cannot be stored.
 */
import { describe, expect, it } from "vitest";
import { InboundLog } from "../../src/journal/inbound-log.ts";
import { MemoryJournal } from "../../src/journal/memory-journal.ts";
import type { KeptEvent, StoreOutcome } from "../../src/ground/journal.ts";
import { silentLogger } from "../../src/ground/log.ts";
import { waitUntil } from "../fakes/http.ts";

interface Handed {
  event: KeptEvent;
  settle: (outcome: StoreOutcome) => void;
}

function harness(opts: { maxInFlight?: number; maxAttempts?: number } = {}) {
  let up = true;
  const handed: Handed[] = [];
  const backend = new MemoryJournal();
  const givenUp: string[] = [];
  const log = new InboundLog({
    backend,
    storageUp: async () => up,
    log: silentLogger,
    retryMs: [5, 20],
    onGiveUp: (p) => givenUp.push(p),
    ...opts,
  });
  log.handleWith("slack", (event, settle) => handed.push({ event, settle }));
  return {
    log,
    backend,
    handed,
    givenUp,
    setUp: (v: boolean) => (up = v),
    payloads: () => handed.map((h) => `${String(h.event.payload)}${h.event.held ? " (held)" : ""}`),
  };
}

describe("the inbound journal's dispatcher", () => {
  it("hands events on in the order kept, keeps a redelivery once, and forgets an event once settled", async () => {
    const h = harness();
    const first = await h.log.keep("slack", "e1", "a1", "C1");
    await h.log.keep("slack", "e2", "b1", "C2");
    expect(await h.log.keep("slack", "e1", "a1 again", "C1")).toBeNull();
    expect(h.payloads()).toEqual(["a1", "b1"]);
    h.handed[0]!.settle("stored");
    expect(await first!.settled).toBe("stored");
    expect(h.backend.depth).toBe(1);
    h.handed[1]!.settle("not_stored");
    expect(h.backend.depth).toBe(0);
    // Settled: the same key may be kept again (a new event).
    expect(await h.log.keep("slack", "e1", "a1 later", "C1")).not.toBeNull();
  });

  it("holds a conversation whose storing failed: its later events are shown once as held, and all go again in order once storage answers", async () => {
    const h = harness();
    h.setUp(false);
    await h.log.keep("slack", "e1", "a1", "C1");
    await h.log.keep("slack", "e2", "a2", "C1");
    await h.log.keep("slack", "e3", "b1", "C2");
    // Handed on at once, all three (nothing has failed yet).
    expect(h.payloads()).toEqual(["a1", "a2", "b1"]);
    h.handed[0]!.settle("failed");
    h.handed[1]!.settle("failed");
    h.handed[2]!.settle("failed");
    expect(h.log.waitingForStorage).toBe(true);
    // Kept while the conversation is held: shown once, as held, not to be stored out of its turn.
    await h.log.keep("slack", "e4", "a3", "C1");
    expect(h.payloads().slice(3)).toEqual(["a3 (held)"]);
    h.handed[3]!.settle("failed");
    await new Promise((r) => setTimeout(r, 60));
    expect(h.handed).toHaveLength(4);
    h.setUp(true);
    await waitUntil("everything handed on again", () => h.handed.length === 8, 2_000);
    expect(h.payloads().slice(4)).toEqual(["a1", "a2", "b1", "a3"]);
    expect(h.handed.slice(4).every((x) => x.event.replayed)).toBe(true);
    expect(h.log.waitingForStorage).toBe(false);
  });

  it("hands on at most maxInFlight events; the rest wait in the journal", async () => {
    const h = harness({ maxInFlight: 2 });
    for (let i = 1; i <= 5; i++) await h.log.keep("slack", `e${i}`, `m${i}`, `C${i}`);
    expect(h.payloads()).toEqual(["m1", "m2"]);
    expect(h.backend.depth).toBe(5);
    h.handed[0]!.settle("stored");
    expect(h.payloads()).toEqual(["m1", "m2", "m3"]);
  });

  it("gives an event up when it fails again and again with storage answering, and goes on with the others", async () => {
    const h = harness({ maxAttempts: 3 });
    await h.log.keep("slack", "bad", "poison", "C1");
    await h.log.keep("slack", "good", "fine", "C2");
    h.handed[1]!.settle("stored");
    // Storage answers every probe; the one event fails each time it is handed on.
    const bad = () => h.handed.filter((x) => x.event.key === "bad");
    for (let attempt = 1; attempt <= 3; attempt++) {
      await waitUntil(`attempt ${attempt}`, () => bad().length === attempt, 2_000);
      bad().at(-1)!.settle("failed");
    }
    await waitUntil("given up", () => h.givenUp.length === 1, 2_000);
    expect(h.backend.depth).toBe(0);
    expect(h.log.waitingForStorage).toBe(false);
  });
});
