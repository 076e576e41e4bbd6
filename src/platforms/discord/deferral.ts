/**
 * Discord wants a first answer to an interaction within 3 seconds, and the answer's kind decides how
 * it may be late: a new message is deferred with a "thinking" placeholder and edited in; an update
 * of the clicked message is deferred silently and edited in. Work that finishes within `ms` is
 * answered at once, the usual case; slower work is deferred first, then answered when done.
 */

/** The work's result if it comes within `ms`, else null (the work goes on). */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([work, slow]);
  } finally {
    clearTimeout(timer);
  }
}

export interface InTime<T> {
  /** The answer when the work came within the time. */
  now(result: T): Promise<void>;
  /** Acknowledges the interaction before the work is done. */
  defer(): Promise<void>;
  /** The answer after `defer`. */
  later(result: T): Promise<void>;
}

/** Answers `work` at once when it is quick, else defers and answers when it is done. */
export async function answerInTime<T extends object>(work: Promise<T>, ms: number, answer: InTime<T>): Promise<void> {
  const fast = await within(work, ms);
  if (fast) return answer.now(fast);
  await answer.defer();
  await answer.later(await work);
}
