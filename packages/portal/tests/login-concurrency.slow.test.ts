import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InFlightLimit } from '../src/domain/in-flight-limit.ts';
import { admitLoginAttempt, recordSuccessfulLogin } from '../src/identity/throttle.ts';
import { http } from '@svc/test-support/http';
import { until } from '@svc/test-support/wait';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Concurrent password checks per e-mail are bounded, so parallel guesses
 * from many addresses cannot outrun the per-e-mail slow-down (docs/identity.md#limits-and-hardening).
 */

describe('InFlightLimit', () => {
  it('one check per key at a time, then a line of the given length in order, then refusal', async () => {
    const gate = new InFlightLimit(1, 2);
    const first = await gate.enter('a@x.test');
    expect(first).not.toBeNull();
    const order: string[] = [];
    const second = gate.enter('a@x.test').then((release) => {
      order.push('second');
      return release;
    });
    const third = gate.enter('a@x.test').then((release) => {
      order.push('third');
      return release;
    });
    // The line is full: refused at once, without waiting.
    expect(await gate.enter('a@x.test')).toBeNull();
    // Another e-mail has its own slot.
    const other = await gate.enter('b@x.test');
    expect(other).not.toBeNull();
    expect(order).toEqual([]);
    first?.();
    first?.(); // a second release is ignored
    const releaseSecond = await second;
    expect(order).toEqual(['second']);
    // While the second runs, the line has room for one more again.
    const fourth = gate.enter('a@x.test');
    releaseSecond?.();
    (await third)?.();
    const releaseFourth = await fourth;
    expect(order).toEqual(['second', 'third']);
    releaseFourth?.();
    other?.();
    // Everything released: a new attempt gets its slot at once.
    const again = await gate.enter('a@x.test');
    expect(again).not.toBeNull();
    again?.();
  });

  it('tryEnter takes a free slot at once and never waits in line', async () => {
    const uploads = new InFlightLimit(2);
    const a = uploads.tryEnter('key');
    const b = uploads.tryEnter('key');
    expect([a, b].every((r) => r !== null)).toBe(true);
    expect(uploads.tryEnter('key')).toBeNull();
    expect(await uploads.enter('key')).toBeNull(); // no line: refused like tryEnter
    expect(uploads.tryEnter('other')).not.toBeNull();
    a?.();
    const c = uploads.tryEnter('key');
    expect(c).not.toBeNull();
    b?.();
    c?.();
    c?.(); // a second release is ignored
    expect([uploads.tryEnter('key'), uploads.tryEnter('key'), uploads.tryEnter('key')].map((r) => r !== null)).toEqual([
      true,
      true,
      false,
    ]);
  });
});

describe('parallel password guesses for one e-mail from many addresses', () => {
  const DELAY_MS = 400;
  let portal: TestPortal;
  beforeAll(async () => {
    // Slowed from the second failure on; the test is the one proxy hop, so it names the addresses.
    portal = await startTestPortal({
      env: { SVC_TRUST_PROXY: '1', SVC_LOGIN_SLOW_AFTER: '1', SVC_LOGIN_SLOW_DELAY_MS: String(DELAY_MS) },
    });
  });
  afterAll(() => portal.close());

  const guess = (address: string) =>
    http(portal.url, 'POST', '/identity/token', {
      headers: { 'x-forwarded-for': address },
      json: { grant_type: 'password', username: ADMIN_EMAIL, password: 'wrong-password-000' },
    });

  it('run one at a time: five slowed guesses take at least five delays, and each is an ordinary refusal', async () => {
    expect((await guess('198.51.100.1')).status).toBe(400);
    const started = performance.now();
    const answers = await Promise.all([2, 3, 4, 5, 6].map((i) => guess(`198.51.100.${i}`)));
    const elapsed = performance.now() - started;
    for (const res of answers)
      expect({ status: res.status, body: res.body }).toEqual({
        status: 400,
        body: { error: 'invalid_grant', error_description: 'Invalid username or password' },
      });
    // Each waited its delay inside the e-mail's one slot: no two delays overlapped.
    expect(elapsed).toBeGreaterThanOrEqual(5 * DELAY_MS);
  });

  it('past one check running and four waiting, an attempt is refused at once with 429 in the OAuth format', async () => {
    // The first check is held inside its slot: the users table is locked, so its lookup waits.
    const locker = new pg.Client({ connectionString: portal.databaseUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const waiting = async () =>
        (
          await locker.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()",
          )
        ).rows[0].n as number;
      const first = guess('198.51.100.20');
      await until(
        async () => (await waiting()) === 1,
        20_000,
        () => 'the first check to wait for the users table',
      );
      // Five more: four take the line, one is refused; none of the four can answer while the first holds the slot.
      const others = [21, 22, 23, 24, 25].map((i) => guess(`198.51.100.${i}`));
      const refusedAtOnce = await Promise.race(others);
      expect({ status: refusedAtOnce.status, body: refusedAtOnce.body }).toEqual({
        status: 429,
        body: {
          error: 'too_many_attempts',
          error_description: 'Too many sign-ins for this account at once; try again in a moment',
        },
      });
      expect(refusedAtOnce.headers.get('retry-after')).toBe('1');
      await locker.query('COMMIT');
      const all = await Promise.all([first, ...others]);
      expect(all.map((r) => r.status).sort()).toEqual([400, 400, 400, 400, 400, 429]);
    } finally {
      await locker.end();
    }
  });
});

describe('a login counted while another of the same e-mail and address succeeds', () => {
  let portal: TestPortal;
  beforeAll(async () => {
    portal = await startTestPortal();
  });
  afterAll(() => portal.close());

  it('never fails: the count row a success deletes meanwhile is made again, not missing (was a 500)', async () => {
    const email = 'race@test.local';
    const failures: string[] = [];
    // Bounded: 300 rounds of one counted attempt racing one success's clean-up.
    for (let round = 0; round < 300 && failures.length === 0; round++) {
      const results = await Promise.allSettled([
        admitLoginAttempt(portal.ctx.db, email, '127.0.0.9', new Date(), 20),
        recordSuccessfulLogin(portal.ctx.db, email, '127.0.0.9'),
      ]);
      for (const r of results) if (r.status === 'rejected') failures.push(String(r.reason));
    }
    expect(failures).toEqual([]);
  });
});
