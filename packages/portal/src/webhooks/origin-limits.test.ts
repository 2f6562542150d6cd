import { describe, expect, it } from 'vitest';
import { OriginLimits } from './origin-limits.ts';

describe('OriginLimits', () => {
  const A = 'https://a.test';
  const B = 'https://b.test:8443';

  it('admits up to the maximum per origin, each origin on its own', () => {
    const limits = new OriginLimits(3);
    expect([1, 2, 3].map(() => limits.acquire(A).ok)).toEqual([true, true, true]);
    expect(limits.acquire(A)).toEqual({ ok: false, inFlight: 3 });
    expect(limits.acquire(B)).toEqual({ ok: true });
    limits.release(A, 'answered');
    expect(limits.acquire(A)).toEqual({ ok: true });
  });

  it('halves the limit on every timeout down to 1, and grows it by one per answer back to the maximum', () => {
    const limits = new OriginLimits(64);
    for (let i = 0; i < 64; i++) expect(limits.acquire(A).ok).toBe(true);
    const seen: number[] = [];
    for (let i = 0; i < 64; i++) {
      limits.release(A, 'timed-out');
      seen.push(limits.limitOf(A));
    }
    expect(seen.slice(0, 7)).toEqual([32, 16, 8, 4, 2, 1, 1]);
    expect(limits.limitOf(A)).toBe(1);
    // A receiver that times out holds one attempt at a time.
    expect(limits.acquire(A)).toEqual({ ok: true });
    expect(limits.acquire(A)).toEqual({ ok: false, inFlight: 1 });
    // It answers again: one more slot per answer.
    limits.release(A, 'answered');
    expect(limits.limitOf(A)).toBe(2);
    for (let i = 0; i < 100; i++) {
      expect(limits.acquire(A).ok).toBe(true);
      limits.release(A, 'answered');
    }
    expect(limits.limitOf(A)).toBe(64);
  });

  it('a failure that says nothing about the receiver being slow (refused, reset, TLS) leaves the limit alone', () => {
    const limits = new OriginLimits(8);
    limits.acquire(A);
    limits.acquire(A);
    limits.release(A, 'timed-out');
    expect(limits.limitOf(A)).toBe(4);
    limits.release(A, 'other');
    expect(limits.limitOf(A)).toBe(4);
  });
});
