/**
 * Ids for rows inserted below Prisma (direct.ts), in the form Prisma's `@default(cuid())` gives
 * (cuid v1: "c", the time, a counter, a fingerprint of the process, random): ids from either path
 * look alike, start with their creation time (ground/short-id.ts relies on it) and sort by it.
 */
import { randomBytes, randomFillSync } from "node:crypto";
import { hostname } from "node:os";

const BASE = 36;
const pad = (s: string, n: number): string => s.padStart(n, "0").slice(-n);

let counter = randomBytes(2).readUInt16BE(0);
const fingerprint = pad(process.pid.toString(BASE), 2) + pad([...hostname()].reduce((a, c) => a + c.charCodeAt(0), hostname().length + BASE).toString(BASE), 2);

// Random bytes drawn a page at a time: a call to the system's generator per id cost more than the
// rest of the id (randomBytes(4) twice an id: 9 ms of a burst's first 200 new conversations).
const POOL = Buffer.alloc(4096);
let taken = POOL.length;

function randomBlock(): string {
  if (taken + 4 > POOL.length) {
    randomFillSync(POOL);
    taken = 0;
  }
  const n = POOL.readUInt32BE(taken);
  taken += 4;
  return pad(n.toString(BASE), 4);
}

/** A new 25-character id: "c" + 8 time + 4 counter + 4 fingerprint + 8 random, base 36. */
export function cuid(now = Date.now()): string {
  counter = (counter + 1) % BASE ** 4;
  return `c${pad(now.toString(BASE), 8)}${pad(counter.toString(BASE), 4)}${fingerprint}${randomBlock()}${randomBlock()}`;
}
