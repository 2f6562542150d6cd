/**
 * At most `inFlight` password checks per e-mail at a time in this process, and at most
 * `maxWaiting` more waiting in line (first come, first served); beyond that an attempt is
 * refused at once. The per-e-mail slow-down waits inside the slot, so
 * parallel guesses from many addresses run one after another instead of all at once.
 */
/** One password check per e-mail at a time, four more waiting (docs/identity.md#limits-and-hardening). */
const LOGIN_CHECKS_IN_FLIGHT = 1;
const LOGIN_CHECKS_WAITING = 4;

/** AppContext.loginChecks: this process's gate; each replica has its own (docs/deployment-replicas.md). */
export class LoginCheckGate {
  readonly #inFlight: number;
  readonly #maxWaiting: number;
  readonly #lines = new Map<string, { running: number; waiting: (() => void)[] }>();

  constructor(inFlight = LOGIN_CHECKS_IN_FLIGHT, maxWaiting = LOGIN_CHECKS_WAITING) {
    this.#inFlight = inFlight;
    this.#maxWaiting = maxWaiting;
  }

  /** A release function once `key` has a slot, or null when its line is full (refused). */
  async enter(key: string): Promise<(() => void) | null> {
    let line = this.#lines.get(key);
    if (line === undefined) {
      line = { running: 0, waiting: [] };
      this.#lines.set(key, line);
    }
    if (line.running >= this.#inFlight) {
      if (line.waiting.length >= this.#maxWaiting) return null;
      const own = line;
      // The slot is handed over by release(): `running` stays counted for the waiter.
      await new Promise<void>((resolve) => own.waiting.push(resolve));
    } else {
      line.running++;
    }
    const held = line;
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
