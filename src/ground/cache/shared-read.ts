/**
 * One read shared by every caller that asks for the same key while a read of it is under way, yet
 * never older than the call: a caller that arrives while a read is in flight waits for it to end
 * and then shares the next read with everyone else who arrived meanwhile (that read starts after
 * each of their calls, so it sees every write committed before them). A burst of 200 new sessions
 * in one workspace reads its persona twice, not 200 times, and a write is seen by the next
 * session exactly as if each had read alone. Nothing is kept once the reads are done.
 */
interface Flight<V> {
  current: Promise<V>;
  next?: Promise<V>;
}

export class SharedRead<K, V> {
  private readonly flights = new Map<K, Flight<V>>();

  read(key: K, load: () => Promise<V>): Promise<V> {
    const flight = this.flights.get(key);
    if (!flight) return this.start(key, load);
    // Settled either way: a failed read is its own callers' failure, and the next one is tried afresh.
    flight.next ??= flight.current.then(
      () => this.start(key, load),
      () => this.start(key, load),
    );
    return flight.next;
  }

  private start(key: K, load: () => Promise<V>): Promise<V> {
    const flight: Flight<V> = {
      current: load().finally(() => {
        if (this.flights.get(key) === flight) this.flights.delete(key);
      }),
    };
    this.flights.set(key, flight);
    return flight.current;
  }

  /** Keys with a read under way (for tests and metrics). */
  get inFlight(): number {
    return this.flights.size;
  }
}
