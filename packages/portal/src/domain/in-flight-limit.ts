/**
 * At most `inFlight` holders per key at a time in this process, and at most `maxWaiting` more
 * waiting in line (first come, first served); beyond that an attempt is refused at once. The
 * one limit type of the per-e-mail password checks (AppContext.loginChecks: one at a time, four
 * waiting, so parallel guesses from many addresses run one after another) and the uploads in
 * progress per key (AppContext.uploads: SVC_UPLOADS_PER_KEY, no line). Each replica counts alone
 * (docs/deployment-replicas.md).
 */
export class InFlightLimit {
  readonly #inFlight: number;
  readonly #maxWaiting: number;
  readonly #lines = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(inFlight: number, maxWaiting = 0) {
    this.#inFlight = inFlight;
    this.#maxWaiting = maxWaiting;
  }

  /** A release function at once while `key` has a free slot, else null (no waiting). */
  tryEnter(key: string): (() => void) | null {
    const line = this.#lineOf(key);
    if (line.running >= this.#inFlight) return null;
    line.running++;
    return this.#releaser(key, line);
  }

  /** A release function once `key` has a slot, or null when its line is full (refused). */
  async enter(key: string): Promise<(() => void) | null> {
    const free = this.tryEnter(key);
    if (free !== null) return free;
    const line = this.#lineOf(key);
    if (line.waiting.length >= this.#maxWaiting) return null;
    // The slot is handed over by release(): `running` stays counted for the waiter.
    await new Promise<void>((resolve) => line.waiting.push(resolve));
    return this.#releaser(key, line);
  }

  #lineOf(key: string): { running: number; waiting: (() => void)[] } {
    let line = this.#lines.get(key);
    if (line === undefined) {
      line = { running: 0, waiting: [] };
      this.#lines.set(key, line);
    }
    return line;
  }

  #releaser(key: string, held: { running: number; waiting: (() => void)[] }): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = held.waiting.shift();
      if (next !== undefined) return next();
      held.running--;
      if (held.running === 0) this.#lines.delete(key);
    };
  }
}
