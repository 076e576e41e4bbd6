/**
 * One SQLite connection serves every query, and Prisma's better-sqlite3 adapter runs a query that
 * is not part of an open transaction on that connection anyway: the query then belongs to the
 * transaction, and a rollback takes it along. A message stored by another conversation while a
 * skill edit was being rolled back would be gone, its caller already told it was saved.
 *
 * The gate keeps the two apart: a transaction holds it from BEGIN to COMMIT/ROLLBACK, and every
 * other statement waits while it is held. Waiters are served in arrival order, so a stream of
 * queries cannot starve a transaction, nor a transaction the queries queued before it.
 */

type Waiter = { exclusive: boolean; wake: () => void };

export class TransactionGate {
  private held = false;
  private readonly waiters: Waiter[] = [];

  /** null when a statement may run now; else a promise that settles when it may. */
  pass(): Promise<void> | null {
    if (!this.held) return null;
    return new Promise((wake) => this.waiters.push({ exclusive: false, wake }));
  }

  /** Resolves once this caller holds the gate (for a transaction). */
  lock(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((wake) => this.waiters.push({ exclusive: true, wake }));
  }

  unlock(): void {
    this.held = false;
    // Statements queued before the next transaction run first: their continuations are queued ahead
    // of its BEGIN, and each runs its statement synchronously when it resumes.
    while (this.waiters.length > 0) {
      const next = this.waiters.shift()!;
      if (next.exclusive) {
        this.held = true;
        next.wake();
        return;
      }
      next.wake();
    }
  }
}
