/** Prisma reports a unique-constraint violation as P2002, on every provider and driver adapter. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === "object" && err !== null && "code" in err && (err as { code: unknown }).code === "P2002";
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
