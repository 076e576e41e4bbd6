/**
 * Several replicas on one database: two Core instances share it, as two cairn processes would. The
 * per-person rate limit and the "forget me" confirmation live in the database, so they hold
 * whichever replica an event reaches, and across a restart (a new Core).
 */
import { expect, it } from "vitest";
import { forEachDatabase, inboundFor, type PlaceOptions } from "../support/db.ts";
import { coreHarness, makeCore } from "../support/agent.ts";
import { TOMBSTONE } from "../../src/erasure/erasure-store.ts";
import type { Core } from "../../src/app/core.ts";
import type { HandleResult, Outbound } from "../../src/ground/types.ts";
import type { ReplyTarget } from "../../src/ground/adapter.ts";
import { FakeAdapter } from "../support/fake-adapter.ts";

function replyOf(result: HandleResult): Outbound {
  if (result.kind !== "reply") throw new Error(`expected a reply, got dropped: ${result.reason}`);
  return result.reply;
}

const MINUTE = 60_000;

forEachDatabase("two replicas on one database", (getDb) => {
  const h = coreHarness(getDb, { defaultReply: "answer" });
  const dm = (user: string): PlaceOptions => ({ workspace: h.ws, user, channel: `D-${user}`, isDm: true, name: user });
  const channel = (user: string, thread: string): PlaceOptions => ({ workspace: h.ws, user, channel: "CGEN", isDm: false, thread, name: user });

  it("share one rate limit per person, counted from stored messages, whichever replica answers", async () => {
    let clock = new Date("2026-12-02T10:00:00Z");
    const now = (): Date => clock;
    const a = makeCore(getDb(), h.fake, { rateLimitPerHour: 3 }, now);
    const b = makeCore(getDb(), h.fake, { rateLimitPerHour: 3 }, now);
    const say = async (c: Core, opts: PlaceOptions, text: string): Promise<Outbound> => replyOf(await c.handle(inboundFor(opts, text, undefined, clock)));
    const at = (minutes: number): void => {
      clock = new Date(Date.parse("2026-12-02T10:00:00Z") + minutes * MINUTE);
    };

    expect((await say(a, dm("UA"), "one")).status).toBe("ok");
    at(1);
    expect((await say(b, channel("UA", "t1"), "two")).status).toBe("ok");
    at(2);
    expect((await say(a, dm("UA"), "three")).status).toBe("ok");
    at(10);
    const fourth = await say(b, dm("UA"), "four");
    expect(fourth.status).toBe("limited");
    // The same words as before; the oldest message leaves the window 50 minutes from now.
    expect(fourth.text).toBe("You've reached the limit of 3 messages per hour. Please try again in about 50 minutes.");
    // Messages sent while limited do not count: the wait named stays true however many more come.
    at(20);
    expect((await say(a, channel("UA", "t2"), "five")).text).toMatch(/about 40 minutes/);
    expect((await say(b, dm("UA"), "six")).status).toBe("limited");
    expect(h.fake.requests).toHaveLength(3);
    // Another person is not touched.
    expect((await say(b, dm("UB"), "hello")).status).toBe("ok");

    // A restarted replica (a new Core) forgets nothing.
    const restarted = makeCore(getDb(), h.fake, { rateLimitPerHour: 3 }, now);
    expect((await say(restarted, dm("UA"), "seven")).status).toBe("limited");
    // Once "one" is an hour old, there is room for one more, and only one.
    at(60.5);
    expect((await say(restarted, dm("UA"), "eight")).status).toBe("ok");
    expect((await say(a, dm("UA"), "nine")).status).toBe("limited");

    // Every message stays stored; those over the limit failed (they got the limit's reply).
    const db = getDb().prisma;
    const stored = await db.message.findMany({ where: { role: "user", author: { externalId: "UA", workspace: { externalId: h.ws } } }, orderBy: { id: "asc" } });
    expect(stored.map((m) => [m.text, m.status])).toEqual([
      ["one", "answered"],
      ["two", "answered"],
      ["three", "answered"],
      ["four", "failed"],
      ["five", "failed"],
      ["six", "failed"],
      ["seven", "failed"],
      ["eight", "answered"],
      ["nine", "failed"],
    ]);
  });

  it("admit no more than the limit when one person's messages reach both replicas at once", async () => {
    const a = makeCore(getDb(), h.fake, { rateLimitPerHour: 3 });
    const b = makeCore(getDb(), h.fake, { rateLimitPerHour: 3 });
    // Several people at once, each sending a burst spread over both replicas and several threads: a
    // message stored by one replica and not yet committed when the other counts must still count.
    const people = ["UC1", "UC2", "UC3", "UC4"];
    const replies = await Promise.all(
      people.flatMap((user) =>
        Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).handle(inboundFor(channel(user, `burst-${user}-${i}`), `message ${i}`)).then((r) => [user, replyOf(r)] as const)),
      ),
    );
    for (const user of people) {
      const mine = replies.filter(([u]) => u === user).map(([, r]) => r.status);
      expect(mine.filter((s) => s === "ok")).toHaveLength(3);
      expect(mine.filter((s) => s === "limited")).toHaveLength(7);
    }
  });

  it("mark a post both replicas received (👀) once, by the replica that answers it, and take it off once, after the answer", async () => {
    const events: string[] = [];
    const port = (name: string) => {
      const core = makeCore(getDb(), h.fake, {});
      const adapter = new FakeAdapter("slack");
      return { core: core.attach(adapter), adapter, name };
    };
    const replicas = [port("a"), port("b")];
    h.fake.setDefault(() => ({ text: "answer", delayMs: 200 }));
    const inbound = inboundFor(channel("UM", "tm"), "what is the plan?");
    const received = await Promise.all(
      replicas.map(({ core, adapter, name }) => {
        const target: ReplyTarget = {
          ...adapter.target("CGEN", async () => void events.push(`${name} posts`)),
          working: async () => {
            events.push(`${name} marks`);
            return async () => void events.push(`${name} unmarks`);
          },
        };
        return core.receive(inbound, target);
      }),
    );
    expect(received.map((r) => r.kind).sort()).toEqual(["dropped", "replied"]);
    const winner = received[0]!.kind === "replied" ? "a" : "b";
    expect(events).toEqual([`${winner} marks`, `${winner} posts`, `${winner} unmarks`]);
  });

  it("take 'forget me' on one replica and 'forget me confirm' on the other", async () => {
    const a = makeCore(getDb(), h.fake);
    const b = makeCore(getDb(), h.fake);
    const dana = dm("UDANA");
    await a.handle(inboundFor(dana, "my secret word is kumquat"));
    const db = getDb().prisma;
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UDANA", workspace: { externalId: h.ws } } });

    // A confirmation without a request only asks.
    expect((await b.command(inboundFor(dana), "forget", ["me", "confirm"])).text).toContain("send `forget me confirm` within 10 minutes");
    await db.erasureRequest.deleteMany({ where: { personId: person.id } });

    expect((await a.command(inboundFor(dana), "forget", ["me"])).text).toContain("forget me confirm");
    expect(await db.erasureRequest.count({ where: { personId: person.id } })).toBe(1);
    const done = await b.command(inboundFor(dana), "forget", ["me", "confirm"]);
    expect(done.text).toMatch(/^Done\. Erased/);
    expect((await db.message.findFirstOrThrow({ where: { authorId: person.id } })).text).toBe(TOMBSTONE);
    // The request was used up: confirming again asks again.
    expect(await db.erasureRequest.count({ where: { personId: person.id } })).toBe(0);
    expect((await a.command(inboundFor(dana), "forget", ["me", "confirm"])).text).toContain("within 10 minutes");
  });

  it("let a 'forget me' request expire after 10 minutes, on any replica", async () => {
    const a = makeCore(getDb(), h.fake);
    const b = makeCore(getDb(), h.fake);
    const erin = dm("UERIN");
    await a.handle(inboundFor(erin, "hello"));
    const db = getDb().prisma;
    const person = await db.person.findFirstOrThrow({ where: { externalId: "UERIN", workspace: { externalId: h.ws } } });
    await a.command(inboundFor(erin), "forget", ["me"]);
    await db.erasureRequest.update({ where: { personId: person.id }, data: { requestedAt: new Date(Date.now() - 11 * MINUTE) } });
    expect((await b.command(inboundFor(erin), "forget", ["me", "confirm"])).text).toContain("within 10 minutes");
    expect((await db.message.findFirstOrThrow({ where: { authorId: person.id } })).text).toBe("hello");
    // That restarted the window: confirming now erases.
    expect((await a.command(inboundFor(erin), "forget", ["me", "confirm"])).text).toMatch(/^Done\. Erased/);
  });
});
