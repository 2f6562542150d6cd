import { DomainError } from '../domain/errors.ts';

const WINDOW_MS = 60_000;
/** Addresses tracked at most; past it, windows that have ended are dropped first, then the oldest. */
const MAX_ADDRESSES = 100_000;

/**
 * Failed API-key authentications per client address (issue 11, point 12), in a fixed
 * one-minute window. Once an address reaches the limit, every x-api-key request from it is
 * refused (429) until the window ends, *without looking at the key*: answering a right
 * guess differently from a wrong one would keep the guessing going. In process: each
 * replica counts on its own.
 */
export class KeyFailureThrottle {
  readonly #limit: number;
  readonly #windows = new Map<string, { start: number; failures: number }>();

  /** `limit` 0 turns throttling off. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Refuses (rate_limited) when `address` is over the limit. */
  admit(address: string, now = Date.now()): void {
    if (this.#limit === 0) return;
    const w = this.#windows.get(address);
    if (w === undefined || now - w.start >= WINDOW_MS) return;
    if (w.failures >= this.#limit)
      throw new DomainError(
        'rate_limited.api_key_failures',
        'Too many failed API key attempts from this address, try again later',
        { retryAfterSeconds: (w.start + WINDOW_MS - now) / 1000 },
      );
  }

  recordFailure(address: string, now = Date.now()): void {
    if (this.#limit === 0) return;
    const w = this.#windows.get(address);
    if (w !== undefined && now - w.start < WINDOW_MS) {
      w.failures++;
      return;
    }
    if (this.#windows.size >= MAX_ADDRESSES) this.#prune(now);
    this.#windows.set(address, { start: now, failures: 1 });
  }

  #prune(now: number): void {
    for (const [address, w] of this.#windows) if (now - w.start >= WINDOW_MS) this.#windows.delete(address);
    if (this.#windows.size >= MAX_ADDRESSES) this.#windows.delete(this.#windows.keys().next().value as string);
  }
}
