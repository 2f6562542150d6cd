import { describe, expect, it } from 'vitest';
import { OriginLimits, type Slot } from './origin-limits.ts';

/** Settled value of a promise after pending timers and microtasks of this turn, or 'waiting'. */
async function peek<T>(p: Promise<T>): Promise<T | 'waiting'> {
  return Promise.race([p, new Promise<'waiting'>((resolve) => setImmediate(() => resolve('waiting')))]);
}

describe('OriginLimits', () => {
  const A = 'https://a.test';
  const B = 'https://b.test:8443';
  const limits = (max: number, queueMax = 100, waitMs = 60_000) => new OriginLimits({ max, queueMax, waitMs });

  it('admits up to the maximum per origin at once, each origin on its own; past it an attempt waits for a slot', async () => {
    const l = limits(3);
    expect(await Promise.all([1, 2, 3].map(() => l.acquire(A)))).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    const fourth = l.acquire(A);
    expect(await peek(fourth)).toBe('waiting');
    expect(await l.acquire(B)).toEqual({ ok: true });
    l.release(A, 'answered');
    expect(await fourth).toEqual({ ok: true });
  });

  it('waiting attempts go in arrival order (FIFO), and a new one does not jump the queue when a slot frees', async () => {
    const l = limits(1);
    await l.acquire(A);
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) =>
      l.acquire(A).then((s) => {
        order.push(n);
        return s;
      }),
    );
    l.release(A, 'answered');
    // Limit is now 1 again (max): one slot, taken by the first in line, not by a newcomer.
    const late = l.acquire(A).then((s) => {
      order.push(4);
      return s;
    });
    await waiting[0];
    expect(order).toEqual([1]);
    l.release(A, 'answered');
    await waiting[1];
    l.release(A, 'answered');
    await waiting[2];
    l.release(A, 'answered');
    await late;
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it("sheds an attempt when the origin's queue is full (at once) or when it outwaits its deadline; neither takes a slot", async () => {
    const l = limits(1, 2, 150);
    await l.acquire(A);
    const w1 = l.acquire(A);
    const w2 = l.acquire(A);
    expect(await l.acquire(A)).toEqual({ ok: false, reason: 'queue-full', inFlight: 1, waitedMs: 0 });
    const [s1, s2] = (await Promise.all([w1, w2])) as Extract<Slot, { ok: false }>[];
    expect(s1).toMatchObject({ ok: false, reason: 'deadline', inFlight: 1 });
    expect(s1?.waitedMs).toBeGreaterThanOrEqual(140);
    expect(s2).toMatchObject({ ok: false, reason: 'deadline', inFlight: 1 });
    expect(l.waitingAt(A)).toBe(0);
    // The shed attempts left no trace: one release frees the one slot for the next attempt.
    l.release(A, 'answered');
    expect(await l.acquire(A)).toEqual({ ok: true });
  });

  it('halves the limit on every timeout down to 1, and grows it by one per answer back to the maximum; a raised limit admits waiters', async () => {
    const l = limits(64);
    for (let i = 0; i < 64; i++) expect(await l.acquire(A)).toEqual({ ok: true });
    const seen: number[] = [];
    for (let i = 0; i < 64; i++) {
      l.release(A, 'timed-out');
      seen.push(l.limitOf(A));
    }
    expect(seen.slice(0, 7)).toEqual([32, 16, 8, 4, 2, 1, 1]);
    expect(l.limitOf(A)).toBe(1);
    // A receiver that times out holds one attempt at a time; the next waits.
    expect(await l.acquire(A)).toEqual({ ok: true });
    const second = l.acquire(A);
    const third = l.acquire(A);
    expect(await peek(second)).toBe('waiting');
    // It answers again: the limit goes to 2, so both waiters go (one into the freed slot, one into the new one).
    l.release(A, 'answered');
    expect(l.limitOf(A)).toBe(2);
    expect(await second).toEqual({ ok: true });
    expect(await third).toEqual({ ok: true });
    l.release(A, 'answered');
    l.release(A, 'answered');
    for (let i = 0; i < 100; i++) {
      expect(await l.acquire(A)).toEqual({ ok: true });
      l.release(A, 'answered');
    }
    expect(l.limitOf(A)).toBe(64);
  });

  it('a failure that says nothing about the receiver being slow (refused, reset, TLS) leaves the limit alone', async () => {
    const l = limits(8);
    await l.acquire(A);
    await l.acquire(A);
    l.release(A, 'timed-out');
    expect(l.limitOf(A)).toBe(4);
    l.release(A, 'other');
    expect(l.limitOf(A)).toBe(4);
  });
});

describe('OriginLimits at shutdown', () => {
  it('sheds every waiting attempt at once, and later ones past the limit; attempts within the limit still go', async () => {
    const l = new OriginLimits({ max: 1, queueMax: 100, waitMs: 60_000 });
    await l.acquire('https://a.test');
    const waiting = [l.acquire('https://a.test'), l.acquire('https://a.test')];
    l.shedWaiting();
    expect(await Promise.all(waiting)).toEqual([
      { ok: false, reason: 'shutdown', inFlight: 1, waitedMs: expect.any(Number) },
      { ok: false, reason: 'shutdown', inFlight: 1, waitedMs: expect.any(Number) },
    ]);
    expect(await l.acquire('https://a.test')).toEqual({ ok: false, reason: 'shutdown', inFlight: 1, waitedMs: 0 });
    expect(await l.acquire('https://b.test')).toEqual({ ok: true });
  });
});
