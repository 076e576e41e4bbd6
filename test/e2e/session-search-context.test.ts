/**
 * session_search ranks by the conversation around it, end to end (issue 29, item 2): the fake model
 * searches with a short query in a real Core's turn, and what the speaker said just before decides
 * between two threads that answer the query alike. On SQLite and PostgreSQL.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, toolResults } from "../support/agent.ts";

forEachDatabase("session_search with the conversation as context", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null } });
  const at = (user: string, channel: string): PlaceOptions => ({ workspace: h.ws, user, channel, isDm: false, name: user });

  const say = async (where: PlaceOptions, text: string): Promise<void> => {
    expect((await h.core.handle(inboundFor(where, text))).kind).toBe("reply");
  };
  /** The first result line when the model searches `query` in the turn of `text` at `where`. */
  async function firstHit(where: PlaceOptions, text: string, query: string): Promise<string> {
    h.fake.enqueue({ toolUse: [{ name: "session_search", input: { query, limit: 3 } }] }, { text: "answered" });
    await h.core.handle(inboundFor(where, text));
    const [r] = toolResults(h.fake.lastRequest()!);
    expect(r!.is_error, r!.content).toBe(false);
    return r!.content.split("\n").find((l) => /^1\. \[msg /.test(l)) ?? "";
  }

  it("what the speaker just said picks the thread they mean; without it, the newer thread wins the tie", async () => {
    await say(at("UPAY", "CPAY"), "payments: we decided to ship the release every Tuesday after the freeze");
    await say(at("UPAY2", "CPAY"), "ok, Tuesdays work for the card processor changes too");
    await say(at("USRCH", "CSRCH"), "search: we decided to ship the release nightly from main");
    await say(at("USRCH2", "CSRCH"), "nightly is fine for the indexer as well");

    // Ana has been talking about the card processor in this thread; the model's query does not say so.
    const ana = at("UANA", "CASK");
    await say(ana, "the card processor folks are asking when their changes go out");
    expect(await firstHit(ana, "what did we decide?", "decided ship release")).toContain("every Tuesday after the freeze");

    // Ben asks the same with nothing said before: the newer of the two alike answers comes first.
    expect(await firstHit(at("UBEN", "CBEN"), "what did we decide?", "decided ship release")).toContain("nightly from main");
  });
});
