/**
 * session_search's modes (query, session, around, recent) and filters (after, before, author,
 * channel), end to end: the fake model calls the tool in a real Core's turn, on SQLite and
 * PostgreSQL. The right messages come back, with the ids the other modes take; nothing outside the
 * asker's scope does (another person's DM, a listened channel they cannot read, another
 * workspace), and an id outside it answers exactly as an id that does not exist.
 */
import { beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";
import { coreHarness, toolResults } from "../support/agent.ts";
import { channelPlatform } from "../support/channel-platform.ts";
import { accessPolicy } from "../../src/admission/access.ts";
import { sessionKey } from "../../src/history/store/search.ts";

const ADMIN = "UADMIN";
const DAY = 24 * 60 * 60_000;
const ACCESS = accessPolicy({ admins: [`slack:${ADMIN}`], users: [], channels: [], roles: [] });

forEachDatabase("session_search modes", (getDb) => {
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null, access: ACCESS } });
  const dm = (user: string, name: string, ws = h.ws): PlaceOptions => ({ workspace: ws, user, channel: `D-${user}`, isDm: true, name });
  const thread = (user: string, name: string, ws = h.ws): PlaceOptions => ({ workspace: ws, user, channel: "CGEN", isDm: false, thread: "T1", name });
  /** Where Ana asks from: a conversation of its own, so what she said elsewhere is no part of the current session. */
  const asker = (user = "UANA", name = "Ana Lopez"): PlaceOptions => ({ workspace: h.ws, user, channel: "CASK", isDm: false, name });
  let other: string;

  const say = async (at: PlaceOptions, text: string): Promise<void> => {
    const r = await h.core.handle(inboundFor(at, text));
    expect(r.kind).toBe("reply");
  };

  /** The tool's result when the model calls session_search with `input` in a turn of `at`. */
  async function call(input: Record<string, unknown>, at: PlaceOptions = asker()): Promise<{ content: string; isError: boolean }> {
    h.fake.enqueue({ toolUse: [{ name: "session_search", input }] }, { text: "answered" });
    await h.core.handle(inboundFor(at, "what did we say?"));
    const [r] = toolResults(h.fake.lastRequest()!);
    return { content: r!.content, isError: r!.is_error };
  }
  const text = async (input: Record<string, unknown>, at?: PlaceOptions): Promise<string> => {
    const r = await call(input, at);
    expect(r.isError, r.content).toBe(false);
    return r.content;
  };
  /** The message with this text, as stored. */
  const stored = (contains: string, ws = h.ws) =>
    getDb().prisma.message.findFirstOrThrow({ where: { text: { contains }, conversation: { workspace: { externalId: ws } } }, orderBy: { id: "asc" } });
  /** Every result line carries its message and session ids. */
  const lines = (content: string): string[] => content.split("\n").filter((l) => /\[(msg|session) /.test(l));

  beforeEach(async () => {
    other = uniqueId("T2");
    // Ana and Ben in their DMs and in a channel thread; Carl only in his DM.
    await say(dm("UANA", "Ana Lopez"), "the kumquat budget is forty thousand");
    await say(dm("UANA", "Ana Lopez"), "and the kumquat vendor is Acme");
    await say(dm("UBEN", "Ben"), "my kumquat salary secret bensecret");
    await say(dm("UCARL", "Carl"), "carl kumquat diary carlsecret");
    await say(thread("UANA", "Ana Lopez"), "kumquat deploy on friday");
    await say(thread("UBEN", "Ben"), "kumquat rollback plan by ben");
    // Another workspace, the same platform ids and names.
    await say(dm("UANA", "Ana Lopez", other), "kumquat otherworkspace note");
    await say(thread("UBEN", "Ben", other), "kumquat otherworkspace rollback");
    // A listened channel Ana can read and Ben cannot.
    const p = channelPlatform("slack", h.ws);
    p.history.set("CPLAN", [p.message("CPLAN", "300.1", "UANA", "kumquat knowledge: the plan channel decided", new Date(Date.now() - DAY))]);
    p.members.set("CPLAN", new Set([ADMIN, "UANA"]));
    h.core.attach(p);
    expect((await h.core.command(inboundFor({ workspace: h.ws, user: ADMIN, channel: "CPLAN", isDm: false }), "listen", ["on"])).outcome).toBe("done");
    await h.core.learning.drain();
  });

  it("query: finds in scope, every line with its msg and session ids, and nothing of another DM or workspace", async () => {
    const found = await text({ query: "kumquat", limit: 20 });
    for (const l of lines(found)) expect(l).toMatch(/^\d+\. \[msg \d+ · session \S+ · \d{4}-\d\d-\d\d \d\d:\d\d UTC · /);
    expect(found).toContain("budget is forty");
    expect(found).toContain("deploy on friday");
    expect(found).toContain("rollback plan by ben");
    expect(found).toContain("the plan channel decided");
    for (const secret of ["bensecret", "carlsecret", "otherworkspace"]) expect(found).not.toContain(secret);
    // Ben cannot read the listened channel.
    expect(await text({ query: "kumquat", limit: 20 }, asker("UBEN", "Ben"))).not.toContain("plan channel");
  });

  it("session: reads one session in order, a page at a time, from the id a result carries", async () => {
    const found = await text({ query: "budget" });
    const key = /session (\S+) · [^\]]*your DM with cairn/.exec(found)![1]!;
    const whole = await text({ mode: "session", session_id: key });
    const order = lines(whole).map((l) => /\] (.*)$/.exec(l)![1]);
    // Ana's two messages, each followed by cairn's reply, in order.
    expect(order.filter((t) => t !== "ok")).toEqual(["the kumquat budget is forty thousand", "and the kumquat vendor is Acme"]);
    expect(lines(whole)[1]).toMatch(/· cairn\] ok$/);
    expect(whole).toContain("End of session.");
    // Two at a time: a cursor, then the rest, the same messages.
    const first = await text({ mode: "session", session_id: key, limit: 2 });
    const cursor = Number(/cursor (\d+)/.exec(first)![1]);
    const second = await text({ mode: "session", session_id: key, limit: 2, cursor });
    expect([...lines(first), ...lines(second)]).toEqual(lines(whole));
    // A listened channel's day reads as a session too, for its readers only.
    const kept = await stored("plan channel decided");
    const day = sessionKey(null, kept.conversationId, kept.createdAt);
    expect(await text({ mode: "session", session_id: day })).toContain("plan channel decided");
    expect(await text({ mode: "session", session_id: day }, asker("UBEN", "Ben"))).toBe(`Session "${day}": nothing you can read. Session ids appear in result lines as "session <id>".`);
  });

  it("around: the messages before and after one in its conversation", async () => {
    const deploy = await stored("deploy on friday");
    const near = await text({ mode: "around", message_id: deploy.id, window: 2 });
    const shown = lines(near);
    expect(shown.find((l) => l.startsWith(">> "))).toContain(`msg ${deploy.id} `);
    expect(near).toContain("rollback plan by ben");
    // Only the thread's messages: none of a DM.
    expect(near).not.toMatch(/budget|bensecret|your DM/);
    expect(lines(await text({ mode: "around", message_id: deploy.id, window: 1 }))).toHaveLength(2);
  });

  it("recent: the asker's sessions with their summaries, newest first; author narrows to sessions that person spoke in", async () => {
    const budget = await stored("budget is forty");
    await getDb().prisma.chatSession.update({ where: { id: budget.sessionId! }, data: { summary: "Ana set the kumquat budget and vendor" } });
    const recent = await text({ mode: "recent" });
    expect(recent).toContain(`session ${budget.sessionId}`);
    expect(recent).toContain("summary: Ana set the kumquat budget and vendor");
    expect(recent).toContain("began: kumquat deploy on friday");
    expect(recent).not.toMatch(/bensecret|carlsecret|otherworkspace/);
    const bens = await text({ mode: "recent", author: "Ben" });
    expect(bens).toContain("rollback plan by ben");
    expect(bens).not.toMatch(/bensecret|budget/);
  });

  it("filters: author, channel and dates narrow every mode; unreadable dates and unknown names are errors the model can act on", async () => {
    const byBen = await text({ query: "kumquat", author: "Ben", limit: 20 });
    expect(lines(byBen)).toHaveLength(1);
    expect(byBen).toContain("rollback plan by ben");
    expect(await text({ query: "kumquat", author: "UBEN", limit: 20 })).toContain("rollback plan by ben");
    // Mentions as a conversation writes them: Slack's <@U…> and <@U…|name>, Discord's <@!…>, @name.
    for (const mention of ["<@UBEN>", "<@UBEN|ben>", "<@!UBEN>", "@Ben"]) expect(lines(await text({ query: "kumquat", author: mention, limit: 20 })), mention).toEqual(lines(byBen));
    // A family name alone, in any case and with or without accents, names the person too.
    const byAna = lines(await text({ query: "kumquat", author: "Ana Lopez", limit: 20 }));
    expect(byAna.length).toBeGreaterThan(0);
    for (const name of ["Lopez", "LÓPEZ", "ana  lopez"]) expect(lines(await text({ query: "kumquat", author: name, limit: 20 })), name).toEqual(byAna);
    // Listing without words: the newest messages matching the filters.
    const inGen = await text({ channel: "<#CGEN>" });
    expect(inGen).toContain("rollback plan by ben");
    expect(inGen).not.toMatch(/budget|plan channel/);
    const mine = await text({ query: "kumquat", channel: "dm", limit: 20 });
    // Someone with no DM with cairn yet: nothing, not an error (their own DM is no name to get wrong).
    expect(await text({ channel: "dm" }, asker("UDAN", "Dan"))).toMatch(/^No earlier messages match these filters/);
    expect(mine).toContain("budget is forty");
    expect(mine).not.toMatch(/friday|plan channel|bensecret/);
    // Ben may not name the listened channel into his results (cairn's own post there is a chat message, his to read).
    expect(await text({ channel: "CPLAN" }, asker("UBEN", "Ben"))).not.toContain("plan channel decided");
    expect(await text({ channel: "CPLAN" })).toContain("plan channel decided");

    // Dates: Ana's DM happened ten days ago.
    const budget = await stored("budget is forty");
    await getDb().prisma.message.updateMany({ where: { sessionId: budget.sessionId }, data: { createdAt: new Date(Date.now() - 10 * DAY) } });
    const old = await text({ query: "kumquat", before: "3 days ago", limit: 20 });
    expect(old).toContain("budget is forty");
    expect(old).not.toMatch(/friday|plan channel/);
    const fresh = await text({ query: "kumquat", after: "yesterday", limit: 20 });
    expect(fresh).toContain("deploy on friday");
    expect(fresh).not.toContain("budget");
    const tenDaysAgo = new Date(Date.now() - 10 * DAY).toISOString().slice(0, 10);
    expect(await text({ mode: "session", session_id: budget.sessionId, after: tenDaysAgo })).toContain("budget is forty");
    expect(await text({ mode: "session", session_id: budget.sessionId, after: "today" })).toMatch(/nothing you can read matches these filters/);
    // A time copied from a result line ("2026-11-03 14:00 UTC") reads back as the minute it shows.
    const budgetLine = lines(old).find((l) => l.includes("budget is forty"))!;
    const budgetAt = /· (\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC) ·/.exec(budgetLine)![1]!;
    const since = await text({ query: "kumquat", after: budgetAt, limit: 20 });
    expect(since).toContain("budget is forty");
    expect(since).toContain("deploy on friday");
    const until = await call({ query: "kumquat", before: budgetAt, limit: 20 });
    expect(until.content).not.toMatch(/budget is forty|deploy on friday/);
    expect(await text({ query: "kumquat", after: "last 2 days", limit: 20 })).not.toContain("budget is forty");

    const bad = await call({ query: "kumquat", after: "sometime soonish" });
    expect(bad.isError).toBe(true);
    expect(bad.content).toMatch(/^after: "sometime soonish" is not a date I can read\. Write an ISO date/);
    // Carl wrote only in his own DM: to Ana he is nobody, exactly as a name no one has.
    const carl = await call({ query: "kumquat", author: "Carl" });
    const nobody = await call({ query: "kumquat", author: "Zed" });
    expect(carl.isError).toBe(true);
    expect(carl.content.replace("Carl", "X")).toBe(nobody.content.replace("Zed", "X"));
  });

  it("a model's wrong call is an error naming the fix", async () => {
    const noId = await call({ mode: "session" });
    expect(noId.isError).toBe(true);
    expect(noId.content).toMatch(/'session_id': mode "session" needs session_id/);
    const wrongMode = await call({ message_id: 5 });
    expect(wrongMode.content).toMatch(/'message_id': message_id is read only with mode "around": set mode to "around"/);
    expect((await call({ mode: "around", message_id: 1, window: 50 })).content).toMatch(/'window'/);
    expect((await call({ mode: "around", message_id: 1, limit: 3 })).content).toMatch(/'limit': mode "around" reads window/);
    expect((await call({ mode: "recent", limit: 40 })).content).toMatch(/'limit': with mode "recent", limit is at most 20/);
    expect((await call({})).content).toMatch(/mode "query" needs query words, or at least one filter/);
  });

  it("an id outside the asker's scope answers exactly as one that does not exist, in every mode", async () => {
    const bens = await stored("bensecret");
    const elsewhere = await stored("otherworkspace note", other);
    const missingSession = await text({ mode: "session", session_id: "nosuchsession" });
    for (const key of [bens.sessionId!, elsewhere.sessionId!, sessionKey(null, bens.conversationId, bens.createdAt)]) {
      expect((await text({ mode: "session", session_id: key })).replace(key, "nosuchsession")).toBe(missingSession);
    }
    const maxId = (await getDb().prisma.message.aggregate({ _max: { id: true } }))._max.id!;
    const missing = await text({ mode: "around", message_id: maxId + 1000 });
    for (const id of [bens.id, elsewhere.id]) expect((await text({ mode: "around", message_id: id })).replace(String(id), String(maxId + 1000))).toBe(missing);
    const kept = await stored("plan channel decided");
    expect((await text({ mode: "around", message_id: kept.id }, asker("UBEN", "Ben"))).replace(String(kept.id), String(maxId + 1000))).toBe(missing);
    // Filters cannot reach past the scope either: another person's DM answers as a channel that does not exist.
    const noChannel = async (input: Record<string, unknown>, at?: PlaceOptions): Promise<string> => {
      const r = await call(input, at);
      expect(r.isError, r.content).toBe(true);
      return r.content.replace(String(input.channel), "X");
    };
    expect(await noChannel({ channel: "D-UBEN" })).toBe(await noChannel({ channel: "D-NOBODY" }));
    expect(await noChannel({ author: "UANA", channel: "D-UANA" }, asker("UBEN", "Ben"))).toBe(await noChannel({ author: "UANA", channel: "CNOPE" }, asker("UBEN", "Ben")));
    expect(await noChannel({ mode: "recent", channel: "D-UBEN" })).toBe(await noChannel({ mode: "recent", channel: "D-NOBODY" }));
    // A channel named as people say it, not as results show it, is an error naming the fix, not an empty result.
    expect(await noChannel({ query: "kumquat", channel: "#general" })).toMatch(/^No channel "X" with messages you can read\. Name a channel as results show it/);
    // A channel the asker can read, with nothing inside the other filters: no error, just nothing.
    expect(await text({ query: "kumquat", channel: "CGEN", before: "2020-01-01" })).toMatch(/^No earlier messages match "kumquat" with these filters/);
  });

  it("tells the turn what every mode showed (why this answer?)", async () => {
    const deploy = await stored("deploy on friday");
    h.fake.enqueue(
      { toolUse: [{ name: "session_search", input: { mode: "around", message_id: deploy.id, window: 1 } }, { name: "session_search", input: { mode: "recent" } }] },
      { text: "answered" },
    );
    const r = await h.core.handle(inboundFor(asker(), "what happened?"));
    if (r.kind !== "reply") throw new Error("no reply");
    const trace = await getDb().prisma.replyTrace.findUniqueOrThrow({ where: { messageId: r.reply.replyMessageId! } });
    const searches = JSON.parse(trace.searches) as { query: string; messageIds: number[] }[];
    expect(searches.map((s) => s.query)).toEqual([`around msg ${deploy.id}`, "recent sessions"]);
    expect(searches[0]!.messageIds).toContain(deploy.id);
    expect(searches[1]!.messageIds.length).toBeGreaterThan(0);
  });
});
