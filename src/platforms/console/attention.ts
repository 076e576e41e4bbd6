/**
 * What the terminal chat shows of a warning or an error: one short line pointing at the log file,
 * at most once a minute. The log lines themselves are JSON for whoever debugs; in the middle of a
 * conversation they are noise, and a burst of them (a retry loop) would bury the answer.
 */

/** Least time between two notices. */
export const NOTICE_EVERY_MS = 60_000;

export class Attention {
  private lastAt = Number.NEGATIVE_INFINITY;
  /** Where the notice is printed: stderr until the chat's screen takes over (main.ts). */
  sink: (line: string) => void;

  constructor(
    private readonly logFile: string,
    sink: (line: string) => void,
    private readonly now: () => number = Date.now,
    private readonly everyMs = NOTICE_EVERY_MS,
  ) {
    this.sink = sink;
  }

  /** A warning or an error was logged. Never throws: it runs inside the logger's write. */
  seen(): void {
    const at = this.now();
    if (at - this.lastAt < this.everyMs) return;
    this.lastAt = at;
    try {
      this.sink(`(cairn: something went wrong — details in ${this.logFile})`);
    } catch {
      // A closed terminal: the log file still has it.
    }
  }
}
