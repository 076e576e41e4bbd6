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

/**
 * An interaction's first answer, given whenever the work has it: `defer` is sent first if the work
 * is slower than `ms` (or at once with `deferNow`), and the answer then takes its deferred form.
 * Never both: whichever comes first decides, synchronously.
 */
export class FirstAnswer {
  private timer: NodeJS.Timeout | undefined;
  private deferred: Promise<unknown> | null = null;
  private answered = false;

  constructor(
    private readonly defer: () => Promise<unknown>,
    ms: number,
  ) {
    this.timer = setTimeout(() => this.deferNow(), ms);
  }

  /** Defers now, unless answered already. */
  deferNow(): void {
    clearTimeout(this.timer);
    if (this.answered || this.deferred) return;
    this.deferred = this.defer();
  }

  /** Whether the first answer was given (or deferred) already. */
  get given(): boolean {
    return this.answered || this.deferred !== null;
  }

  /** The first answer: `now` within the time, else `later` once the deferral is through. */
  async answer<T>(now: () => Promise<T>, later: () => Promise<T>): Promise<T> {
    clearTimeout(this.timer);
    if (this.deferred) {
      await this.deferred;
      return later();
    }
    this.answered = true;
    return now();
  }

  /** The work is over: no deferral after it. */
  close(): void {
    clearTimeout(this.timer);
  }
}
