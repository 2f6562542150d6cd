/** The daemon's waits between heartbeats and polls, which a stop, a reload or a new interval ends early. */
export class WakeableWait {
  #wake: (() => void) | null = null;

  /** Resolves true when `ms` passed, false when woken early. */
  sleep(ms: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done(true), ms);
      const done = (timed: boolean) => {
        clearTimeout(timer);
        this.#wake = null;
        resolve(timed);
      };
      this.#wake = () => done(false);
    });
  }

  /** Ends the wait in progress, if any. */
  wake(): void {
    this.#wake?.();
  }
}
