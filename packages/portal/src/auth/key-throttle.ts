import { LICENSE_KEY_PREFIX_LENGTH } from '@svc/protocol';
import { DomainError } from '../domain/errors.ts';

const WINDOW_MS = 60_000;
/** An address's budget for prefixes that have not authenticated from it, in multiples of the limit. */
export const ADDRESS_BUDGET_FACTOR = 5;
/** How long a prefix that authenticated from an address stays proven there. */
const PROVEN_FOR_MS = 24 * 3_600_000;
/** A proven prefix's time is renewed by a success at most this often. */
const REFRESH_MS = 60_000;
/** Entries kept per map at most; past it, ended windows are dropped first, then the oldest. */
const MAX_ENTRIES = 100_000;

type Window = { start: number; failures: number };

/**
 * Failed API-key authentications (an unknown or malformed key), in fixed one-minute windows,
 * counted per (client address, key prefix) and per address (docs/security.md#requests-and-connections,
 * "Key guessing"). A request is refused (429) when
 * - its (address, prefix) had `limit` failures this minute, or
 * - its address had `limit` x ADDRESS_BUDGET_FACTOR failures this minute and its prefix has
 *   not authenticated from that address in the last day.
 * The key itself is not looked at once refused, so a right guess cannot be told from a wrong
 * one; keying on the prefix lets the agents behind a shared NAT or proxy address keep working
 * while someone there guesses. In process: each replica counts on its own.
 */
export class KeyFailureThrottle {
  readonly #limit: number;
  readonly #perPrefix = new Map<string, Window>();
  readonly #perAddress = new Map<string, Window>();
  /** `address prefix` -> when a key with that prefix last authenticated from that address. */
  readonly #proven = new Map<string, number>();

  /** `limit` 0 turns throttling off. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Refuses (rate_limited) when `key` may not be tried from `address` now. */
  /** `pair` is pairOf(address, key), when the caller keeps it. */
  admit(address: string, key: string, now = Date.now(), pair = pairOf(address, key)): void {
    if (this.#limit === 0) return;
    const own = current(this.#perPrefix.get(pair), now);
    if (own !== null && own.failures >= this.#limit) throw refused(own, now);
    const all = current(this.#perAddress.get(address), now);
    if (all !== null && all.failures >= this.#limit * ADDRESS_BUDGET_FACTOR && !this.#isProven(pair, now))
      throw refused(all, now);
  }

  recordFailure(address: string, key: string, now = Date.now(), pair = pairOf(address, key)): void {
    if (this.#limit === 0) return;
    count(this.#perPrefix, pair, now);
    count(this.#perAddress, address, now);
  }

  /** A real key (whatever its license's state) came from `address`: its prefix is proven there. */
  recordSuccess(address: string, key: string, now = Date.now(), pair = pairOf(address, key)): void {
    if (this.#limit === 0) return;
    // Refreshed at most once a minute (a fleet's keys succeed on every request): a prefix stays
    // proven a day after its last success, give or take that minute, never longer.
    const at = this.#proven.get(pair);
    if (at !== undefined && now - at < REFRESH_MS) return;
    // Re-inserted so that the map stays ordered by last success when the oldest are dropped.
    this.#proven.delete(pair);
    if (this.#proven.size >= MAX_ENTRIES) {
      for (const [k, at] of this.#proven) if (now - at >= PROVEN_FOR_MS) this.#proven.delete(k);
      if (this.#proven.size >= MAX_ENTRIES) this.#proven.delete(this.#proven.keys().next().value as string);
    }
    this.#proven.set(pair, now);
  }

  #isProven(pair: string, now: number): boolean {
    const at = this.#proven.get(pair);
    return at !== undefined && now - at < PROVEN_FOR_MS;
  }
}

/** A malformed key's first characters count as its prefix; an address holds no space. */
export const pairOf = (address: string, key: string) => `${address} ${key.slice(0, LICENSE_KEY_PREFIX_LENGTH)}`;

const current = (w: Window | undefined, now: number): Window | null =>
  w === undefined || now - w.start >= WINDOW_MS ? null : w;

const refused = (w: Window, now: number) =>
  new DomainError(
    'rate_limited.api_key_failures',
    'Too many failed API key attempts from this address, try again later',
    {
      retryAfterSeconds: (w.start + WINDOW_MS - now) / 1000,
    },
  );

function count(windows: Map<string, Window>, k: string, now: number): void {
  const w = current(windows.get(k), now);
  if (w !== null) {
    w.failures++;
    return;
  }
  windows.delete(k);
  if (windows.size >= MAX_ENTRIES) {
    for (const [key, old] of windows) if (now - old.start >= WINDOW_MS) windows.delete(key);
    if (windows.size >= MAX_ENTRIES) windows.delete(windows.keys().next().value as string);
  }
  windows.set(k, { start: now, failures: 1 });
}
