/**
 * The conversation around a search (issue 29, item 2): what the asker said just before the model
 * searched names the topic the model's query may leave out. Probes written before the ranking
 * lever: in each, two threads answer the query's words alike, the wrong one newer (so it wins a tie
 * without context), and the asker's recent messages share a word or two with the right one only.
 * Then probes where the context cannot help: it must change nothing.
 */
import { expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

interface Probe {
  name: string;
  /** Threads, oldest first: each a channel of its own, its messages by alternating people. */
  threads: string[][];
  /** What the asker said in this conversation before the model searched. */
  context: string[];
  /** The model's query. */
  query: string;
  /** [thread, message] of the hit that should come first. */
  expect: [number, number];
}

const PROBES: Probe[] = [
  {
    name: "which team's release schedule",
    threads: [
      ["payments: we decided to ship the release every Tuesday after the freeze", "ok, Tuesdays work for the card processor changes too"],
      ["search: we decided to ship the release nightly from main", "nightly is fine for the indexer as well"],
    ],
    context: ["the card processor folks are asking when their changes go out"],
    query: "decided ship release",
    expect: [0, 0],
  },
  {
    name: "which move",
    threads: [
      ["the Frankfurt datacenter move is planned for the 14th", "we need new power supplies for the racks before then"],
      ["the office move is planned for the 2nd", "facilities will send boxes next week"],
    ],
    context: ["Dana says the racks in Frankfurt are still on the old power supplies", "is that a problem?"],
    query: "when is the move planned",
    expect: [0, 0],
  },
  {
    name: "which budget",
    threads: [
      ["engineering budget approved: 40k for build servers", "great, the CI queue has been awful"],
      ["marketing budget approved: 40k, booth", "booth design is due in May"],
    ],
    context: ["our CI builds take forty minutes now", "can we buy more machines?"],
    query: "budget approved",
    expect: [0, 0],
  },
  {
    name: "whose postmortem",
    threads: [
      ["Priya will write the postmortem for the outage", "the login page timed out for an hour, customers could not sign in"],
      ["Marco will write the postmortem for the outage", "invoices were sent twice to forty customers"],
    ],
    context: ["people could not sign in yesterday morning, the login page just spun"],
    query: "who writes the postmortem for the outage",
    expect: [0, 0],
  },
];

/** Context that shares nothing with any thread, or only the query's own words: the order stays. */
const UNRELATED = ["the coffee machine on the third floor is broken again"];

forEachDatabase("search with the conversation as context", (getDb) => {
  /** The probe's threads stored in a new workspace, oldest first; the ids, and the asker's scope (a DM). */
  async function seed(p: Probe): Promise<{ ids: number[][]; scope: Scope }> {
    const ws = uniqueId("ws");
    const h = new HistoryStore(getDb());
    const t0 = Date.now() - 10 * 24 * 3600_000;
    const ids: number[][] = [];
    for (const [t, thread] of p.threads.entries()) {
      const row: number[] = [];
      for (const [k, text] of thread.entries()) {
        const opts: PlaceOptions = { workspace: ws, user: `U${k % 2}`, channel: `C${t}`, isDm: false };
        const inbound = inboundFor(opts, text, uniqueId("m"), new Date(t0 + t * 24 * 3600_000 + k * 60_000));
        const stored = await h.recordInbound(await h.resolve(inbound), inbound);
        row.push(stored!.id);
      }
      ids.push(row);
    }
    const asker = await h.resolve(inboundFor({ workspace: ws, user: "U9", channel: "D9", isDm: true }, "", uniqueId("m")));
    return { ids, scope: scopeOf(asker) };
  }
  const top = async (scope: Scope, query: string, context?: string[]) =>
    (await searchMessages(getDb(), scope, query, { limit: 10, ...(context ? { context } : {}) })).map((h) => h.messageId);

  for (const p of PROBES) {
    it(`${p.name}: the thread the asker is talking about comes first`, async () => {
      const { ids, scope } = await seed(p);
      const want = ids[p.expect[0]]![p.expect[1]]!;
      const without = await top(scope, p.query);
      // The probe is a real one: without context the other thread's message wins.
      expect(without[0]).not.toBe(want);
      const withContext = await top(scope, p.query, p.context);
      expect(withContext[0]).toBe(want);
      // Context reorders what the query found; it finds nothing the query did not.
      expect(new Set(withContext)).toEqual(new Set(without));
    });

    it(`${p.name}: context that names nothing here, or only the query's words, changes nothing`, async () => {
      const { scope } = await seed(p);
      const without = await top(scope, p.query);
      expect(await top(scope, p.query, UNRELATED)).toEqual(without);
      expect(await top(scope, p.query, [p.query])).toEqual(without);
      expect(await top(scope, p.query, [])).toEqual(without);
    });
  }
});
