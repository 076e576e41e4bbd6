/**
 * A unique-constraint violation: Prisma reports it as P2002 on every provider; statements on the
 * direct path (direct.ts) get the driver's own code, better-sqlite3's or PostgreSQL's (23505).
 */
const UNIQUE_CODES = new Set(["P2002", "SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY", "23505"]);

export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== "object" || err === null || !("code" in err)) return false;
  const code = (err as { code: unknown }).code;
  return typeof code === "string" && UNIQUE_CODES.has(code);
}

/**
 * Find-or-create that survives two callers racing to create the same row: the loser of the race
 * reads the winner's row instead of failing.
 */
export async function findOrCreate<T>(find: () => Promise<T | null>, create: () => Promise<T>): Promise<T> {
  const found = await find();
  if (found) return found;
  try {
    return await create();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const again = await find();
    if (!again) throw err;
    return again;
  }
}
