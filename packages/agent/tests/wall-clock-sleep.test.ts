import { describe, expect, it } from 'vitest';
import { sleepAtLeast } from '../src/wall-clock-sleep.ts';

describe('sleepAtLeast', () => {
  it('waits again when its timer fires before the wall clock has moved the whole time', async () => {
    // A timer counts from the event loop's cached time, which can lag Date.now(): the log then
    // shows a retry 1 ms less than the backoff after the failure.
    const readings = [1_000, 1_999, 2_000];
    const seen: number[] = [];
    const now = () => {
      const t = readings.shift() ?? 2_000;
      seen.push(t);
      return t;
    };
    expect(await sleepAtLeast(1_000, new AbortController().signal, now)).toBe(true);
    expect(seen).toEqual([1_000, 1_999, 2_000]);
  });

  it('resolves false at once when the signal ends it, and never when it had already ended', async () => {
    const ac = new AbortController();
    const pending = sleepAtLeast(60_000, ac.signal);
    ac.abort();
    expect(await pending).toBe(false);
    expect(await sleepAtLeast(60_000, ac.signal)).toBe(false);
  });
});
