/**
 * session_search's channel filter below the tool (history/store/browse.ts): a channel is read by
 * its conversations' ids (the channel and its threads the asker may read), and reads exactly what
 * the filter by the channel's id reads; a channel the asker cannot read, or that no one has, has
 * no conversations. On SQLite and PostgreSQL.
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, place, uniqueId, type PlaceOptions } from "../support/db.ts";
import { HistoryStore } from "../../src/history/store/store.ts";

forEachDatabase("a channel filter by its conversations", (getDb) => {
  it("finds the channel and its threads, nothing of another person's DM, and reads what the filter by id reads", async () => {
    const ws = uniqueId("ws");
    const history = new HistoryStore(getDb());
    const say = async (at: PlaceOptions, text: string, minutesAgo: number) => {
      const msg = inboundFor(at, text, uniqueId("m"), new Date(Date.now() - minutesAgo * 60_000));
      expect(await history.recordInbound(await history.resolve(msg), msg)).not.toBeNull();
    };
    const inChannel = (thread: string | null): PlaceOptions => ({ workspace: ws, user: "UBEN", name: "Ben", channel: "CTEAM", isDm: false, thread });
    await say(inChannel(null), "the channel itself", 50);
    await say(inChannel("T1"), "thread one, older", 40);
    await say(inChannel("T2"), "thread two", 30);
    await say(inChannel("T1"), "thread one, newer", 20);
    await say({ workspace: ws, user: "UBEN", name: "Ben", channel: "COTHER", isDm: false }, "another channel", 10);
    await say({ workspace: ws, user: "UBEN", name: "Ben", channel: "D-UBEN", isDm: true }, "ben's own DM", 5);
    const { scope } = await place(getDb(), { workspace: ws, user: "UANA", name: "Ana", channel: "CASK", isDm: false });

    const ids = await history.browse.channelConversations(scope, [], "CTEAM");
    expect(ids).toHaveLength(3);
    expect(await history.browse.channelConversations(scope, [], "D-UBEN")).toEqual([]);
    expect(await history.browse.channelConversations(scope, [], "CNOBODY")).toEqual([]);

    const byIds = await history.browse.latest(scope, [], { channel: "CTEAM", conversationIds: ids }, 10);
    const byChannel = await history.browse.latest(scope, [], { channel: "CTEAM" }, 10);
    expect(byIds.map((m) => m.text)).toEqual(["thread one, newer", "thread two", "thread one, older", "the channel itself"]);
    expect(byIds).toEqual(byChannel);
    // Every mode narrows the same way (`narrowed`): around a message of the channel, too.
    const anchor = byIds[1]!.id;
    const aroundByIds = await history.browse.around(scope, [], anchor, 5, { channel: "CTEAM", conversationIds: ids });
    expect(aroundByIds).toEqual(await history.browse.around(scope, [], anchor, 5, { channel: "CTEAM" }));
    expect(aroundByIds?.anchor.text).toBe("thread two");
  });
});
