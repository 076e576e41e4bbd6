/**
 * HistoryStore and searchMessages against a real database: FTS5 on SQLite, tsvector on PostgreSQL.
 * Every test works in its own workspace (unique external id), so searches never see other tests.
 */
import { describe, expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import type { Message } from "../../src/db/generated/sqlite/client.ts";
import { searchMessages, type SearchOptions } from "../../src/history/store/search.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { MemoryStore } from "../../src/memory/store.ts";
import { SkillStore } from "../../src/skills/store.ts";
import { forEachDatabase, inboundFor, place, resetData, uniqueId, type Database, type PlaceOptions } from "../support/db.ts";

const OPTS: SearchOptions = { limit: 10 };

forEachDatabase("history and search", (getDb) => {
  const history = () => new HistoryStore(getDb());

  /** Resolves the place for `opts` and stores `text` as a person's message there. */
  async function say(db: Database, opts: PlaceOptions, text: string, messageId = uniqueId("m")): Promise<{ message: Message; scope: Scope }> {
    const inbound = inboundFor(opts, text, messageId);
    const h = new HistoryStore(db);
    const resolved = await h.resolve(inbound);
    const message = await h.recordInbound(resolved, inbound);
    if (!message) throw new Error(`message ${messageId} was a duplicate`);
    return { message, scope: scopeOf(resolved) };
  }

  const search = (scope: Scope, query: string, opts: SearchOptions = OPTS) => searchMessages(getDb(), scope, query, opts);
  const ids = async (scope: Scope, query: string, opts: SearchOptions = OPTS) => (await search(scope, query, opts)).map((h) => h.messageId);

  describe("HistoryStore", () => {
    it("resolve() is idempotent and updates a changed display name", async () => {
      const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false, name: "Ada" };
      const a = await place(getDb(), opts);
      const b = await place(getDb(), opts);
      expect(b.scope).toEqual(a.scope);
      expect([b.place.workspace.id, b.place.person.id, b.place.conversation.id]).toEqual([a.place.workspace.id, a.place.person.id, a.place.conversation.id]);
      expect(a.place.person.displayName).toBe("Ada");
      const renamed = await place(getDb(), { ...opts, name: "Ada L." });
      expect(renamed.place.person.id).toBe(a.place.person.id);
      expect(renamed.place.person.displayName).toBe("Ada L.");
      const row = await getDb().prisma.person.findUniqueOrThrow({ where: { id: a.place.person.id } });
      expect(row.displayName).toBe("Ada L.");
      expect(row.updatedAt.getTime()).toBeGreaterThanOrEqual(a.place.person.updatedAt.getTime());
      expect(renamed.place.person.updatedAt.getTime()).toBe(row.updatedAt.getTime());
    });

    it("keeps a conversation's last message time to the minute, in the row", async () => {
      const db = getDb();
      const h = new HistoryStore(db);
      const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
      const at = (ms: number, text: string) => ({ ...inboundFor(opts, text, uniqueId("m")), sentAt: new Date(ms) });
      const t0 = Date.UTC(2030, 0, 1, 9);
      const first = at(t0, "one");
      const p = await h.resolve(first);
      await h.recordInbound(p, first);
      const lastOf = async () => (await db.prisma.conversation.findUniqueOrThrow({ where: { id: p.conversation.id } })).lastMessageAt.getTime();
      expect(await lastOf()).toBe(t0);
      // Within the minute: not written again; a minute on: written.
      await h.recordInbound(await h.resolve(at(t0 + 30_000, "two")), at(t0 + 30_000, "two"));
      expect(await lastOf()).toBe(t0);
      await h.recordInbound(await h.resolve(at(t0 + 90_000, "three")), at(t0 + 90_000, "three"));
      expect(await lastOf()).toBe(t0 + 90_000);
    });

    it("resolve() keeps DMs per person and threads per conversation", async () => {
      const ws = uniqueId("ws");
      const dmA = await place(getDb(), { workspace: ws, user: "UA", channel: "D1", isDm: true });
      const dmB = await place(getDb(), { workspace: ws, user: "UB", channel: "D1", isDm: true });
      expect(dmA.place.conversation.id).not.toBe(dmB.place.conversation.id);
      expect(dmA.place.conversation).toMatchObject({ isDm: true, ownerId: dmA.place.person.id, threadId: null });
      const main = await place(getDb(), { workspace: ws, user: "UA", channel: "C1", isDm: false });
      const thread = await place(getDb(), { workspace: ws, user: "UB", channel: "C1", isDm: false, thread: "171.5" });
      expect(thread.place.conversation.id).not.toBe(main.place.conversation.id);
      expect(thread.place.conversation).toMatchObject({ isDm: false, ownerId: null, threadId: "171.5", channelId: "C1" });
      expect(thread.scope.channelKey).toBe(main.scope.channelKey);
    });

    it("concurrent resolve() of a new workspace, person and conversation creates one row each", async () => {
      const db = getDb();
      const ws = uniqueId("ws");
      const opts: PlaceOptions = { platform: "discord", workspace: ws, user: "U-new", channel: "C-new", isDm: false };
      const results = await Promise.all(Array.from({ length: 5 }, () => history().resolve(inboundFor(opts))));
      const first = results[0];
      if (!first) throw new Error("no result");
      for (const r of results) {
        expect([r.workspace.id, r.person.id, r.conversation.id]).toEqual([first.workspace.id, first.person.id, first.conversation.id]);
      }
      expect(await db.prisma.workspace.count({ where: { platform: "discord", externalId: ws } })).toBe(1);
      expect(await db.prisma.person.count({ where: { workspaceId: first.workspace.id } })).toBe(1);
      expect(await db.prisma.conversation.count({ where: { workspaceId: first.workspace.id } })).toBe(1);
    });

    it("recordInbound() stores a platform message once: a retry returns null", async () => {
      const db = getDb();
      const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
      const inbound = inboundFor(opts, "hello there", "1700000000.000200");
      const resolved = await history().resolve(inbound);
      const first = await history().recordInbound(resolved, inbound);
      expect(first).toMatchObject({ text: "hello there", platformId: "1700000000.000200", role: "user", status: "received", authorId: resolved.person.id });
      const retry = await history().recordInbound(resolved, { ...inbound, text: "hello there (retry)" });
      expect(retry).toBeNull();
      const rows = await db.prisma.message.findMany({ where: { conversationId: resolved.conversation.id } });
      expect(rows.map((m) => m.text)).toEqual(["hello there"]);
      // The same platform id in another conversation is a different message.
      const other = await place(db, { ...opts, channel: "C2" });
      expect(await history().recordInbound(other.place, inbound)).not.toBeNull();
    });
  });

  describe("searchMessages", () => {
    it("finds a message by a word, with a highlighted snippet", async () => {
      const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false, name: "Ada" };
      const { message, scope } = await say(getDb(), opts, "the quarterly zebrafish report is late");
      await say(getDb(), opts, "nothing relevant here");
      const hits = await search(scope, "zebrafish");
      expect(hits).toHaveLength(1);
      expect(hits[0]).toMatchObject({ messageId: message.id, conversationId: scope.conversationId, isDm: false, channelId: "C1", threadId: null, role: "user", author: "Ada" });
      expect(hits[0]?.snippet).toContain("«zebrafish»");
      expect(hits[0]?.createdAt).toBeInstanceOf(Date);
      expect(await search(scope, "giraffe")).toEqual([]);
    });

    it("matches stemmed variants: 'deployed payment' finds 'deploying the payments service'", async () => {
      const ws = uniqueId("ws");
      const { message, scope } = await say(getDb(), { workspace: ws, user: "U1", channel: "C1", isDm: false }, "deploying the payments service");
      await say(getDb(), { workspace: ws, user: "U1", channel: "C1", isDm: false }, "lunch menu for friday");
      const hits = await search(scope, "deployed payment");
      expect(hits.map((h) => h.messageId)).toEqual([message.id]);
      expect(hits[0]?.snippet).toMatch(/«deploying»/);
      expect(hits[0]?.snippet).toMatch(/«payments»/);
    });

    it("ranks a message matching more terms first and honours the limit", async () => {
      const ws = uniqueId("ws");
      const opts: PlaceOptions = { workspace: ws, user: "U1", channel: "C1", isDm: false };
      const one = await say(getDb(), opts, "kafka broker restarted");
      const both = await say(getDb(), opts, "kafka broker and zookeeper quorum lost");
      const hits = await ids(both.scope, "zookeeper kafka");
      expect(hits).toEqual([both.message.id, one.message.id]);
      expect(await ids(both.scope, "zookeeper kafka", { limit: 1 })).toEqual([both.message.id]);
    });

    describe("scope", () => {
      it("keeps a person's DM from another person of the same workspace", async () => {
        const db = getDb();
        const ws = uniqueId("ws");
        const { message, scope: aDm } = await say(db, { workspace: ws, user: "UA", channel: "D-A", isDm: true }, "my secret word is xylophonic");
        const aChannel = (await place(db, { workspace: ws, user: "UA", channel: "C1", isDm: false })).scope;
        const bDm = (await place(db, { workspace: ws, user: "UB", channel: "D-B", isDm: true })).scope;
        const bChannel = (await place(db, { workspace: ws, user: "UB", channel: "C1", isDm: false })).scope;
        // Even a DM place whose channel id equals A's does not open A's DM to B.
        const bSameChannel = (await place(db, { workspace: ws, user: "UB", channel: "D-A", isDm: true })).scope;
        expect(await ids(bDm, "xylophonic")).toEqual([]);
        expect(await ids(bChannel, "xylophonic")).toEqual([]);
        expect(await ids(bSameChannel, "xylophonic")).toEqual([]);
        expect(await ids(aDm, "xylophonic")).toEqual([message.id]);
        expect(await ids(aChannel, "xylophonic")).toEqual([message.id]);
        expect((await search(aChannel, "xylophonic"))[0]?.isDm).toBe(true);
      });

      it("keeps a workspace's messages from another workspace", async () => {
        const db = getDb();
        const { message, scope: w1 } = await say(db, { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false }, "the quokka migration finished");
        // Same platform ids for user and channel, different workspace.
        const w2 = (await place(db, { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false })).scope;
        expect(await ids(w2, "quokka")).toEqual([]);
        expect(await ids(w1, "quokka")).toEqual([message.id]);
      });

      it("finds a channel message for another person of the same workspace, from any conversation", async () => {
        const db = getDb();
        const ws = uniqueId("ws");
        const { message } = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false, thread: "9.1", name: "Ann" }, "the capybara dashboard moved");
        const bDm = (await place(db, { workspace: ws, user: "UB", channel: "D-B", isDm: true })).scope;
        const bOther = (await place(db, { workspace: ws, user: "UB", channel: "C2", isDm: false })).scope;
        for (const scope of [bDm, bOther]) {
          const hits = await search(scope, "capybara");
          expect(hits.map((h) => [h.messageId, h.channelId, h.threadId, h.author])).toEqual([[message.id, "C1", "9.1", "Ann"]]);
        }
      });
    });

    it("leaves out the messages of excludeSessionId, and failed messages", async () => {
      const db = getDb();
      const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
      const inSession = await say(db, opts, "the walrus alert fired");
      const older = await say(db, opts, "walrus alert was noisy last week too");
      const failed = await say(db, opts, "walrus walrus walrus");
      const session = await db.prisma.chatSession.create({ data: { conversationId: inSession.scope.conversationId } });
      // An ended one: a conversation has one open session at a time (a unique index).
      const oldSession = await db.prisma.chatSession.create({ data: { conversationId: inSession.scope.conversationId, endedAt: new Date() } });
      await db.prisma.message.update({ where: { id: inSession.message.id }, data: { sessionId: session.id, status: "answered" } });
      await db.prisma.message.update({ where: { id: older.message.id }, data: { sessionId: oldSession.id, status: "answered" } });
      await db.prisma.message.update({ where: { id: failed.message.id }, data: { sessionId: oldSession.id, status: "failed" } });
      const reply = await history().recordReply((await place(db, opts)).place, session.id, inSession.message.id, "Yes, the walrus alert is flapping.", "sent");

      const scope = inSession.scope;
      expect((await ids(scope, "walrus")).sort((a, b) => a - b)).toEqual([inSession.message.id, older.message.id, reply.id]);
      expect(await ids(scope, "walrus", { limit: 10, excludeSessionId: session.id })).toEqual([older.message.id]);
      expect(await ids(scope, "walrus", { limit: 10, excludeSessionId: null })).toHaveLength(3);
      const replyHit = (await search(scope, "flapping"))[0];
      expect(replyHit).toMatchObject({ messageId: reply.id, role: "assistant", author: null });
    });

    it("does not throw on punctuation or FTS syntax in the query", async () => {
      const ws = uniqueId("ws");
      const { message, scope } = await say(getDb(), { workspace: ws, user: "U1", channel: "C1", isDm: false }, "foo bar baz");
      for (const q of [`"foo" OR bar*) NEAR(`, "!!! ... ???", "", "   ", `'"`, "foo:* & !bar | (", "AND OR NOT", "NEAR(foo bar, 2)", "col:foo", "the of and", "\u0000"]) {
        const hits = await search(scope, q);
        expect(Array.isArray(hits), q).toBe(true);
      }
      expect(await ids(scope, `"foo" OR bar*) NEAR(`)).toEqual([message.id]);
      expect(await ids(scope, "!!! ... ???")).toEqual([]);
    });
  });
});

// The harness's resetData, in its own database so it cannot disturb the suites above.
forEachDatabase("resetData", (getDb) => {
  it("empties every table, search index included", async () => {
    const db = getDb();
    const p = db.prisma;
    const opts: PlaceOptions = { workspace: uniqueId("ws"), user: "U1", channel: "C1", isDm: false };
    const inbound = inboundFor(opts, "the narwhal pipeline is green");
    const h = new HistoryStore(db);
    const resolved = await h.resolve(inbound);
    const session = await p.chatSession.create({ data: { conversationId: resolved.conversation.id } });
    const msg = await h.recordInbound(resolved, inbound, session.id);
    const scope = scopeOf(resolved);
    if (msg) await p.message.update({ where: { id: msg.id }, data: { status: "answered" } });
    const prov = { source: "tool", actorId: scope.personId, sourceMessageId: msg?.id ?? null } as const;
    await new MemoryStore(p, { user: 100, channel: 100, team: 100 }).apply(scope, [{ action: "add", target: "team", content: "fact" }], prov);
    const skills = new SkillStore(p);
    await skills.create(scope, "---\nname: narwhal-checks\ndescription: Use when checking narwhal\n---\n\n1. Check.\n", "team", prov);
    await skills.writeFile(scope, "narwhal-checks", "references/a.md", "A", prov);
    await p.job.create({ data: { kind: "review", payload: "{}" } });
    expect(await searchMessages(db, scope, "narwhal", OPTS)).toHaveLength(1);

    const counts = () =>
      Promise.all([
        p.workspace.count(),
        p.person.count(),
        p.conversation.count(),
        p.chatSession.count(),
        p.message.count(),
        p.memoryEntry.count(),
        p.skill.count(),
        p.skillFile.count(),
        p.revision.count(),
        p.job.count(),
      ]);
    expect(await counts()).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 3, 1]);
    await resetData(db);
    expect(await counts()).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(await searchMessages(db, scope, "narwhal", OPTS)).toEqual([]);
    if (db.provider === "sqlite") {
      // The FTS5 index follows the Message table through its delete trigger.
      const rows = await p.$queryRawUnsafe<{ n: number | bigint }[]>(`SELECT count(*) AS n FROM message_fts WHERE message_fts MATCH 'narwhal'`);
      expect(Number(rows[0]?.n)).toBe(0);
    }
  });
});
