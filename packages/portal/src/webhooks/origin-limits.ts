/** Why an attempt was not sent: the receiver's queue was full, or its turn did not come in time. */
export type Shed = { ok: false; reason: 'queue-full' | 'deadline' | 'shutdown'; inFlight: number; waitedMs: number };
export type Slot = { ok: true } | Shed;

export interface OriginLimitsOptions {
  /** In flight to one origin at most (also the connections kept per origin). */
  max: number;
  /** Attempts waiting for a slot per origin at most; past it an attempt is shed at once. */
  queueMax: number;
  /** How long an attempt waits for its turn before it is shed. */
  waitMs: number;
}

interface Waiter {
  resolve: (slot: Slot) => void;
  timer: NodeJS.Timeout;
  since: number;
}

interface OriginState {
  inFlight: number;
  limit: number;
  queue: Waiter[];
}

/**
 * How many deliveries may be in flight to one receiver origin: a bulkhead that adapts and
 * queues. Every origin starts at `max`. An attempt that timed out halves its origin's limit
 * (down to 1); an attempt the receiver answered, with any status, raises it by one (up to
 * `max`). A receiver that accepts connections and never answers thus ends up holding one
 * attempt at a time instead of `max`, each costing a TLS connection and a socket for the
 * whole timeout; one that answers again grows back.
 *
 * An attempt past the limit waits its turn in a FIFO queue of its origin (so a slow but
 * healthy receiver gets every event of a burst, in order), up to `queueMax` waiting and
 * `waitMs` each. An attempt that finds the queue full or outwaits its deadline is shed: it
 * is not sent, and since that says nothing about the receiver it must not count as one of
 * its failures. Each origin has its own queue, so a black-holed receiver delays only itself.
 */
export class OriginLimits {
  readonly #opts: OriginLimitsOptions;
  readonly #origins = new Map<string, OriginState>();
  #closing = false;

  constructor(opts: OriginLimitsOptions) {
    this.#opts = opts;
  }

  /** A slot now, a slot once the attempts ahead have left, or a shed attempt. */
  acquire(origin: string): Promise<Slot> {
    const s = this.#state(origin);
    if (s.inFlight < s.limit && s.queue.length === 0) {
      s.inFlight++;
      return Promise.resolve({ ok: true });
    }
    if (this.#closing) return Promise.resolve({ ok: false, reason: 'shutdown', inFlight: s.inFlight, waitedMs: 0 });
    if (s.queue.length >= this.#opts.queueMax)
      return Promise.resolve({ ok: false, reason: 'queue-full', inFlight: s.inFlight, waitedMs: 0 });
    return new Promise<Slot>((resolve) => {
      const since = performance.now();
      const waiter: Waiter = {
        resolve,
        since,
        timer: setTimeout(() => {
          s.queue.splice(s.queue.indexOf(waiter), 1);
          resolve({
            ok: false,
            reason: 'deadline',
            inFlight: s.inFlight,
            waitedMs: Math.round(performance.now() - since),
          });
          this.#forgetIfIdle(origin, s);
        }, this.#opts.waitMs),
      };
      s.queue.push(waiter);
    });
  }

  /** Give the slot back with what the attempt learnt of the receiver; the next in line may go. */
  release(origin: string, outcome: 'answered' | 'timed-out' | 'other'): void {
    const s = this.#origins.get(origin);
    if (!s) return;
    s.inFlight--;
    if (outcome === 'timed-out') s.limit = Math.max(1, Math.floor(s.limit / 2));
    else if (outcome === 'answered') s.limit = Math.min(this.#opts.max, s.limit + 1);
    while (s.inFlight < s.limit && s.queue.length > 0) {
      const next = s.queue.shift() as Waiter;
      clearTimeout(next.timer);
      s.inFlight++;
      next.resolve({ ok: true });
    }
    this.#forgetIfIdle(origin, s);
  }

  /**
   * Shutting down: every waiting attempt, and every later one past its limit, is shed at once,
   * so draining the deliveries takes at most one delivery timeout, not the queue's deadline.
   */
  shedWaiting(): void {
    this.#closing = true;
    for (const s of this.#origins.values()) {
      for (const w of s.queue.splice(0)) {
        clearTimeout(w.timer);
        w.resolve({
          ok: false,
          reason: 'shutdown',
          inFlight: s.inFlight,
          waitedMs: Math.round(performance.now() - w.since),
        });
      }
    }
  }

  limitOf(origin: string): number {
    return this.#origins.get(origin)?.limit ?? this.#opts.max;
  }

  waitingAt(origin: string): number {
    return this.#origins.get(origin)?.queue.length ?? 0;
  }

  /** Attempts waiting and in flight over every origin (the metrics' queue depth); idle origins are forgotten, so this stays short. */
  totals(): { waiting: number; inFlight: number } {
    let waiting = 0;
    let inFlight = 0;
    for (const s of this.#origins.values()) {
      waiting += s.queue.length;
      inFlight += s.inFlight;
    }
    return { waiting, inFlight };
  }

  #state(origin: string): OriginState {
    let s = this.#origins.get(origin);
    if (!s) {
      s = { inFlight: 0, limit: this.#opts.max, queue: [] };
      this.#origins.set(origin, s);
    }
    return s;
  }

  /** Nothing worth remembering: the next attempt starts from the default again. */
  #forgetIfIdle(origin: string, s: OriginState): void {
    if (s.inFlight === 0 && s.queue.length === 0 && s.limit === this.#opts.max) this.#origins.delete(origin);
  }
}
