/**
 * Waiting for work no longer than a deadline: what a turn does with memory providers and with an
 * embeddings endpoint, neither of which may hold a person's answer up.
 */
export const LATE = Symbol("late");

/** `work`'s result, or LATE once `ms` have passed (the work goes on unwatched; its outcome is the caller's to drop or keep). */
export async function beforeDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
