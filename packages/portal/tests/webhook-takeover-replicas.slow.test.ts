import { verify } from '@octokit/webhooks-methods';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type ReceivedRequest, type TestCa } from '@svc/test-support/https-receiver';
import { ADMIN_EMAIL, ADMIN_PASSWORD, KEY_ENCRYPTION_KEY, createTestDatabase, login } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import {
  killAll,
  killProcess,
  makeDataDir,
  startPortalProcess,
  type PortalProcess,
} from '@svc/test-support/portal-process';

/**
 * A replica killed with -9 while a webhook delivery is on its way. Real
 * portal processes on one PostgreSQL database, a real HTTPS receiver on 127.0.0.1 that holds
 * the request open until the kill has happened. The delivery's lease (2 s here) then expires
 * and another replica sends it again, with the same webhook-id and body, until it ends
 * `succeeded`; one whose every run dies with its replica ends `abandoned` after
 * SVC_WEBHOOK_MAX_RUNS (2 here) runs.
 */

const MAX_RUNS = 2;
let ca: TestCa;
let receiver: HttpsReceiver;
let db: pg.Client;
let env: Record<string, string>;
let token: string;
let key: string;
let subscription: { id: string; signing_secret: string; standard_webhooks_secret: string };

const start = async (label: string) =>
  startPortalProcess({ dataDir: await makeDataDir(`svc-takeover-${label}-`), env });
const upload = (p: PortalProcess) =>
  postUpload(p.url, key, sessionParts(sessionDoc('session-minimal.json', newSessionId())));

/** The delivery rows of the subscription, as the database has them, and their leases. */
const rowsOf = async () =>
  (
    await db.query<{ id: string; event_id: string; status: string; runs: number; claimed_by: string | null }>(
      `SELECT d.id, d.event_id, d.status, d.runs, l.claimed_by
       FROM webhook_deliveries d LEFT JOIN webhook_delivery_leases l ON l.delivery_id = d.id
       WHERE d.subscription_id = $1 ORDER BY d.id`,
      [subscription.id],
    )
  ).rows;

/**
 * The `n`th delivery row (from 1) once it is written: the first attempt is posted while its
 * row and lease are still being written (webhooks/dispatcher.ts), so the receiver can hold the
 * request before the row can be read.
 */
async function openedRow(n: number) {
  let rows: Awaited<ReturnType<typeof rowsOf>> = [];
  await until(
    async () => {
      rows = await rowsOf();
      return rows.length >= n;
    },
    30_000,
    () => `delivery row ${n} to be written: ${JSON.stringify(rows)}`,
  );
  return rows[n - 1];
}

const logOf = async (p: PortalProcess) => {
  const res = await http(p.url, 'GET', `/api/webhooks/deliveries?id=${subscription.id}`, {
    headers: withToken(token),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.deliveries as Record<string, any>[];
};

/** The same delivery, signed for this attempt: same webhook-id, X-SVC-Delivery and body bytes. */
async function expectSameDelivery(first: ReceivedRequest, again: ReceivedRequest): Promise<void> {
  expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
  expect(again.headers['x-svc-delivery']).toBe(first.headers['x-svc-delivery']);
  expect(again.headers['x-svc-delivery']).toBe(first.json.event_id);
  expect(again.raw.equals(first.raw)).toBe(true);
  expect(await verify(subscription.signing_secret, again.body, again.headers['x-svc-signature-256'] as string)).toBe(
    true,
  );
  const std = new Webhook(subscription.standard_webhooks_secret);
  expect(
    std.verify(again.raw, {
      'webhook-id': again.headers['webhook-id'] as string,
      'webhook-timestamp': again.headers['webhook-timestamp'] as string,
      'webhook-signature': again.headers['webhook-signature'] as string,
    }),
  ).toEqual(first.json);
}

beforeAll(async () => {
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
  env = {
    DATABASE_URL: await createTestDatabase({ migrated: true }),
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
    SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    SVC_WEBHOOK_CA_FILE: ca.caFile,
    SVC_WEBHOOK_LEASE_SECONDS: '2',
    SVC_WEBHOOK_MAX_RUNS: String(MAX_RUNS),
    SVC_LOG_LEVEL: 'info', // the 'portal listening' line tells the port it picked
  };
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
});

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await killAll();
  await receiver?.close();
  await ca?.cleanup();
});

describe('a replica killed mid-delivery', () => {
  let a: PortalProcess;
  let b: PortalProcess;

  beforeAll(async () => {
    [a, b] = await Promise.all([start('a'), start('b')]);
    token = await login(a.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const lic = await http(a.url, 'POST', '/api/licenses', {
      headers: withToken(token),
      json: { tier: 'msp', client_id: uniqueClientId('takeover'), name: 'takeover' },
    });
    expect(lic.status, lic.text).toBe(201);
    key = lic.body.license.plaintext_key;
    const sub = await http(b.url, 'POST', '/api/webhooks', {
      headers: withToken(token),
      json: { url: receiver.url('/takeover'), event_types: ['scan_completed'] },
    });
    expect(sub.status, sub.text).toBe(201);
    subscription = sub.body.subscription;
  });

  it('the delivery is sent again by the other replica after the lease, with the same webhook-id, and ends succeeded', async () => {
    receiver.queue({ kind: 'hold' }); // the first request stays unanswered; later ones get 200
    expect((await upload(a)).status).toBe(200);
    const [first] = await receiver.waitFor(1);
    // On its way from A, under A's lease (its owner name carries A's pid).
    const inFlight = await openedRow(1);
    expect(inFlight).toMatchObject({ event_id: first!.json.event_id, status: 'pending', runs: 1 });
    expect(inFlight!.claimed_by).toContain(`:${a.pid}:`);

    await killProcess(a);
    expect((await a.exited).signal).toBe('SIGKILL');

    const [, again] = await receiver.waitFor(2, 30_000);
    await expectSameDelivery(first!, again!);
    let log: Record<string, any>[] = [];
    await until(
      async () => {
        log = await logOf(b);
        return log[0]?.status !== 'pending';
      },
      30_000,
      () => `the delivery to finish: ${JSON.stringify(log)}`,
    );
    expect(log).toEqual([
      expect.objectContaining({
        id: Number(inFlight!.id),
        event_id: first!.json.event_id,
        status: 'succeeded',
        runs: 2,
        attempts: [expect.objectContaining({ attempt: 1, status_code: 200, error: null })],
      }),
    ]);
    expect(await rowsOf()).toEqual([{ ...inFlight, status: 'succeeded', runs: 2, claimed_by: null }]);
    expect(receiver.requests).toHaveLength(2);
    expect(b.stdout()).toContain('webhook delivery taken over: the lease of the replica sending it expired');
  });

  it(`one whose every run dies with its replica ends abandoned after ${MAX_RUNS} runs, visible in the log`, async () => {
    const seen = receiver.requests.length;
    receiver.respond({ kind: 'hold' }); // nothing is answered now
    const a2 = await start('a2');
    expect((await upload(b)).status).toBe(200);
    const [first] = (await receiver.waitFor(seen + 1)).slice(seen);
    const inFlight = await openedRow(2);
    expect(inFlight).toMatchObject({ event_id: first!.json.event_id, status: 'pending', runs: 1 });
    expect(inFlight!.claimed_by).toContain(`:${b.pid}:`);
    await killProcess(b);

    // A2 takes it over (run 2), and is killed while the receiver holds that run too.
    const again = (await receiver.waitFor(seen + 2, 30_000))[seen + 1];
    await expectSameDelivery(first!, again!);
    const [, taken] = await rowsOf();
    expect(taken).toMatchObject({ status: 'pending', runs: 2 });
    expect(taken!.claimed_by).toContain(`:${a2.pid}:`);
    await killProcess(a2);

    const a3 = await start('a3');
    let log: Record<string, any>[] = [];
    await until(
      async () => {
        log = await logOf(a3);
        return log[0]?.status !== 'pending';
      },
      30_000,
      () => `the delivery to be abandoned: ${JSON.stringify(log)}`,
    );
    expect(log[0]).toEqual(
      expect.objectContaining({
        id: Number(inFlight!.id),
        status: 'abandoned',
        runs: MAX_RUNS,
        attempts: [
          {
            attempt: 1,
            status_code: null,
            duration_ms: null,
            error: 'abandoned: 2 runs ended without an outcome (the replica sending it stopped first)',
            attempted_at: expect.any(String),
          },
        ],
      }),
    );
    expect((await rowsOf())[1]).toEqual({ ...inFlight, status: 'abandoned', runs: MAX_RUNS, claimed_by: null });
    // Never sent a third time.
    expect(receiver.requests.slice(seen).map((r) => r.headers['webhook-id'])).toEqual([
      first!.json.event_id,
      first!.json.event_id,
    ]);
    expect(a3.stdout()).toContain('webhook delivery abandoned');
  });
});
