/**
 * Messages and replies that arrive together (src/history/store/message-batch.ts): they are stored
 * together, in fewer transactions than messages (one statement over the rows: arrays on PostgreSQL,
 * a JSON array on SQLite); each is stored once, as written and found by search at once, with the id its row has, a
 * duplicate is told so, a message the database refuses fails alone, and a reply under a lease
 * another process took is not stored.
 */
import { expect, it } from "vitest";
import type { SqlParam } from "../../src/db/direct.ts";
import { HistoryStore, scopeOf, type Place } from "../../src/history/store/store.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { forEachDatabase, inboundFor, uniqueId, type PlaceOptions } from "../support/db.ts";

forEachDatabase("messages and replies stored as they arrive together", (getDb) => {
  async function setUp(conversations: number) {
    const db = getDb();
    // Transactions: a statement alone is one, and so is a batch of them (`each`).
    let statements = 0;
    const direct = {
      ...db.direct,
      rows: (sql: string, params: readonly SqlParam[]) => (statements++, db.direct.rows(sql, params)),
      each: (sql: string, lists: readonly (readonly SqlParam[])[]) => (statements++, db.direct.each(sql, lists)),
    };
    const history = new HistoryStore({ ...db, direct });
    const workspace = uniqueId("ws");
    const places: { o: PlaceOptions; place: Place }[] = [];
    for (let c = 0; c < conversations; c++) {
      const o: PlaceOptions = { workspace, user: `U${c}`, channel: `C${c}`, isDm: false };
      places.push({ o, place: await history.resolve(inboundFor(o, "hello")) });
    }
    statements = 0;
    return { db, history, places, statements: () => statements };
  }

  it("stores each message of a burst once, with its row's id, in fewer transactions than messages", async () => {
    const t = await setUp(60);
    const sent = t.places.map(({ o, place }, c) => ({ place, inbound: inboundFor(o, `question ${c}`, uniqueId(`m${c}`)) }));
    const stored = await Promise.all(sent.map(({ place, inbound }) => t.history.recordInbound(place, inbound)));
    expect(stored.every((m) => m !== null)).toBe(true);
    expect(new Set(stored.map((m) => m!.id)).size).toBe(60);
    const rows = await t.db.prisma.message.findMany({ where: { platformId: { in: sent.map((s) => s.inbound.messageId) } } });
    expect(rows).toHaveLength(60);
    for (const [c, m] of stored.entries()) {
      const row = rows.find((r) => r.id === m!.id);
      expect(row).toMatchObject({ platformId: sent[c]!.inbound.messageId, text: `question ${c}`, conversationId: sent[c]!.place.conversation.id, authorId: sent[c]!.place.person.id, role: "user", status: "received" });
      expect(m).toEqual(row);
    }
    expect(t.statements()).toBeLessThan(30);
  });

  it("stores a burst's texts as written, whatever JSON or SQL would escape, and search finds each at once", async () => {
    const t = await setUp(8);
    const texts = [
      'the "quoted" rollout plan, with a \\ backslash',
      "a line\nbreak in the rollout notes\ttabbed",
      "rollout emoji 🚀🎉 and a ␀ where a NUL was",
      "部署计划 rollout 明天开始",
      "rollout [1, 2, {\"json\": null}] looks like JSON",
      "O'Brien's rollout; DROP TABLE Message; --",
      "ünïcödé rollout with accents",
      "rollout " + "long ".repeat(2_000),
    ];
    const sent = t.places.map(({ o, place }, c) => ({ place, inbound: inboundFor(o, texts[c]!, uniqueId(`m${c}`)) }));
    const stored = await Promise.all(sent.map(({ place, inbound }) => t.history.recordInbound(place, inbound)));
    expect(t.statements()).toBeLessThan(texts.length);
    const rows = await t.db.prisma.message.findMany({ where: { id: { in: stored.map((m) => m!.id) } } });
    for (const [c, m] of stored.entries()) expect(rows.find((r) => r.id === m!.id)?.text).toBe(texts[c]);
    // Indexed as they were stored: the full-text index (and CJK's) hold every one of them.
    const found = async (query: string): Promise<number[]> => (await searchMessages(t.db, scopeOf(t.places[0]!.place), query, { limit: 20 })).map((h) => h.messageId).sort((a, b) => a - b);
    expect(await found("rollout")).toEqual(stored.map((m) => m!.id).sort((a, b) => a - b));
    expect(await found("部署计划")).toEqual([stored[3]!.id]);
    expect(await found("O'Brien")).toEqual([stored[5]!.id]);
  });

  it("stores a message delivered twice in one burst once: the second is told it is a duplicate", async () => {
    const t = await setUp(20);
    const twice = t.places[10]!;
    const id = uniqueId("dup");
    const burst = t.places.map(({ o, place }, c) => t.history.recordInbound(place, inboundFor(o, `q${c}`, c === 10 ? id : uniqueId(`m${c}`))));
    const again = t.history.recordInbound(twice.place, inboundFor(twice.o, "q10", id));
    const [stored, second] = await Promise.all([Promise.all(burst), again]);
    expect(stored[10]).not.toBeNull();
    expect(second).toBeNull();
    expect(await t.db.prisma.message.count({ where: { platformId: id } })).toBe(1);
    expect(stored.filter((m) => m === null)).toHaveLength(0);
  });

  it("fails only the message the database refuses; the rest of its burst is stored", async () => {
    const t = await setUp(40);
    // A conversation deleted after its place was read: its message's row would have no conversation.
    const gone = t.places[30]!;
    await t.db.prisma.conversation.delete({ where: { id: gone.place.conversation.id } });
    const results = await Promise.allSettled(t.places.map(({ o, place }, c) => t.history.recordInbound(place, inboundFor(o, `q${c}`, uniqueId(`m${c}`)))));
    expect(results[30]!.status).toBe("rejected");
    const stored = results.filter((r, c) => c !== 30 && r.status === "fulfilled" && r.value !== null);
    expect(stored).toHaveLength(39);
    expect(await t.db.prisma.message.count({ where: { conversationId: { in: t.places.map((p) => p.place.conversation.id) }, role: "user" } })).toBe(39);
  });

  it("stores each reply of a burst once, with its row's id, marking its message answered", async () => {
    const t = await setUp(50);
    const asked = await Promise.all(t.places.map(({ o, place }, c) => t.history.recordInbound(place, inboundFor(o, `q${c}`, uniqueId(`m${c}`)))));
    const session = await t.db.prisma.chatSession.create({ data: { conversationId: t.places[0]!.place.conversation.id } });
    const before = t.statements();
    const replies = await Promise.all(t.places.map(({ place }, c) => t.history.recordReply(place, session.id, asked[c]!.id, `answer ${c}`, "sent")));
    const sent = t.statements() - before;
    const rows = await t.db.prisma.message.findMany({ where: { id: { in: replies.map((r) => r.id) } } });
    expect(rows).toHaveLength(50);
    for (const [c, r] of replies.entries()) {
      expect(rows.find((row) => row.id === r.id)).toEqual(r);
      expect(r).toMatchObject({ replyToId: asked[c]!.id, text: `answer ${c}`, role: "assistant", conversationId: t.places[c]!.place.conversation.id });
    }
    const answered = await t.db.prisma.message.findMany({ where: { id: { in: asked.map((m) => m!.id) } } });
    expect(answered.every((m) => m.status === "answered")).toBe(true);
    expect(sent).toBeLessThan(25);
  });

  it("stores a burst of replies under a lease only where the lease is still this process's", async () => {
    const t = await setUp(30);
    const lease = { owner: uniqueId("owner"), until: new Date(Date.now() + 60_000) };
    const session = await t.db.prisma.chatSession.create({ data: { conversationId: t.places[0]!.place.conversation.id } });
    const asked = await Promise.all(t.places.map(({ o, place }, c) => t.history.recordInbound(place, inboundFor(o, `q${c}`, uniqueId(`m${c}`)), session.id, lease)));
    // Another process took over the turns of two of them.
    const taken = [asked[7]!.id, asked[21]!.id];
    await t.db.prisma.message.updateMany({ where: { id: { in: taken } }, data: { leaseOwner: "another-process" } });
    const before = t.statements();
    const replies = await Promise.all(t.places.map(({ place }, c) => t.history.recordReply(place, session.id, asked[c]!.id, `answer ${c}`, "sent", lease)));
    expect(t.statements() - before).toBeLessThan(15);
    expect(replies.filter((r) => r === null)).toHaveLength(2);
    expect(replies[7]).toBeNull();
    expect(replies[21]).toBeNull();
    const stored = await t.db.prisma.message.findMany({ where: { role: "assistant", replyToId: { in: asked.map((m) => m!.id) } } });
    expect(stored).toHaveLength(28);
    const byId = (a: number, b: number): number => a - b;
    expect(stored.map((m) => m.replyToId!).sort(byId)).toEqual(asked.map((m) => m!.id).filter((id) => !taken.includes(id)).sort(byId));
    for (const r of replies) if (r) expect(stored.find((m) => m.id === r.id)).toEqual(r);
  });
});
