/**
 * session_search's filters inside the search itself: a query narrowed by author, channel or dates
 * finds its matches even where many better matches outside the filters come first. The filters are
 * part of the statements that find candidates (search-sqlite.ts, search-postgres.ts), not a sieve
 * over the best few hundred of the whole workspace. On SQLite and PostgreSQL.
 */
import { beforeAll, expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { HistoryStore } from "../../src/history/store/store.ts";
import { sessionSearchTool } from "../../src/tools/search.ts";
import { ToolRegistry, type ToolContext } from "../../src/tools/registry.ts";
import { postgresQueries } from "../../src/history/store/search-postgres.ts";
import { sqliteQueries } from "../../src/history/store/search-sqlite.ts";
import type { Ctx } from "../../src/history/store/search-queries.ts";
import { analyzeQuery } from "../../src/history/query.ts";

const DAY = 24 * 60 * 60_000;
/** Ben's strong matches: more than a search reads as candidates (400) and than it used to rank before filtering (200). */
const CROWD = 450;

forEachDatabase("session_search filters inside the search", (getDb) => {
  let tools: ToolRegistry;
  let ctx: ToolContext;
  let history: HistoryStore;
  const ws = uniqueId("ws");
  const ben: PlaceOptions = { workspace: ws, user: "UBEN", name: "Ben", channel: "CTEAM", isDm: false };
  const ana: PlaceOptions = { workspace: ws, user: "UANA", name: "Ana Lopez", channel: "COPS", isDm: false };

  beforeAll(async () => {
    history = new HistoryStore(getDb());
    const say = async (at: PlaceOptions, text: string, sentAt: Date) => {
      const msg = inboundFor(at, text, uniqueId("m"), sentAt);
      expect(await history.recordInbound(await history.resolve(msg), msg)).not.toBeNull();
    };
    // Ana's two, long and forty days old: each holds "deploy" once among many other words.
    await say(ana, "about the outage review we agreed the deploy freeze stays until the payments team signs off on the new runbook and the pager rota", new Date(Date.now() - 40 * DAY));
    await say(ana, "reminder for everyone reading later: the quarterly audit asked why the deploy happened on a friday evening without a second reviewer present", new Date(Date.now() - 40 * DAY + 60_000));
    // Right after Ana's first, in her channel: Ben's reply, which matches too (a neighbour of hers).
    await say({ ...ben, channel: "COPS" }, "deploy deploy noted", new Date(Date.now() - 40 * DAY + 30_000));
    // Ben's crowd: short, recent, "deploy" twice each. A search for "deploy" ranks these first.
    for (let i = 0; i < CROWD; i++) await say(ben, `deploy deploy checklist ${i}`, new Date(Date.now() - (CROWD - i) * 60_000));
    // Stored last, written long ago (as a listened channel's backfill stores them): the newest id, the oldest date.
    await say({ ...ben, channel: "CARCHIVE" }, "archived note: the first deploy of the year", new Date(Date.now() - 90 * DAY));
    const { scope } = await place(getDb(), { workspace: ws, user: "UASK", name: "Asker", channel: "CASK", isDm: false });
    tools = new ToolRegistry([sessionSearchTool(history)]);
    ctx = { scope, sourceMessageId: null, sessionId: "s-asker", speakerName: "Asker" };
  }, 120_000);

  /** The texts a session_search call returned, best first (without the snippet's marks on matched words). */
  async function found(input: Record<string, unknown>): Promise<string[]> {
    const r = await tools.execute("session_search", input, ctx);
    expect(r.isError, r.content).toBe(false);
    return [...r.content.matchAll(/^\d+\. \[msg [^\]]*\] (.*)$/gm)].map((m) => m[1]!.replace(/[«»]/g, ""));
  }

  it("without filters, Ben's crowd fills the results (the case the filters must see past)", async () => {
    const texts = await found({ query: "deploy", limit: 20 });
    expect(texts).toHaveLength(20);
    expect(texts.every((t) => t.startsWith("deploy deploy"))).toBe(true);
  });

  it("author: Ana's matches, and only hers, behind hundreds of better ones by someone else", async () => {
    const texts = await found({ query: "deploy", author: "Ana", limit: 10 });
    expect(texts).toHaveLength(2);
    expect(texts.join("\n")).toMatch(/deploy freeze/);
    expect(texts.join("\n")).toMatch(/friday evening/);
  });

  it("dates: the matches before a day, behind hundreds of newer ones", async () => {
    const texts = await found({ query: "deploy", before: "30 days ago", limit: 10 });
    expect(texts.sort()).toEqual([
      "about the outage review we agreed the deploy freeze stays until the payments team signs off on the new runbook and the pager rota",
      "archived note: the first deploy of the year",
      "deploy deploy noted",
      "reminder for everyone reading later: the quarterly audit asked why the deploy happened on a friday evening without a second reviewer present",
    ]);
    const recent = await found({ query: "deploy", after: "30 days ago", limit: 20 });
    expect(recent).toHaveLength(20);
    expect(recent.every((t) => t.startsWith("deploy deploy checklist"))).toBe(true);
    // Between two dates: the stored-last message is the only one of its month, found by both bounds at once.
    expect(await found({ query: "deploy", after: "100 days ago", before: "60 days ago", limit: 10 })).toEqual(["archived note: the first deploy of the year"]);
    expect(await found({ query: "deploy", after: "89 days ago", before: "60 days ago", limit: 10 })).toEqual([]);
  });

  it("channel: a quiet channel's matches behind a busy one's", async () => {
    const texts = await found({ query: "deploy", channel: "COPS", limit: 10 });
    expect(texts).toHaveLength(3);
    // A full page of matches of the channel, fewer than asked of the crowd's: only the quiet one's come back.
    expect(texts.filter((t) => t.startsWith("deploy deploy checklist"))).toEqual([]);
  });

  it("a channel read by its id (more conversations than are read by id) finds what reading by its conversations' ids finds", async () => {
    const ids = await history.browse.channelConversations(ctx.scope, [], "COPS");
    const byIds = await history.search(ctx.scope, "deploy", { limit: 10, filter: { channel: "COPS", conversationIds: ids } });
    const byChannel = await history.search(ctx.scope, "deploy", { limit: 10, filter: { channel: "COPS" } });
    expect(byIds.map((h) => h.messageId)).toHaveLength(3);
    expect(byChannel.map((h) => h.messageId)).toEqual(byIds.map((h) => h.messageId));
  });

  it("every statement that finds candidates takes the filters: unranked and ranked, rare and common words, CJK", async () => {
    const queries = getDb().provider === "sqlite" ? sqliteQueries : postgresQueries;
    const ana = (await history.browse.authorsNamed(ctx.scope, [], "Ana"))[0]!;
    const c: Ctx = { database: getDb(), scope: ctx.scope, exclude: "", readable: "[]", filter: { authorIds: [ana], before: new Date(Date.now() - 30 * DAY) } };
    for (const [ranked, common, fits] of [[false, false, false], [false, false, true], [true, false, false], [true, true, false]] as const) {
      const rows = await queries.lexical(c, ["deploy"], 400, ranked, common, fits);
      expect(rows.map((r) => r[2]), `ranked ${ranked}, common ${common}, fits ${fits}`).toEqual([ana, ana]);
    }
    // No CJK text here: the statements run with the filters' parameters, and find nothing.
    expect(await queries.cjk(c, analyzeQuery("部署 部署计划"), 50)).toEqual([]);
  });

  it("filters together, and a full page when the filters let more through than asked", async () => {
    expect(await found({ query: "deploy", author: "Ana", channel: "COPS", before: "30 days ago", limit: 10 })).toHaveLength(2);
    expect(await found({ query: "deploy", author: "Ana", channel: "COPS", after: "30 days ago", limit: 10 })).toEqual([]);
    const bens = await found({ query: "deploy", author: "Ben", channel: "CTEAM", limit: 20 });
    expect(bens).toHaveLength(20);
    // Ben's reply in Ana's channel lends her first message score as its neighbour; it is no result of a filter on Ana.
    expect(await found({ query: "deploy", author: "Ana", limit: 10 })).not.toContain("deploy deploy noted");
  });
});
