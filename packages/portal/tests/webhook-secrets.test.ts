import { randomBytes } from 'node:crypto';
import { verify } from '@octokit/webhooks-methods';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config/index.ts';
import { WebhookSecrets } from '../src/webhooks/secrets.ts';
import { http } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type ReceivedRequest, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Webhook signing secrets are stored encrypted (AES-256-GCM under the identity key's
 * key-encryption key), a clear secret an older version stored is encrypted at the next start,
 * and deliveries still carry signatures that verify with the secret the creation answered.
 */

let ca: TestCa;
let receiver: HttpsReceiver;
const kek = randomBytes(32).toString('hex');

beforeAll(async () => {
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
});
afterAll(async () => {
  await receiver?.close();
  await ca?.cleanup();
});

const env = (extra: Record<string, string | undefined> = {}) => ({
  SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
  SVC_WEBHOOK_CA_FILE: ca.caFile,
  SVC_IDENTITY_KEY_ENCRYPTION_KEY: kek,
  ...extra,
});

interface Created {
  id: string;
  signing_secret: string;
  standard_webhooks_secret: string;
}

async function subscribe(portal: TestPortal): Promise<Created> {
  const res = await http(portal.url, 'POST', '/api/webhooks', {
    headers: { 'x-identity-token': await portal.adminToken() },
    json: { url: receiver.url(`/hook/${randomBytes(4).toString('hex')}`), event_types: ['status_changed'] },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.subscription;
}

/** A ping through the API, and the request the receiver got for it. */
async function ping(portal: TestPortal, id: string): Promise<ReceivedRequest> {
  const res = await http(portal.url, 'POST', `/api/webhooks/ping?id=${id}`, {
    headers: { 'x-identity-token': await portal.adminToken() },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.delivery.status).toBe('succeeded');
  const arrived = () => receiver.requests.find((r) => r.json?.event_id === res.body.delivery.event_id);
  await until(
    () => arrived() !== undefined,
    10_000,
    () => 'the ping at the receiver',
  );
  return arrived()!;
}

async function expectSigned(req: ReceivedRequest, secret: string) {
  expect(await verify(secret, req.body, req.headers['x-svc-signature-256'] as string)).toBe(true);
  const h = req.headers as Record<string, string>;
  expect(
    new Webhook(`whsec_${Buffer.from(secret, 'utf8').toString('base64')}`).verify(req.raw, {
      'webhook-id': h['webhook-id']!,
      'webhook-timestamp': h['webhook-timestamp']!,
      'webhook-signature': h['webhook-signature']!,
    }),
  ).toEqual(req.json);
}

async function storedRow(db: pg.Pool, id: string) {
  const { rows } = await db.query(
    `SELECT signing_secret, signing_secret_encrypted, row_to_json(s)::text AS raw FROM webhook_subscriptions s WHERE id = $1`,
    [id],
  );
  return rows[0] as { signing_secret: string | null; signing_secret_encrypted: string | null; raw: string };
}

describe('webhook signing secrets at rest', () => {
  let portal: TestPortal;
  let db: pg.Pool;
  beforeAll(async () => {
    portal = await startTestPortal({ env: env() });
    db = new pg.Pool({ connectionString: portal.databaseUrl, max: 2 });
    db.on('error', () => {});
  });
  afterAll(async () => {
    await db?.end();
    await portal?.close();
  });

  it('stores a new secret only encrypted; a delivery is signed with the secret the creation answered', async () => {
    const sub = await subscribe(portal);
    expect(sub.signing_secret).toMatch(/^[0-9a-f]{64}$/);
    const row = await storedRow(db, sub.id);
    expect(row.signing_secret).toBeNull();
    expect(row.signing_secret_encrypted).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(row.raw).not.toContain(sub.signing_secret);
    expect(row.raw).not.toContain(Buffer.from(sub.signing_secret).toString('base64'));
    await expectSigned(await ping(portal, sub.id), sub.signing_secret);
  });

  it('an update keeps the secret; a ciphertext moved to another subscription does not decrypt there', async () => {
    const a = await subscribe(portal);
    const b = await subscribe(portal);
    const before = await storedRow(db, a.id);
    const patched = await http(portal.url, 'PATCH', `/api/webhooks?id=${a.id}`, {
      headers: { 'x-identity-token': await portal.adminToken() },
      json: { description: 'renamed' },
    });
    expect(patched.status).toBe(200);
    expect((await storedRow(db, a.id)).signing_secret_encrypted).toBe(before.signing_secret_encrypted);
    await expectSigned(await ping(portal, a.id), a.signing_secret);
    // The subscription id is authenticated data: b cannot be made to sign with a's secret.
    await db.query('UPDATE webhook_subscriptions SET signing_secret_encrypted = $1 WHERE id = $2', [
      before.signing_secret_encrypted,
      b.id,
    ]);
    const sent = receiver.requests.length;
    const res = await http(portal.url, 'POST', `/api/webhooks/ping?id=${b.id}`, {
      headers: { 'x-identity-token': await portal.adminToken() },
    });
    expect(res.status).toBe(200);
    expect(res.body.delivery.status).toBe('failed');
    expect(res.body.delivery.attempts.map((x: { error: string }) => x.error)).toEqual([
      `not sent: the signing secret of ${b.id} does not decrypt with SVC_IDENTITY_KEY_ENCRYPTION_KEY`,
    ]);
    expect(receiver.requests.length).toBe(sent);
    expect(res.text).not.toContain(a.signing_secret);
  });

  it('a clear secret an older portal stored (a replica not yet upgraded) still signs; the next start encrypts it', async () => {
    const sub = await subscribe(portal);
    const clear = randomBytes(32).toString('hex');
    await db.query(
      'UPDATE webhook_subscriptions SET signing_secret = $1, signing_secret_encrypted = NULL WHERE id = $2',
      [clear, sub.id],
    );
    await expectSigned(await ping(portal, sub.id), clear);

    await portal.close();
    portal = await startTestPortal({ databaseUrl: portal.databaseUrl, env: env() });
    const row = await storedRow(db, sub.id);
    expect(row.signing_secret).toBeNull();
    expect(row.signing_secret_encrypted).toMatch(/^v1\./);
    expect(row.raw).not.toContain(clear);
    await expectSigned(await ping(portal, sub.id), clear);
  });

  it('refuses to start with a key-encryption key that does not decrypt the stored secrets, naming the variable only', async () => {
    const wrong = randomBytes(32).toString('hex');
    // External-provider mode has no signing key to catch a wrong key: the webhook secrets must.
    const err = await startTestPortal({
      databaseUrl: portal.databaseUrl,
      env: env({
        SVC_IDENTITY_KEY_ENCRYPTION_KEY: wrong,
        SVC_JWT_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
        SVC_JWT_ISSUER: 'http://idp.test/',
        SVC_JWT_AUDIENCE: 'svc',
        SVC_ADMIN_EMAIL: undefined,
        SVC_ADMIN_PASSWORD: undefined,
      }),
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(
      /^Invalid configuration: SVC_IDENTITY_KEY_ENCRYPTION_KEY does not decrypt the webhook signing secrets/,
    );
    expect((err as ConfigError).message).not.toContain(wrong);
    expect((err as ConfigError).message).not.toContain(kek);
  });
});

describe('the event id of a staged event', () => {
  it('is the same for one event in every process of one installation, and tells nothing of the event', () => {
    const one = new WebhookSecrets(Buffer.from(kek, 'hex'));
    const replica = new WebhookSecrets(Buffer.from(kek, 'hex'));
    const elsewhere = new WebhookSecrets(randomBytes(32));
    const staged = 'audit:42:2026-11-30T17:00:00.000Z';
    expect(one.eventId(staged)).toMatch(/^evt_[0-9a-f]{16}$/);
    expect(replica.eventId(staged)).toBe(one.eventId(staged));
    expect(one.eventId('audit:43:2026-11-30T17:00:00.000Z')).not.toBe(one.eventId(staged));
    expect(elsewhere.eventId(staged)).not.toBe(one.eventId(staged));
  });
});
