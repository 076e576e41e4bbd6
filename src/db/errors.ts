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
 * reads the winner's row instead of failing. `create` may also say it lost by returning null (an
 * insert that does nothing on conflict).
 */
export async function findOrCreate<T>(find: () => Promise<T | null>, create: () => Promise<T | null>): Promise<T> {
  const found = await find();
  if (found) return found;
  let violation: unknown = null;
  try {
    const created = await create();
    if (created) return created;
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    violation = err;
  }
  const again = await find();
  if (!again) throw violation ?? new Error("a row another caller created at the same moment could not be read");
  return again;
}
