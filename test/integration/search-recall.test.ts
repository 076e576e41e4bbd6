/**
 * searchMessages on real databases beyond the basics of history-search.test.ts: text without spaces
 * between words (Chinese, Japanese) and the recall levers (answers found through the question they
 * answer, a named person's messages, dates), all under the same scope rules.
 */
import { expect, it } from "vitest";
import type { Scope } from "../../src/ground/types.ts";
import { searchMessages } from "../../src/history/store/search.ts";
import { HistoryStore, scopeOf } from "../../src/history/store/store.ts";
import { forEachDatabase, inboundFor, uniqueId, type Database, type PlaceOptions } from "../support/db.ts";

forEachDatabase("search recall", (getDb) => {
  async function say(db: Database, opts: PlaceOptions, text: string, sentAt = new Date()): Promise<{ id: number; scope: Scope }> {
    const inbound = inboundFor(opts, text, uniqueId("m"), sentAt);
    const h = new HistoryStore(db);
    const place = await h.resolve(inbound);
    const msg = await h.recordInbound(place, inbound);
    if (!msg) throw new Error("duplicate");
    return { id: msg.id, scope: scopeOf(place) };
  }
  const ids = async (scope: Scope, query: string, limit = 5) => (await searchMessages(getDb(), scope, query, { limit })).map((h) => h.messageId);

  it("finds Chinese and Japanese answers to questions that share no space-delimited word with them, within scope", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const channel = (user: string, name: string): PlaceOptions => ({ workspace: ws, user, channel: "C-OPS", isDm: false, name });
    const zh = await say(db, channel("ULI", "Li"), "支付服务上周已经部署到新加坡的服务器了，回滚脚本在运维仓库里。");
    await say(db, channel("UWANG", "Wang"), "午饭我们去楼下吃拉面吧。");
    const ja = await say(db, channel("USATO", "Sato"), "本番環境へのデプロイは毎週木曜日の夜に行います。");
    await say(db, channel("USATO", "Sato"), "新しいメンバーは来月からフロントエンドを担当します。");
    // Another person's DM with the same words: never found from someone else's place.
    const secret = await say(db, { workspace: ws, user: "USECRET", channel: "D-SECRET", isDm: true }, "支付服务部署的密码和デプロイの鍵は金庫にあります");
    const asker = (await say(db, { workspace: ws, user: "UASK", channel: "C-OPS", isDm: false }, "hello")).scope;
    const askerDm = (await say(db, { workspace: ws, user: "UASK", channel: "D-ASK", isDm: true }, "hi")).scope;

    for (const scope of [asker, askerDm]) {
      const chinese = await ids(scope, "支付服务部署到哪里了？");
      expect(chinese[0]).toBe(zh.id);
      expect(chinese).not.toContain(secret.id);
      const japanese = await ids(scope, "デプロイはいつですか");
      expect(japanese[0]).toBe(ja.id);
      expect(japanese).not.toContain(secret.id);
    }
    // The owner of the DM finds it.
    expect(await ids(secret.scope, "支付服务的密码")).toContain(secret.id);
    // Another workspace sees none of it.
    const other = (await say(db, { workspace: uniqueId("ws"), user: "UASK", channel: "C-OPS", isDm: false }, "hello")).scope;
    expect(await ids(other, "支付服务部署")).toEqual([]);
    // Highlighting works without spaces too.
    const hit = (await searchMessages(db, asker, "部署", { limit: 1 }))[0];
    expect(hit?.snippet).toContain("«部署»");
  });

  it("finds the answer to a matching question even when the answer repeats none of its words", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const t = (min: number) => new Date(Date.UTC(2026, 2, 3, 10, min));
    await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false, name: "Ann" }, "Which region hosts the billing replicas now?", t(0));
    const answer = await say(db, { workspace: ws, user: "UB", channel: "C1", isDm: false, name: "Bo" }, "Frankfurt, since the March move.", t(1));
    await say(db, { workspace: ws, user: "UB", channel: "C1", isDm: false, name: "Bo" }, "lunch at noon?", t(2));
    const found = await ids(answer.scope, "billing replicas region");
    expect(found).toContain(answer.id);
  });

  it("prefers the messages of the person a query names, and messages from the date it names", async () => {
    const db = getDb();
    const ws = uniqueId("ws");
    const ann = await say(db, { workspace: ws, user: "UA", channel: "C1", isDm: false, name: "Ann Lee" }, "the deploy checklist lives in the wiki", new Date(Date.UTC(2026, 0, 10)));
    const bo = await say(db, { workspace: ws, user: "UB", channel: "C1", isDm: false, name: "Bo" }, "the deploy checklist lives in the wiki", new Date(Date.UTC(2026, 1, 20)));
    expect((await ids(ann.scope, "what did Ann say about the deploy checklist"))[0]).toBe(ann.id);
    expect((await ids(ann.scope, "what did Bo say about the deploy checklist"))[0]).toBe(bo.id);
    expect((await ids(ann.scope, "deploy checklist on 20 February 2026"))[0]).toBe(bo.id);
    expect((await ids(ann.scope, "deploy checklist in January"))[0]).toBe(ann.id);
  });
});
