/**
 * Ids made below Prisma (src/db/cuid.ts) keep Prisma's cuid form however many are made: the random
 * part is drawn from a pool refilled a page at a time, and ids made across a refill stay distinct.
 */
import { expect, it } from "vitest";
import { cuid } from "../../src/db/cuid.ts";

it("makes distinct ids of cuid's form, ordered by their time, across many refills of the random pool", () => {
  const at = Date.UTC(2026, 11, 6, 9);
  const ids = Array.from({ length: 5_000 }, (_, i) => cuid(at + i));
  expect(new Set(ids).size).toBe(ids.length);
  for (const id of ids) expect(id).toMatch(/^c[0-9a-z]{24}$/);
  // The random blocks are not stuck: the last 8 characters differ far more often than not.
  const tails = new Set(ids.map((id) => id.slice(-8)));
  expect(tails.size).toBeGreaterThan(ids.length * 0.99);
  expect([...ids].sort()).toEqual(ids);
});
