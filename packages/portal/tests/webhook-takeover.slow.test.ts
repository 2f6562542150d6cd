import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ABANDONED } from '../src/webhooks/leases.ts';
import { createLicense, createScopedUser, openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { createTestDatabase, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { until } from '@svc/test-support/wait';

/**
 * Delivery leases (webhooks/leases.ts, migration 0019) with two in-process replicas on one
 * database. A crash leaves a pending delivery whose lease nobody renews: these tests write
 * exactly that (the row and an expired lease of an owner that is gone) and let the replicas'
 * sweeps decide. Killing real processes mid-delivery: webhook-takeover-replicas.slow.test.ts.
 */

const LEASE_SECONDS = 3;
const MAX_RUNS = 3;
const DEAD = 'dead-replica:1:00000000';

let ca: TestCa;
let a: TestPortal;
let b: TestPortal;
let db: pg.Client;
let admin: string;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  ca = await createTestCa();
  const env = {
    SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    SVC_WEBHOOK_CA_FILE: ca.caFile,
    SVC_WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
    SVC_WEBHOOK_MAX_RUNS: String(MAX_RUNS),
  };
  const databaseUrl = await createTestDatabase({ migrated: true });
  a = await startTestPortal({ databaseUrl, env });
  b = await startTestPortal({ databaseUrl, env });
  db = await openDb(a);
  admin = await a.adminToken();
});
afterEach(async () => {
  await Promise.all([a.ctx.events.drain(), b.ctx.events.drain()]);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await db?.end();
  await Promise.all([a?.close(), b?.close()]);
  await ca?.cleanup();
});

async function receiver(): Promise<HttpsReceiver> {
  const r = await HttpsReceiver.start(ca);
  receivers.push(r);
  return r;
}

async function subscribe(url: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await http(a.url, 'POST', '/api/webhooks', {
    headers: withToken(admin),
    json: { url, event_types: ['status_changed'], ...extra },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.subscription.id as string;
}

interface Left {
  id: number;
  eventId: string;
  body: string;
}

/** What a replica killed mid-delivery leaves: a pending delivery (after `runs` runs) and its lease, expired. */
async function leftByDeadReplica(
  subscriptionId: string,
  opts: { runs?: number; clientId?: string | null; status?: string } = {},
): Promise<Left> {
  const eventId = `evt_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify({
    api_version: '2',
    event_type: 'status_changed',
    event_id: eventId,
    timestamp: new Date().toISOString(),
    data: { session_id: `s-${eventId}`, client_id: opts.clientId ?? null },
  });
  const { rows } = await db.query<{ id: string }>(
    `WITH d AS (
       INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, body, client_id, status, runs)
       VALUES ($1, $2, 'status_changed', $3, $4, $5, $6) RETURNING id
     )
     INSERT INTO webhook_delivery_leases (delivery_id, claimed_by, claimed_until)
     SELECT id, $7, now() - interval '1 second' FROM d RETURNING delivery_id AS id`,
    [subscriptionId, eventId, body, opts.clientId ?? null, opts.status ?? 'pending', opts.runs ?? 1, DEAD],
  );
  return { id: Number(rows[0]!.id), eventId, body };
}

const deliveries = async (portal: TestPortal, subscriptionId: string, token = admin) => {
  const res = await http(portal.url, 'GET', `/api/webhooks/deliveries?id=${subscriptionId}&limit=500`, {
    headers: withToken(token),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.deliveries as Record<string, any>[];
};

/** Bounded poll until none of the subscription's deliveries is pending. */
async function settled(subscriptionId: string, n: number): Promise<Record<string, any>[]> {
  let last: Record<string, any>[] = [];
  await until(
    async () => {
      last = await deliveries(b, subscriptionId);
      return last.length === n && last.every((d) => d.status !== 'pending');
    },
    30_000,
    () => `${n} settled deliveries of ${subscriptionId}: ${JSON.stringify(last.map((d) => d.status))}`,
  );
  return last;
}

const leasesOf = async (ids: number[]) =>
  (
    await db.query<{ delivery_id: string; claimed_by: string }>(
      'SELECT delivery_id, claimed_by FROM webhook_delivery_leases WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id',
      [ids],
    )
  ).rows;

describe('delivery leases across replicas', () => {
  it('deliveries left by a dead replica are each taken over once, by one of two replicas sweeping at once, with the same id and body', async () => {
    const r = await receiver();
    const sub = await subscribe(r.url('/left'));
    const left: Left[] = [];
    for (let i = 0; i < 40; i++) left.push(await leftByDeadReplica(sub));
    const sweeps = await Promise.all([
      a.ctx.webhooks.dispatcher.leases.sweep(),
      b.ctx.webhooks.dispatcher.leases.sweep(),
      a.ctx.webhooks.dispatcher.leases.sweep(),
      b.ctx.webhooks.dispatcher.leases.sweep(),
    ]);
    // No delivery is taken by both replicas (a replica's concurrent sweeps are one; its timer may take some too).
    const [fromA, fromB] = [sweeps[0]!.taken, sweeps[1]!.taken];
    expect(fromA.filter((id) => fromB.includes(id))).toEqual([]);

    // One takeover each: runs 2, never 3. (On a loaded machine a first attempt may time out and
    // its retry succeed; the receiver may then have got the delivery twice, as with any retry.)
    const log = await settled(sub, left.length);
    expect(log.map((d) => ({ status: d.status, runs: d.runs, last: d.attempts.at(-1).status_code }))).toEqual(
      left.map(() => ({ status: 'succeeded', runs: 2, last: 200 })),
    );
    await r.waitFor(left.length);
    const got = r.requests.filter((q) => q.path === '/left');
    expect([...new Set(got.map((q) => q.headers['webhook-id']))].sort()).toEqual(left.map((l) => l.eventId).sort());
    for (const q of got) {
      const l = left.find((x) => x.eventId === q.headers['webhook-id'])!;
      expect(q.headers['x-svc-delivery']).toBe(l.eventId);
      expect(q.body).toBe(l.body);
    }
    expect(await leasesOf(left.map((l) => l.id))).toEqual([]);
  });

  it('a delivery whose runs are used up, or whose subscription was disabled or moved, ends abandoned with the reason; a finished one only loses its lease', async () => {
    const r = await receiver();
    const clientId = uniqueClientId('lease');
    await createLicense(a, { tier: 'business', client_id: clientId });
    const bound = await subscribe(r.url('/bound'), { client_id: clientId });
    const disabled = await subscribe(r.url('/disabled'), { enabled: false });
    const moved = await subscribe(r.url('/moved'), { client_id: uniqueClientId('elsewhere') });
    const usedUp = await leftByDeadReplica(bound, { runs: MAX_RUNS, clientId });
    const done = await leftByDeadReplica(bound, { status: 'succeeded', clientId });
    const toDisabled = await leftByDeadReplica(disabled);
    const toMoved = await leftByDeadReplica(moved, { clientId });
    await Promise.all([a.ctx.webhooks.dispatcher.leases.sweep(), b.ctx.webhooks.dispatcher.leases.sweep()]);

    const reasonOf = async (sub: string, id: number) => {
      const [d] = (await settled(sub, sub === bound ? 2 : 1)).filter((x) => x.id === id);
      return { status: d!.status, runs: d!.runs, attempts: d!.attempts };
    };
    const abandoned = (reason: string, runs: number) => ({
      status: 'abandoned',
      runs,
      attempts: [{ attempt: 1, status_code: null, duration_ms: null, error: reason, attempted_at: expect.any(String) }],
    });
    expect(await reasonOf(bound, usedUp.id)).toEqual(abandoned(ABANDONED.runs(MAX_RUNS), MAX_RUNS));
    expect(ABANDONED.runs(MAX_RUNS)).toBe(
      'abandoned: 3 runs ended without an outcome (the replica sending it stopped first)',
    );
    expect(await reasonOf(disabled, toDisabled.id)).toEqual(abandoned('abandoned: the subscription is disabled', 1));
    expect(await reasonOf(moved, toMoved.id)).toEqual(
      abandoned('abandoned: the subscription now belongs to another client', 1),
    );
    expect(await reasonOf(bound, done.id)).toEqual({ status: 'succeeded', runs: 1, attempts: [] });
    expect(await leasesOf([usedUp.id, done.id, toDisabled.id, toMoved.id])).toEqual([]);
    expect(r.requests).toEqual([]);

    // A member of the client sees the state and the reason as is (they name nothing of the network).
    const member = await createScopedUser(a, [clientId]);
    const seen = await deliveries(b, bound, member.token);
    expect(seen.find((d) => d.id === usedUp.id)).toMatchObject({
      status: 'abandoned',
      attempts: [{ error: ABANDONED.runs(MAX_RUNS), duration_ms: null }],
    });
  });

  it('a delivery taken over whose receiver fails ends failed, and counts in the failure streak', async () => {
    const r = await receiver();
    r.respond({ kind: 'status', status: 500 });
    const sub = await subscribe(r.url('/failing'));
    const left = await leftByDeadReplica(sub);
    await b.ctx.webhooks.dispatcher.leases.sweep();
    const [d] = await settled(sub, 1);
    expect(d).toMatchObject({
      id: left.id,
      status: 'failed',
      runs: 2,
      attempts: [
        { attempt: 1, status_code: 500, error: 'HTTP 500' },
        { attempt: 2, status_code: 500, error: 'HTTP 500' },
      ],
    });
    const { rows } = await db.query('SELECT consecutive_failures FROM webhook_subscriptions WHERE id = $1', [sub]);
    expect(rows).toEqual([{ consecutive_failures: 1 }]);
  });

  it('a delivery in flight past its first lease is not taken over: its replica renews the lease', async () => {
    const r = await receiver();
    r.queue({ kind: 'hold' });
    const sub = await subscribe(r.url('/slow'));
    const ping = http(a.url, 'POST', `/api/webhooks/ping?id=${sub}`, { headers: withToken(admin) });
    await r.waitFor(1);
    const first = (
      await db.query<{ delivery_id: string; claimed_by: string; claimed_until: Date }>(
        `SELECT l.* FROM webhook_delivery_leases l JOIN webhook_deliveries d ON d.id = l.delivery_id WHERE d.subscription_id = $1`,
        [sub],
      )
    ).rows;
    expect(first.map((l) => l.claimed_by)).toEqual([a.ctx.webhooks.dispatcher.leases.owner]);
    const lease = first[0]!;
    // Until the database's clock has passed the lease the delivery started with.
    await until(
      async () => (await db.query('SELECT now() > $1::timestamptz AS past', [lease.claimed_until])).rows[0].past,
      2 * LEASE_SECONDS * 1000,
      () => 'the first lease to end',
    );
    expect((await b.ctx.webhooks.dispatcher.leases.sweep()).taken).toEqual([]);
    const { rows: now } = await db.query<{ claimed_until: Date }>(
      'SELECT claimed_until FROM webhook_delivery_leases WHERE delivery_id = $1',
      [lease.delivery_id],
    );
    expect(now[0]!.claimed_until.getTime()).toBeGreaterThan(lease.claimed_until.getTime());
    expect(r.requests).toHaveLength(1);
    r.release();
    const res = await ping;
    expect(res.status, res.text).toBe(200);
    expect(res.body.delivery).toMatchObject({ status: 'succeeded', runs: 1 });
    expect(await leasesOf([Number(lease.delivery_id)])).toEqual([]);
  });
});
