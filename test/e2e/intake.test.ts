/**
 * How a message is taken in: filed under its session the moment it is stored (before its turn runs),
 * with the rows it resolves to reused between messages but never hiding a rename or an erasure, and
 * session activity kept to the minute without bending the idle gap.
 */
import { beforeEach, expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness } from "../support/agent.ts";
import { waitUntil } from "../fakes/http.ts";
import type { HandleResult } from "../../src/ground/types.ts";
import { HistoryStore } from "../../src/history/store/store.ts";

const HOUR = 60 * 60 * 1000;

function textOf(result: HandleResult): string {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply.text;
}

forEachDatabase("message intake", (getDb) => {
  let clock = 0;
  const h = coreHarness(getDb, { settings: { bundledSkillsDir: null }, now: () => new Date(clock) });
  const dm = (user: string, name = user): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name });
  beforeEach(() => {
    clock = Date.parse("2026-05-04T09:00:00Z");
  });

  it("files a queued message under its session as it arrives, before its turn runs", async () => {
    const db = getDb().prisma;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    h.fake.enqueue({ reply: async () => (await held, { text: "first answer" }) });
    const alice = dm("UALICE", "Alice");
    const first = h.core.handle(inboundFor(alice, "first question", "m1"));
    await h.fake.waitForRequests(1);
    const second = h.core.handle(inboundFor(alice, "second question", "m2"));
    // The second message waits behind the first turn, but is already stored in the same session.
    const workspaceId = (await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id;
    const queued = await waitUntil("the second message stored", () => db.message.findFirst({ where: { platformId: "m2", workspaceId } }));
    const asked = await db.message.findFirstOrThrow({ where: { platformId: "m1", workspaceId } });
    expect(asked.sessionId).not.toBeNull();
    expect(queued).toMatchObject({ sessionId: asked.sessionId, status: "received" });
    release();
    expect([textOf(await first), textOf(await second)]).toEqual(["first answer", "ok"]);
    const stored = await db.message.findMany({ where: { workspaceId }, orderBy: { id: "asc" } });
    expect(stored.map((m) => [m.role, m.status, m.sessionId === asked.sessionId])).toEqual([
      ["user", "answered", true],
      ["user", "answered", true],
      ["assistant", "sent", true],
      ["assistant", "sent", true],
    ]);
    // The second turn saw the first exchange: same session, in order.
    const history = JSON.stringify(h.fake.lastRequest()!.body.messages);
    expect(history.indexOf("first question")).toBeLessThan(history.indexOf("first answer"));
    expect(history.indexOf("first answer")).toBeLessThan(history.indexOf("second question"));
  });

  it("marks a message by the reply stored to it: answered, or failed with a failed reply; its context block changes nothing", async () => {
    const db = getDb().prisma;
    const history = new HistoryStore(getDb());
    const opts: PlaceOptions = { workspace: h.ws, user: "UDAN", channel: "C-outcome", isDm: false };
    const asked = inboundFor(opts, "is the build green?", "o1");
    const place = await history.resolve(asked);
    const session = await db.chatSession.create({ data: { conversationId: place.conversation.id } });
    const withContext = { ...asked, context: "[thread so far] the build broke at noon" };
    const first = (await history.recordInbound(place, withContext, session.id))!;
    const second = (await history.recordInbound(place, inboundFor(opts, "and the deploy?", "o2"), session.id))!;
    const status = async (id: number) => (await db.message.findUniqueOrThrow({ where: { id } })).status;
    expect([await status(first.id), await status(second.id)]).toEqual(["received", "received"]);
    await history.recordReply(place, session.id, first.id, "green since 13:05", "sent");
    await history.recordReply(place, session.id, second.id, "sorry, my model is unreachable", "failed");
    expect([await status(first.id), await status(second.id)]).toEqual(["answered", "failed"]);
  });

  it("sees a new display name on the person's next message", async () => {
    const db = getDb().prisma;
    await h.core.handle(inboundFor(dm("UBOB", "Bob"), "hello"));
    await h.core.handle(inboundFor(dm("UBOB", "Bob"), "again"));
    await h.core.handle(inboundFor(dm("UBOB", "Robert"), "I changed my name"));
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UBOB", workspace: { externalId: h.ws } } });
    expect(person.displayName).toBe("Robert");
  });

  it("after 'forget me', reads the person, their session and their lessons afresh on their next message", async () => {
    const db = getDb().prisma;
    const carol = dm("UCAROL", "Carol");
    h.fake.enqueue(
      {
        toolUse: [
          {
            name: "memory",
            input: {
              operations: [
                { action: "add", target: "user", content: "Carol keeps bees" },
                { action: "add", target: "user", kind: "lesson", content: "Carol wants hive reports in metric units" },
              ],
            },
          },
        ],
      },
      { text: "noted" },
    );
    await h.core.handle(inboundFor(carol, "I keep bees"));
    await h.core.command(inboundFor(carol), "new");
    await h.core.handle(inboundFor(carol, "how are the hive reports?"));
    const before = JSON.stringify(h.fake.lastRequest()!.body);
    expect(before).toContain("Carol keeps bees");
    expect(before).toContain("Carol wants hive reports in metric units");

    await h.core.command(inboundFor(carol), "forget", ["me"]);
    await h.core.command(inboundFor(carol), "forget", ["me", "confirm"]);
    const where = { externalId: "UCAROL", workspace: { externalId: h.ws } };
    expect((await db.person.findFirstOrThrow({ where })).displayName).toBeNull();
    // Same name and same session as before the erasure: only fresh reads notice what is gone.
    await h.core.handle(inboundFor(carol, "how are the hive reports now?"));
    expect((await db.person.findFirstOrThrow({ where })).displayName).toBe("Carol");
    const after = JSON.stringify(h.fake.lastRequest()!.body);
    expect(after).not.toContain("Carol keeps bees");
    expect(after).not.toContain("metric units");
  });

  it("records session activity to the minute and still ends a session after the idle gap", async () => {
    const db = getDb().prisma;
    const dave = dm("UDAVE", "Dave");
    const start = clock;
    await h.core.handle(inboundFor(dave, "one", "d1", new Date(clock)));
    const workspaceId = (await db.workspace.findFirstOrThrow({ where: { externalId: h.ws } })).id;
    const sessionOf = async (platformId: string) => db.chatSession.findFirstOrThrow({ where: { messages: { some: { platformId, workspaceId } } } });
    clock += 20_000;
    await h.core.handle(inboundFor(dave, "two", "d2", new Date(clock)));
    const s1 = await sessionOf("d1");
    expect((await sessionOf("d2")).id).toBe(s1.id);
    expect(s1.lastActivityAt.getTime()).toBe(start);
    clock = start + 2 * HOUR - 1_000; // within the 2-hour idle gap of the first message's recorded activity
    await h.core.handle(inboundFor(dave, "three", "d3", new Date(clock)));
    const s3 = await sessionOf("d3");
    expect(s3.id).toBe(s1.id);
    expect(s3.lastActivityAt.getTime()).toBe(clock);
    clock += 2 * HOUR + 1_000;
    await h.core.handle(inboundFor(dave, "four", "d4", new Date(clock)));
    expect((await sessionOf("d4")).id).not.toBe(s1.id);
    expect(await db.chatSession.findUniqueOrThrow({ where: { id: s1.id } })).toMatchObject({ endReason: "idle" });
  });
});
