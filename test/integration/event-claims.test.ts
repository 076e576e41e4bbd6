/**
 * Event claims (src/core/claim-store.ts) on both databases, through two handles on one database as two
 * processes would have them: one claim of a key wins however many are made at once, a windowed key
 * comes back only once its window has passed, and claims a day old are purged, at most once an hour.
 * Time is driven through the clock each ClaimStore is given, never slept.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { forEachDatabase, sameDatabase, uniqueId, type Database } from "../support/db.ts";
import { ClaimStore } from "../../src/delivery/claim-store.ts";

const HOUR = 60 * 60 * 1000;

forEachDatabase("event claims", (getDb) => {
  let other: Database;
  beforeAll(async () => {
    other = await sameDatabase(getDb());
  });
  afterAll(async () => {
    await other?.close();
  });

  const clock = (start: string) => {
    let at = new Date(start);
    return { now: () => at, set: (ms: number) => (at = new Date(Date.parse(start) + ms)) };
  };
  const claimed = async (keys: string[]) =>
    (await getDb().prisma.eventClaim.findMany({ where: { key: { in: keys } }, orderBy: { key: "asc" } })).map((c) => c.key);

  it("gives a key to exactly one of many claims made at once through two handles", async () => {
    const a = new ClaimStore(getDb());
    const b = new ClaimStore(other);
    const keys = Array.from({ length: 5 }, () => uniqueId("discord:interaction"));
    for (const windowMs of [0, 10_000]) {
      const rounds = await Promise.all(
        keys.map(async (key) => {
          const results = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).claim(`${key}:${windowMs}`, windowMs)));
          return results.filter(Boolean).length;
        }),
      );
      expect(rounds).toEqual([1, 1, 1, 1, 1]);
    }
    // Taken: later claims lose too, on either handle.
    expect(await a.claim(`${keys[0]}:0`)).toBe(false);
    expect(await b.claim(`${keys[0]}:0`)).toBe(false);
  });

  it("lets a windowed key be claimed again only after its window, and a key without a window never", async () => {
    const t = clock("2026-12-02T10:00:00.000Z");
    const a = new ClaimStore(getDb(), t.now);
    const b = new ClaimStore(other, t.now);
    const reaction = uniqueId("discord:reaction");
    const interaction = uniqueId("discord:interaction");

    expect(await a.claim(reaction, 10_000)).toBe(true);
    expect(await a.claim(interaction)).toBe(true);
    expect(await b.claim(reaction, 10_000)).toBe(false);
    t.set(9_999);
    expect(await b.claim(reaction, 10_000)).toBe(false);
    // A lost claim does not extend the window: it still runs from the claim that won.
    t.set(10_001);
    expect(await b.claim(reaction, 10_000)).toBe(true);
    expect(await a.claim(reaction, 10_000)).toBe(false);
    t.set(20_002);
    expect(await a.claim(reaction, 10_000)).toBe(true);

    t.set(23 * HOUR);
    expect(await b.claim(interaction)).toBe(false);
  });

  it("purges claims older than a day from the claim path, at most once an hour", async () => {
    const t = clock("2026-12-05T10:00:00.000Z");
    const claims = new ClaimStore(getDb(), t.now);
    const [old, recent, older, later, last] = ["old", "recent", "older", "later", "last"].map((k) => uniqueId(`discord:notice:${k}`)) as [string, string, string, string, string];
    // Its first claim purges (nothing is old yet).
    expect(await claims.claim(old)).toBe(true);
    t.set(2 * HOUR);
    expect(await claims.claim(recent)).toBe(true);
    // A claim made elsewhere, long ago.
    expect(await new ClaimStore(other, () => new Date(Date.parse("2026-12-03T10:00:00.000Z"))).claim(older)).toBe(true);

    // 25½ hours on: the first claim over an hour after the last purge purges what is a day old.
    t.set(25.5 * HOUR);
    expect(await claims.claim(later)).toBe(true);
    expect(await claimed([old, recent, older, later])).toEqual([later, recent].sort());

    // 40 minutes after that purge, none runs, though `recent` is now over a day old; 61 minutes after, one does.
    t.set(26 * HOUR + 10 * 60_000);
    expect(await claims.claim(last)).toBe(true);
    expect(await claimed([recent])).toEqual([recent]);
    t.set(26 * HOUR + 31 * 60_000);
    expect(await claims.claim(uniqueId("discord:notice"))).toBe(true);
    expect(await claimed([recent, later, last])).toEqual([later, last].sort());
    // A key purged may be claimed again: by then no platform delivers its event any more.
    expect(await claims.claim(old)).toBe(true);
  });
});
