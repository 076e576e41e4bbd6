/**
 * At most `size` pieces of work under way at once, started in arrival order. Work that must wait on
 * something slow and unrelated to what the slots share (a model call) steps out with `away`, which
 * gives its slot to the next in line meanwhile and queues for one again after.
 */
export type Away = <T>(outside: () => Promise<T>) => Promise<T>;

export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`slots must be a positive integer, got ${size}`);
    this.free = size;
  }

  /** Starts `work` at once when a slot is free (no turn of the event loop in between), else in turn. */
  run<T>(work: (away: Away) => Promise<T>): Promise<T> {
    const wait = this.take();
    return wait ? wait.then(() => this.holding(work)) : this.holding(work);
  }

  /** `work` with a slot taken for it; the slot is given back when it ends. */
  private async holding<T>(work: (away: Away) => Promise<T>): Promise<T> {
    let holding = true;
    const away: Away = async (outside) => {
      this.give();
      holding = false;
      try {
        return await outside();
      } finally {
        await this.take();
        holding = true;
      }
    };
    try {
      return await work(away);
    } finally {
      if (holding) this.give();
    }
  }

  private take(): Promise<void> | undefined {
    if (this.free > 0) {
      this.free--;
      return undefined;
    }
    return new Promise<void>((wake) => this.waiting.push(wake));
  }

  /** The slot goes straight to the first in line, or back to the free ones. */
  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
