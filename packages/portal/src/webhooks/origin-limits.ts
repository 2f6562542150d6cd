/**
 * How many deliveries may be in flight to one receiver origin: a bulkhead that adapts.
 * Every origin starts at `max`. An attempt that timed out halves its origin's limit (down
 * to 1); an attempt the receiver answered, with any status, raises it by one (up to `max`).
 * A receiver that accepts connections and never answers thus ends up holding one attempt at
 * a time instead of `max`, each costing a TLS connection and a socket for the whole
 * timeout; one that answers again grows back. An attempt past the limit is not sent.
 */
export class OriginLimits {
  readonly #max: number;
  readonly #origins = new Map<string, { inFlight: number; limit: number }>();

  constructor(max: number) {
    this.#max = max;
  }

  /** Take a slot, or answer the number in flight when there is none. */
  acquire(origin: string): { ok: true } | { ok: false; inFlight: number } {
    const s = this.#origins.get(origin) ?? { inFlight: 0, limit: this.#max };
    if (s.inFlight >= s.limit) return { ok: false, inFlight: s.inFlight };
    s.inFlight++;
    this.#origins.set(origin, s);
    return { ok: true };
  }

  /** Give the slot back with what the attempt learnt of the receiver. */
  release(origin: string, outcome: 'answered' | 'timed-out' | 'other'): void {
    const s = this.#origins.get(origin);
    if (!s) return;
    s.inFlight--;
    if (outcome === 'timed-out') s.limit = Math.max(1, Math.floor(s.limit / 2));
    else if (outcome === 'answered') s.limit = Math.min(this.#max, s.limit + 1);
    // Nothing worth remembering: the next attempt starts from the default again.
    if (s.inFlight === 0 && s.limit === this.#max) this.#origins.delete(origin);
  }

  limitOf(origin: string): number {
    return this.#origins.get(origin)?.limit ?? this.#max;
  }
}
