import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  openDb,
  uniqueClientId,
  type LicenseFixture,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type ReceivedRequest, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * /api/webhooks (docs/api.md#webhooks) and outgoing delivery (docs/api.md#webhooks, "Portal webhook
 * events" delivery semantics, Versioning 1) against real local HTTPS receivers. The
 * receivers sit on 127.0.0.1, which the portal reaches only because this file sets
 * SVC_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8; their certificate comes from a CA made at test
 * time and trusted through SVC_WEBHOOK_CA_FILE.
 */

const SUB_KEYS = [
  'client_id',
  'consecutive_failures',
  'created_at',
  'created_by',
  'description',
  'disabled_reason',
  'enabled',
  'event_types',
  'id',
  'updated_at',
  'url',
];
const DELIVERY_KEYS = [
  'attempts',
  'created_at',
  'event_id',
  'event_type',
  'id',
  'redelivery_of',
  'runs',
  'status',
  'subscription_id',
];
const ATTEMPT_KEYS = ['attempt', 'attempted_at', 'duration_ms', 'error', 'status_code'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** What a receiver answers in its body: must never come back through the portal. */
const BODY_MARKER = `receiver-body-${randomBytes(6).toString('hex')}`;

let ca: TestCa;
let portal: TestPortal;
let db: pg.Client;
let admin: string;
/** DNS seen by the portal for webhook URLs. */
const dns: Record<string, string[]> = { 'receiver.test': ['127.0.0.1'] };
const receivers: HttpsReceiver[] = [];
const created: string[] = [];

beforeAll(async () => {
  ca = await createTestCa();
  portal = await startTestPortal({
    env: { SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: ca.caFile, SVC_WEBHOOK_DISABLE_AFTER: '2' },
    resolver: async (host) => {
      const a = dns[host];
      if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return a;
    },
  });
  db = await openDb(portal);
  admin = await portal.adminToken();
});
afterEach(async () => {
  // Deliveries still running belong to the test that started them.
  await portal.ctx.events.drain();
  for (const id of created.splice(0))
    await http(portal.url, 'DELETE', `/api/webhooks?id=${id}`, { headers: withToken(admin) });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await db?.end();
  await portal?.close();
  await ca?.cleanup();
});

async function receiver(): Promise<HttpsReceiver> {
  const r = await HttpsReceiver.start(ca);
  receivers.push(r);
  return r;
}

const api = (method: string, path: string, json?: unknown, token = admin) =>
  http(portal.url, method, path, { headers: withToken(token), json });

async function subscribe(body: Record<string, unknown>, token = admin) {
  const res = await api('POST', '/api/webhooks', body, token);
  expect(res.status, res.text).toBe(201);
  created.push(res.body.subscription.id);
  return res.body.subscription as Record<string, any>;
}

const deliveries = async (id: string, token = admin) => {
  const res = await api('GET', `/api/webhooks/deliveries?id=${id}`, undefined, token);
  expect(res.status, res.text).toBe(200);
  return res.body.deliveries as Record<string, any>[];
};

/** Bounded poll of the delivery log until `n` deliveries are finished (not pending). */
async function finished(id: string, n: number, timeoutMs = 30_000): Promise<Record<string, any>[]> {
  let last: Record<string, any>[] = [];
  await until(
    async () => {
      last = (await deliveries(id)).filter((d) => d.status !== 'pending');
      return last.length >= n;
    },
    timeoutMs,
    () => `${n} finished deliveries of ${id}, have ${last.length}`,
  );
  return last;
}

const subRow = async (id: string) =>
  (await db.query('SELECT * FROM webhook_subscriptions WHERE id = $1', [id])).rows[0] as
    | Record<string, any>
    | undefined;

interface Tenant {
  clientId: string;
  license: LicenseFixture;
  sessionId: string;
}

/** A business client with one uploaded session. */
async function tenant(label = 'wh'): Promise<Tenant> {
  const license = await createLicense(portal, { tier: 'business', client_id: uniqueClientId(label) });
  const sessionId = newSessionId();
  const res = await postUpload(portal.url, license.key, sessionParts(sessionDoc('session-complete.json', sessionId)));
  expect(res.status, res.text).toBe(200);
  return { clientId: license.record.client_id, license, sessionId };
}

const STATUSES = ['new', 'in_review', 'resolved', 'archived'] as const;
const statusOf = new Map<string, number>();
/** PATCH /api/sessions: a real status change (always to another status), so `status_changed` fires. */
async function changeStatus(sessionId: string) {
  const next = ((statusOf.get(sessionId) ?? 0) + 1) % STATUSES.length;
  statusOf.set(sessionId, next);
  const status = STATUSES[next];
  const res = await api('PATCH', `/api/sessions?session=${sessionId}`, { status });
  expect(res.status, res.text).toBe(200);
  expect(res.body.changed).toBe(true);
  return res.body as { previous_status: string; status: string; changed_at: string };
}

/** Check one received request against the headers and both signature schemes. */
async function expectSigned(
  req: ReceivedRequest,
  sub: { signing_secret: string; standard_webhooks_secret: string },
  eventType: string,
) {
  expect(req.method).toBe('POST');
  const h = req.headers;
  expect(h['content-type']).toBe('application/json');
  expect(h['x-svc-event']).toBe(eventType);
  expect(h['x-svc-api-version']).toBe('2');
  expect(h['user-agent']).toMatch(/-webhook\/2\.0$/);
  expect(h['x-svc-delivery']).toBe(req.json.event_id);
  expect(h['webhook-id']).toBe(req.json.event_id);
  expect(h['x-svc-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
  expect(await verify(sub.signing_secret, req.raw.toString('utf8'), h['x-svc-signature-256'] as string)).toBe(true);
  const std = new Webhook(sub.standard_webhooks_secret);
  expect(
    std.verify(req.raw, {
      'webhook-id': h['webhook-id'] as string,
      'webhook-timestamp': h['webhook-timestamp'] as string,
      'webhook-signature': h['webhook-signature'] as string,
    }),
  ).toEqual(req.json);
}

describe('subscriptions CRUD', () => {
  it('POST answers 201 with the subscription, its signing secret (only here) and the whsec_ form; the row is stored', async () => {
    const res = await api('POST', '/api/webhooks', {
      url: 'https://93.184.215.14/hooks/svc?x=1',
      event_types: ['scan_completed', 'status_changed'],
      description: 'SIEM',
    });
    expect(res.status, res.text).toBe(201);
    const sub = res.body.subscription;
    created.push(sub.id);
    expect(Object.keys(res.body)).toEqual(['subscription']);
    expect(Object.keys(sub).sort()).toEqual([...SUB_KEYS, 'signing_secret', 'standard_webhooks_secret'].sort());
    expect(sub).toEqual({
      id: expect.stringMatching(/^whsub_[0-9a-f]{12}$/),
      url: 'https://93.184.215.14/hooks/svc?x=1',
      event_types: ['scan_completed', 'status_changed'],
      enabled: true,
      description: 'SIEM',
      client_id: null,
      created_by: ADMIN_EMAIL,
      created_at: expect.stringMatching(ISO),
      updated_at: sub.created_at,
      consecutive_failures: 0,
      disabled_reason: null,
      signing_secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      standard_webhooks_secret: `whsec_${Buffer.from(sub.signing_secret, 'utf8').toString('base64')}`,
    });
    const row = await subRow(sub.id);
    expect(row).toMatchObject({
      url: sub.url,
      event_types: ['scan_completed', 'status_changed'],
      // Stored encrypted only (tests/webhook-secrets.test.ts).
      signing_secret: null,
      signing_secret_encrypted: expect.stringMatching(/^v1\./),
      enabled: true,
      description: 'SIEM',
      client_id: null,
      created_by: ADMIN_EMAIL,
      consecutive_failures: 0,
      disabled_reason: null,
    });
    expect((row!['created_at'] as Date).toISOString()).toBe(sub.created_at);

    // Defaults: description null, enabled as asked.
    const off = await subscribe({ url: 'https://93.184.215.14/', event_types: ['agent_purged'], enabled: false });
    expect(off).toMatchObject({ enabled: false, description: null, client_id: null });
    // Two subscriptions never share a secret.
    expect(off['signing_secret']).not.toBe(sub.signing_secret);
  });

  it('GET lists subscriptions without any secret', async () => {
    const a = await subscribe({ url: 'https://93.184.215.14/a', event_types: ['session_deleted'] });
    const b = await subscribe({
      url: 'https://93.184.215.14/b',
      event_types: ['report_expiring'],
      client_id: uniqueClientId(),
    });
    const res = await api('GET', '/api/webhooks');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['subscriptions']);
    const listed = res.body.subscriptions.filter((s: { id: string }) => s.id === a['id'] || s.id === b['id']);
    expect(listed).toHaveLength(2);
    for (const s of res.body.subscriptions) expect(Object.keys(s).sort()).toEqual(SUB_KEYS);
    const { signing_secret: _s1, standard_webhooks_secret: _w1, ...aView } = a;
    expect(listed.find((s: { id: string }) => s.id === a['id'])).toEqual(aView);
    for (const secret of [
      a['signing_secret'],
      b['signing_secret'],
      a['standard_webhooks_secret'],
      b['standard_webhooks_secret'],
    ])
      expect(res.text).not.toContain(secret);
  });

  it('PATCH ?id= changes only the fields given; a new URL is checked again (400 for a bad one, nothing changed)', async () => {
    const sub = await subscribe({
      url: 'https://93.184.215.14/one',
      event_types: ['scan_completed'],
      description: 'first',
    });
    const storedSecret = (await subRow(sub['id']))?.['signing_secret_encrypted'];
    expect(storedSecret).toMatch(/^v1\./);
    const res = await api('PATCH', `/api/webhooks?id=${sub['id']}`, { description: 'second' });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(['subscription']);
    expect(Object.keys(res.body.subscription).sort()).toEqual(SUB_KEYS);
    expect(res.body.subscription).toMatchObject({
      id: sub['id'],
      url: 'https://93.184.215.14/one',
      event_types: ['scan_completed'],
      description: 'second',
      enabled: true,
      client_id: null,
    });
    expect(res.text).not.toContain(sub['signing_secret']);

    const moved = await api('PATCH', `/api/webhooks?id=${sub['id']}`, {
      url: 'https://receiver.test/in',
      event_types: ['status_changed', 'session_deleted'],
      enabled: false,
      description: null,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.subscription).toMatchObject({
      url: 'https://receiver.test/in',
      event_types: ['status_changed', 'session_deleted'],
      enabled: false,
      description: null,
    });

    for (const [url, message] of [
      ['http://93.184.215.14/', 'url must use https'],
      ['https://127.0.0.2.nip.invalid/', 'does not resolve'],
      ['https://10.0.0.1/', 'is not a public address (private)'],
      ['https://169.254.169.254/', 'is not a public address (linkLocal)'],
      ['https://u:p@93.184.215.14/', 'url must not contain credentials'],
    ] as const) {
      const bad = await api('PATCH', `/api/webhooks?id=${sub['id']}`, { url, description: 'must not be stored' });
      expect(bad.status, url).toBe(400);
      expect(bad.body.error).toContain(message);
    }
    expect(await subRow(sub['id'])).toMatchObject({
      url: 'https://receiver.test/in',
      description: null,
      enabled: false,
    });

    // The signing secret is not changed by an update (stored encrypted: tests/webhook-secrets.test.ts).
    expect((await subRow(sub['id']))?.['signing_secret_encrypted']).toBe(storedSecret);
  });

  it('PATCH refuses an empty body, an unknown field, bad event types; 404 for an unknown id', async () => {
    const sub = await subscribe({ url: 'https://93.184.215.14/', event_types: ['scan_completed'] });
    for (const body of [{}, { secret: 'x' }, { event_types: [] }, { event_types: ['nope'] }, { enabled: 'yes' }]) {
      const res = await api('PATCH', `/api/webhooks?id=${sub['id']}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
    const missing = await api('PATCH', '/api/webhooks?id=whsub_000000000000', { description: 'x' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'Subscription not found' });
  });

  it('DELETE ?id= removes the subscription and its delivery log; an unknown id is a 404', async () => {
    const r = await receiver();
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'] });
    expect((await api('POST', `/api/webhooks/ping?id=${sub['id']}`)).status).toBe(200);
    expect(
      (await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1', [sub['id']]))
        .rows[0].n,
    ).toBe(1);
    const res = await api('DELETE', `/api/webhooks?id=${sub['id']}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(await subRow(sub['id'])).toBeUndefined();
    expect(
      (await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1', [sub['id']]))
        .rows[0].n,
    ).toBe(0);
    expect((await api('DELETE', `/api/webhooks?id=${sub['id']}`)).status).toBe(404);
    expect((await api('DELETE', '/api/webhooks?id=whsub_ffffffffffff')).body).toEqual({
      error: 'Subscription not found',
    });
    expect((await api('GET', `/api/webhooks/deliveries?id=${sub['id']}`)).status).toBe(404);
  });

  it.each([
    [{ url: 'https://93.184.215.14/', event_types: ['scan_done'] }, /event_types/],
    [{ url: 'https://93.184.215.14/', event_types: ['ping'] }, /event_types/],
    [{ url: 'https://93.184.215.14/', event_types: ['webhook_disabled'] }, /event_types/],
    [{ url: 'https://93.184.215.14/', event_types: [] }, /event_types/],
    [{ url: 'https://93.184.215.14/', event_types: ['scan_completed', 'scan_completed'] }, /event_types/],
    [{ url: 'https://93.184.215.14/' }, /event_types/],
    [{ event_types: ['scan_completed'] }, /url/],
    [{ url: 'http://93.184.215.14/', event_types: ['scan_completed'] }, /^url must use https$/],
    [{ url: 'https://u:p@example.com/', event_types: ['scan_completed'] }, /^url must not contain credentials$/],
    [{ url: 'https://127.0.0.1:1/', event_types: ['scan_completed'], extra: 1 }, /extra/],
    [{ url: 'https://93.184.215.14/', event_types: ['scan_completed'], client_id: 'bad client' }, /client_id/],
  ])('POST %j is a 400', async (body, message) => {
    const res = await api('POST', '/api/webhooks', body);
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(message);
  });

  it('without a token every operation is a 401', async () => {
    const sub = await subscribe({ url: 'https://93.184.215.14/', event_types: ['scan_completed'] });
    for (const [method, path, json] of [
      ['GET', '/api/webhooks', undefined],
      ['POST', '/api/webhooks', { url: 'https://93.184.215.14/', event_types: ['scan_completed'] }],
      ['PATCH', `/api/webhooks?id=${sub['id']}`, { enabled: false }],
      ['DELETE', `/api/webhooks?id=${sub['id']}`, undefined],
      ['GET', `/api/webhooks/deliveries?id=${sub['id']}`, undefined],
      ['POST', `/api/webhooks/ping?id=${sub['id']}`, undefined],
      ['POST', '/api/webhooks/redeliver', { delivery_id: 1 }],
    ] as const) {
      const res = await http(portal.url, method, path, { json });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized' });
      const fake = await http(portal.url, method, path, { json, headers: withToken('not.a.jwt') });
      expect(fake.status).toBe(401);
    }
    expect(await subRow(sub['id'])).toMatchObject({ enabled: true });
  });

  describe('scoped members', () => {
    let mine: string;
    let theirs: string;
    let member: ScopedUser;
    let pro: ScopedUser;

    beforeAll(async () => {
      mine = (await createLicense(portal, { tier: 'business', client_id: uniqueClientId('mine') })).record.client_id;
      theirs = (await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('theirs') })).record.client_id;
      const proClient = (await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('pro') })).record
        .client_id;
      member = await createScopedUser(portal, [mine]);
      pro = await createScopedUser(portal, [proClient]);
    });

    it('a professional-tier member gets 403 Insufficient permissions for webhooks on every operation', async () => {
      for (const [method, path, json] of [
        ['GET', '/api/webhooks', undefined],
        [
          'POST',
          '/api/webhooks',
          { url: 'https://93.184.215.14/', event_types: ['scan_completed'], client_id: pro.clientIds[0] },
        ],
        ['PATCH', '/api/webhooks?id=whsub_000000000000', { enabled: false }],
        ['DELETE', '/api/webhooks?id=whsub_000000000000', undefined],
        ['GET', '/api/webhooks/deliveries?id=whsub_000000000000', undefined],
        ['POST', '/api/webhooks/ping?id=whsub_000000000000', undefined],
        ['POST', '/api/webhooks/redeliver', { delivery_id: 1 }],
      ] as const) {
        const res = await api(method, path, json, pro.token);
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body).toEqual({ error: 'Insufficient permissions for webhooks' });
      }
    });

    it('a business-tier member creates only with a client_id in its scope (none or another: 403)', async () => {
      const none = await api(
        'POST',
        '/api/webhooks',
        { url: 'https://93.184.215.14/', event_types: ['scan_completed'] },
        member.token,
      );
      expect(none.status).toBe(403);
      expect(none.body.error).toMatch(/client_id/);
      const nul = await api(
        'POST',
        '/api/webhooks',
        { url: 'https://93.184.215.14/', event_types: ['scan_completed'], client_id: null },
        member.token,
      );
      expect(nul.status).toBe(403);
      const other = await api(
        'POST',
        '/api/webhooks',
        { url: 'https://93.184.215.14/', event_types: ['scan_completed'], client_id: theirs },
        member.token,
      );
      expect(other.status).toBe(403);
      expect(other.body).toEqual({ error: 'Access to this client is not allowed' });
      expect(
        (await db.query('SELECT count(*)::int AS n FROM webhook_subscriptions WHERE client_id = $1', [theirs])).rows[0]
          .n,
      ).toBe(0);

      const ok = await subscribe(
        { url: 'https://93.184.215.14/', event_types: ['scan_completed'], client_id: mine },
        member.token,
      );
      expect(ok).toMatchObject({ client_id: mine, created_by: member.email });
    });

    it('a refused URL names no resolved address to a member (admins still see it), on POST and PATCH', async () => {
      dns['internal.test'] = ['10.20.30.40'];
      const coarse = { error: 'url is not allowed: its host must resolve to public addresses only' };
      for (const url of [
        'https://internal.test/hook',
        'https://10.20.30.40/',
        'https://unknown-host.test/',
        'https://localhost/',
      ]) {
        const res = await api(
          'POST',
          '/api/webhooks',
          { url, event_types: ['scan_completed'], client_id: mine },
          member.token,
        );
        expect(res.status, url).toBe(400);
        expect(res.body, url).toEqual(coarse);
      }
      const own = await subscribe(
        { url: 'https://93.184.215.14/refused', event_types: ['scan_completed'], client_id: mine },
        member.token,
      );
      const patched = await api(
        'PATCH',
        `/api/webhooks?id=${own['id']}`,
        { url: 'https://internal.test/hook' },
        member.token,
      );
      expect(patched.status).toBe(400);
      expect(patched.body).toEqual(coarse);
      // The admin is told what the host resolved to, or that it does not resolve.
      const admin1 = await api('POST', '/api/webhooks', {
        url: 'https://internal.test/hook',
        event_types: ['scan_completed'],
        client_id: mine,
      });
      expect(admin1.body).toEqual({ error: 'url is not allowed: 10.20.30.40 is not a public address (private)' });
      expect(
        (await api('POST', '/api/webhooks', { url: 'https://unknown-host.test/', event_types: ['scan_completed'] }))
          .body,
      ).toEqual({ error: 'url host unknown-host.test does not resolve' });
      // Syntax errors say nothing of the network and stay precise.
      expect(
        (
          await api(
            'POST',
            '/api/webhooks',
            { url: 'http://93.184.215.14/', event_types: ['scan_completed'], client_id: mine },
            member.token,
          )
        ).body,
      ).toEqual({ error: 'url must use https' });
    });

    it('a member sees coarse delivery errors (HTTP status, connection failed, TLS error); the admin sees the details', async () => {
      dns['wrong-name.test'] = ['127.0.0.1'];
      dns['moves.test'] = ['127.0.0.1'];
      const r = await receiver();
      const ok = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: mine }, member.token);
      // A status, a closed socket, a certificate for other names, an address refused at delivery (rebinding).
      r.queue({ kind: 'status', status: 503 }, { kind: 'status', status: 502 }, { kind: 'close' }, { kind: 'close' });
      const http5xx = await api('POST', `/api/webhooks/ping?id=${ok['id']}`, undefined, member.token);
      expect(http5xx.body.delivery.attempts.map((a: any) => [a.status_code, a.error])).toEqual([
        [503, 'HTTP 503'],
        [502, 'HTTP 502'],
      ]);
      const closed = await api('POST', `/api/webhooks/ping?id=${ok['id']}`, undefined, member.token);
      expect(closed.body.delivery.attempts.map((a: any) => a.error)).toEqual([
        'connection failed',
        'connection failed',
      ]);
      const tls = await subscribe(
        { url: r.url().replace('127.0.0.1', 'wrong-name.test'), event_types: ['status_changed'], client_id: mine },
        member.token,
      );
      const tlsPing = await api('POST', `/api/webhooks/ping?id=${tls['id']}`, undefined, member.token);
      expect(tlsPing.body.delivery.attempts.map((a: any) => a.error)).toEqual(['TLS error', 'TLS error']);
      const moving = await subscribe(
        { url: r.url().replace('127.0.0.1', 'moves.test'), event_types: ['status_changed'], client_id: mine },
        member.token,
      );
      dns['moves.test'] = ['10.20.30.41'];
      const rebound = await api('POST', `/api/webhooks/ping?id=${moving['id']}`, undefined, member.token);
      expect(rebound.body.delivery.attempts.map((a: any) => a.error)).toEqual([
        'connection failed',
        'connection failed',
      ]);
      // The same in the log and in a redelivery's answer; no address, code or certificate name anywhere.
      const logged = await deliveries(tls['id'], member.token);
      expect(logged[0]!['attempts'].map((a: any) => a.error)).toEqual(['TLS error', 'TLS error']);
      const redone = await api(
        'POST',
        '/api/webhooks/redeliver',
        { delivery_id: rebound.body.delivery.id },
        member.token,
      );
      expect(redone.status, redone.text).toBe(200);
      expect(redone.body.delivery.attempts.map((a: any) => a.error)).toEqual([
        'connection failed',
        'connection failed',
      ]);
      const seen = JSON.stringify([
        http5xx.body,
        closed.body,
        tlsPing.body,
        rebound.body,
        redone.body,
        await deliveries(moving['id'], member.token),
      ]);
      expect(seen).not.toMatch(/10\.20\.30\.41|wrong-name|ERR_|UND_|ECONN|altname|not a public address/i);
      // No timing either: how long an attempt took would tell an open port from a closed one.
      const memberAttempts = [http5xx.body, closed.body, tlsPing.body, rebound.body, redone.body]
        .flatMap((b) => b.delivery.attempts)
        .concat((await deliveries(moving['id'], member.token)).flatMap((d) => d['attempts']));
      expect(memberAttempts.length).toBeGreaterThanOrEqual(12);
      expect(memberAttempts.map((a: any) => a.duration_ms)).toEqual(memberAttempts.map(() => null));
      // The admin sees what happened.
      const adminView = await deliveries(moving['id']);
      expect(adminView[0]!['attempts'][0].error).toBe(
        'url is not allowed: 10.20.30.41 is not a public address (private)',
      );
      expect((await deliveries(tls['id']))[0]!['attempts'][0].error).toMatch(/^ERR_TLS_CERT_ALTNAME_INVALID: /);
      expect(typeof adminView[0]!['attempts'][0].duration_ms).toBe('number');
    });

    it(`a client has at most SVC_WEBHOOK_MAX_PER_CLIENT (default 25) subscriptions (409), also under concurrent creation; a move into a full client is refused too`, async () => {
      const full = (await createLicense(portal, { tier: 'business', client_id: uniqueClientId('cap') })).record
        .client_id;
      const user = await createScopedUser(portal, [full, mine]);
      const url = (i: number) => `https://93.184.215.14/cap/${i}`;
      for (let i = 0; i < 20; i++)
        await subscribe({ url: url(i), event_types: ['scan_completed'], client_id: full }, user.token);
      // 10 at once for the last 5 places: exactly 5 get one.
      const racing = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          api(
            'POST',
            '/api/webhooks',
            { url: url(20 + i), event_types: ['scan_completed'], client_id: full },
            user.token,
          ),
        ),
      );
      for (const res of racing) if (res.status === 201) created.push(res.body.subscription.id);
      expect(racing.map((r) => r.status).sort()).toEqual([...Array(5).fill(201), ...Array(5).fill(409)]);
      for (const res of racing.filter((r) => r.status === 409))
        expect(res.body).toEqual({ error: 'This client already has 25 webhook subscriptions, the most allowed' });
      expect(
        (await db.query('SELECT count(*)::int AS n FROM webhook_subscriptions WHERE client_id = $1', [full])).rows[0].n,
      ).toBe(25);
      // The admin is held to it as well; another client is not affected.
      expect(
        (await api('POST', '/api/webhooks', { url: url(99), event_types: ['scan_completed'], client_id: full })).status,
      ).toBe(409);
      const elsewhere = await subscribe({ url: url(99), event_types: ['scan_completed'], client_id: mine }, user.token);
      const moved = await api('PATCH', `/api/webhooks?id=${elsewhere['id']}`, { client_id: full }, user.token);
      expect(moved.status).toBe(409);
      expect(moved.body).toEqual({ error: 'This client already has 25 webhook subscriptions, the most allowed' });
      expect((await subRow(elsewhere['id']))?.['client_id']).toBe(mine);
      // Changing anything else of a subscription of the full client is fine; deleting one frees a place.
      const one = racing.find((r) => r.status === 201)!.body.subscription.id as string;
      expect(
        (
          await api(
            'PATCH',
            `/api/webhooks?id=${one}`,
            { description: 'still here', url: `${url(20)}-renamed` },
            user.token,
          )
        ).status,
      ).toBe(200);
      expect((await api('DELETE', `/api/webhooks?id=${one}`, undefined, user.token)).status).toBe(200);
      expect((await api('PATCH', `/api/webhooks?id=${elsewhere['id']}`, { client_id: full }, user.token)).status).toBe(
        200,
      );
    });

    it('the same URL twice for one client is refused with 409, compared after normalisation; other clients may use it', async () => {
      const first = await subscribe(
        { url: 'https://93.184.215.14/dup', event_types: ['scan_completed'], client_id: mine },
        member.token,
      );
      for (const url of [
        'https://93.184.215.14/dup',
        'HTTPS://93.184.215.14:443/dup',
        'https://93.184.215.14/dup#fragment',
      ]) {
        const res = await api(
          'POST',
          '/api/webhooks',
          { url, event_types: ['status_changed'], client_id: mine },
          member.token,
        );
        expect(res.status, url).toBe(409);
        expect(res.body).toEqual({ error: 'A subscription with this URL already exists for this client' });
      }
      expect(
        (
          await db.query('SELECT count(*)::int AS n FROM webhook_subscriptions WHERE client_id = $1 AND url = $2', [
            mine,
            'https://93.184.215.14/dup',
          ])
        ).rows[0].n,
      ).toBe(1);
      // Another client, and the admin's client-less subscriptions, are other scopes.
      await subscribe({ url: 'https://93.184.215.14/dup', event_types: ['scan_completed'], client_id: theirs });
      await subscribe({ url: 'https://93.184.215.14/dup', event_types: ['scan_completed'] });
      // PATCH onto an existing URL is refused; onto its own URL is not.
      const second = await subscribe(
        { url: 'https://93.184.215.14/dup2', event_types: ['scan_completed'], client_id: mine },
        member.token,
      );
      const clash = await api(
        'PATCH',
        `/api/webhooks?id=${second['id']}`,
        { url: 'https://93.184.215.14/dup' },
        member.token,
      );
      expect(clash.status).toBe(409);
      expect((await subRow(second['id']))?.['url']).toBe('https://93.184.215.14/dup2');
      expect(
        (
          await api(
            'PATCH',
            `/api/webhooks?id=${first['id']}`,
            { url: 'https://93.184.215.14/dup', description: 'same' },
            member.token,
          )
        ).status,
      ).toBe(200);
      // Moving a subscription (admin) to a client that has its URL is refused as well.
      const moved = await api('PATCH', `/api/webhooks?id=${first['id']}`, { client_id: theirs });
      expect(moved.status).toBe(409);
      expect(moved.body).toEqual({ error: 'A subscription with this URL already exists for this client' });
    });

    it('sees and manages only its own subscriptions; others are 404, moving one out of scope is 403', async () => {
      const own = await subscribe(
        { url: 'https://93.184.215.14/own', event_types: ['scan_completed'], client_id: mine },
        member.token,
      );
      const foreign = await subscribe({
        url: 'https://93.184.215.14/foreign',
        event_types: ['scan_completed'],
        client_id: theirs,
      });
      const global = await subscribe({ url: 'https://93.184.215.14/global', event_types: ['scan_completed'] });

      const list = await api('GET', '/api/webhooks', undefined, member.token);
      expect(list.status).toBe(200);
      expect(list.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([own['id']]);
      // The admin sees all three.
      const all = (await api('GET', '/api/webhooks')).body.subscriptions.map((s: { id: string }) => s.id);
      expect(all).toEqual(expect.arrayContaining([own['id'], foreign['id'], global['id']]));

      for (const id of [foreign['id'], global['id']]) {
        expect((await api('PATCH', `/api/webhooks?id=${id}`, { enabled: false }, member.token)).status).toBe(404);
        expect((await api('DELETE', `/api/webhooks?id=${id}`, undefined, member.token)).status).toBe(404);
        expect((await api('GET', `/api/webhooks/deliveries?id=${id}`, undefined, member.token)).status).toBe(404);
        expect((await api('POST', `/api/webhooks/ping?id=${id}`, undefined, member.token)).status).toBe(404);
        expect(await subRow(id)).toMatchObject({ enabled: true });
      }
      expect((await api('PATCH', `/api/webhooks?id=${own['id']}`, { client_id: theirs }, member.token)).status).toBe(
        403,
      );
      expect((await api('PATCH', `/api/webhooks?id=${own['id']}`, { client_id: null }, member.token)).status).toBe(403);
      expect((await subRow(own['id']))?.['client_id']).toBe(mine);

      const patched = await api('PATCH', `/api/webhooks?id=${own['id']}`, { description: 'mine' }, member.token);
      expect(patched.status).toBe(200);
      expect(patched.body.subscription.description).toBe('mine');
      expect((await api('DELETE', `/api/webhooks?id=${own['id']}`, undefined, member.token)).status).toBe(200);
      expect(await subRow(own['id'])).toBeUndefined();
    });
  });
});

describe('delivery', () => {
  it('sends the exact envelope, X-SVC headers and both signatures; the body is what the log stored; the log shows one 200 attempt', async () => {
    const r = await receiver();
    const t = await tenant();
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: t.clientId });
    const change = await changeStatus(t.sessionId);
    const [req] = await r.waitFor(1);
    const got = req!;
    await expectSigned(got, sub as never, 'status_changed');
    expect(got.path).toBe('/hook');
    expect(Object.keys(got.json)).toEqual(['api_version', 'event_type', 'event_id', 'timestamp', 'data']);
    expect(got.json).toEqual({
      api_version: '2',
      event_type: 'status_changed',
      event_id: expect.stringMatching(/^evt_[0-9a-f]{16}$/),
      timestamp: expect.stringMatching(ISO),
      data: {
        session_id: t.sessionId,
        client: 'Acme Water District',
        client_id: t.clientId,
        target: '10.20.0.0/24',
        previous_status: change.previous_status,
        new_status: change.status,
        changed_by: ADMIN_EMAIL,
        changed_at: change.changed_at,
      },
    });
    expect(Number(got.headers['content-length'])).toBe(got.raw.length);

    const [d] = await finished(sub['id'], 1);
    expect(Object.keys(d!).sort()).toEqual(DELIVERY_KEYS);
    expect(d).toEqual({
      id: expect.any(Number),
      subscription_id: sub['id'],
      event_id: got.json.event_id,
      event_type: 'status_changed',
      status: 'succeeded',
      redelivery_of: null,
      created_at: expect.stringMatching(ISO),
      runs: 1,
      attempts: [
        {
          attempt: 1,
          status_code: 200,
          duration_ms: expect.any(Number),
          error: null,
          attempted_at: expect.stringMatching(ISO),
        },
      ],
    });
    expect(Object.keys(d!['attempts'][0]).sort()).toEqual(ATTEMPT_KEYS);
    const stored = (await db.query('SELECT body FROM webhook_deliveries WHERE id = $1', [d!['id']])).rows[0]
      .body as string;
    expect(Buffer.from(stored, 'utf8').equals(got.raw)).toBe(true);
    // The webhook-timestamp is the send time, in seconds.
    expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
  });

  it('connects to the address the resolver answered for a host name, and verifies the certificate for that name', async () => {
    const r = await receiver();
    const t = await tenant();
    const sub = await subscribe({
      url: `https://receiver.test:${r.port}/named`,
      event_types: ['status_changed'],
      client_id: t.clientId,
    });
    expect(sub['url']).toBe(`https://receiver.test:${r.port}/named`);
    await changeStatus(t.sessionId);
    const [req] = await r.waitFor(1);
    expect(req!.path).toBe('/named');
    await expectSigned(req!, sub as never, 'status_changed');
    expect((await finished(sub['id'], 1))[0]).toMatchObject({ status: 'succeeded' });
  });

  it('an untrusted certificate fails the delivery (the private CA is trusted only through SVC_WEBHOOK_CA_FILE)', async () => {
    const other = await createTestCa();
    const r = await HttpsReceiver.start(other);
    receivers.push(r);
    try {
      const sub = await subscribe({ url: r.url(), event_types: ['status_changed'] });
      const ping = await api('POST', `/api/webhooks/ping?id=${sub['id']}`);
      expect(ping.status).toBe(200);
      expect(ping.body.delivery.status).toBe('failed');
      expect(ping.body.delivery.attempts).toHaveLength(2);
      for (const a of ping.body.delivery.attempts) {
        expect(a.status_code).toBeNull();
        expect(a.error).toMatch(/certificate|self.signed|verify/i);
      }
      expect(r.requests).toHaveLength(0);
    } finally {
      await other.cleanup();
    }
  });

  it('only enabled subscriptions listening to the event, with a matching or no client_id, receive it', async () => {
    const t = await tenant('match');
    const u = await tenant('other');
    const [forT, forNone, forU, wrongType, disabled] = await Promise.all([
      receiver(),
      receiver(),
      receiver(),
      receiver(),
      receiver(),
    ]);
    const sT = await subscribe({
      url: forT!.url(),
      event_types: ['scan_completed', 'status_changed'],
      client_id: t.clientId,
    });
    const sNone = await subscribe({ url: forNone!.url(), event_types: ['status_changed'] });
    const sU = await subscribe({ url: forU!.url(), event_types: ['status_changed'], client_id: u.clientId });
    const sWrong = await subscribe({
      url: wrongType!.url(),
      event_types: ['session_deleted', 'scan_completed'],
      client_id: t.clientId,
    });
    const sOff = await subscribe({
      url: disabled!.url(),
      event_types: ['status_changed'],
      client_id: t.clientId,
      enabled: false,
    });

    await changeStatus(t.sessionId);
    await forT!.waitFor(1);
    await forNone!.waitFor(1);
    await portal.ctx.events.drain();
    expect(forT!.requests[0]!.json.event_id).toBe(forNone!.requests[0]!.json.event_id);
    expect(forT!.requests[0]!.json.data.session_id).toBe(t.sessionId);
    for (const r of [forU!, wrongType!, disabled!]) {
      expect(r.requests).toHaveLength(0);
      expect(r.connections).toBe(0);
    }
    for (const s of [sU, sWrong, sOff]) expect(await deliveries(s['id'])).toEqual([]);
    // Each subscriber signs with its own secret.
    await expectSigned(forT!.requests[0]!, sT as never, 'status_changed');
    await expectSigned(forNone!.requests[0]!, sNone as never, 'status_changed');
    expect(
      await verify(
        sT['signing_secret'],
        forNone!.requests[0]!.body,
        forNone!.requests[0]!.headers['x-svc-signature-256'] as string,
      ),
    ).toBe(false);

    // The other client's change reaches its own subscriber and the global one only.
    await changeStatus(u.sessionId);
    await forU!.waitFor(1);
    await forNone!.waitFor(2);
    await portal.ctx.events.drain();
    expect(forT!.requests).toHaveLength(1);
    expect(forU!.requests[0]!.json.data.client_id).toBe(u.clientId);
  });

  it('delivers subscribers in parallel: a held receiver does not delay the other one', async () => {
    const t = await tenant('par');
    const [slow, fast] = [await receiver(), await receiver()];
    slow.respond({ kind: 'hold' });
    fast.respond({ kind: 'hold' });
    const sSlow = await subscribe({ url: slow.url(), event_types: ['status_changed'], client_id: t.clientId });
    const sFast = await subscribe({ url: fast.url(), event_types: ['status_changed'], client_id: t.clientId });
    await changeStatus(t.sessionId);
    // Both requests arrive while neither has been answered: they were sent side by side.
    await slow.waitFor(1);
    await fast.waitFor(1);
    expect(slow.held).toBe(1);
    expect(fast.held).toBe(1);
    // Answer one; its delivery completes while the other is still held open.
    fast.release();
    const [done] = await finished(sFast['id'], 1);
    expect(done).toMatchObject({ status: 'succeeded', attempts: [{ attempt: 1, status_code: 200, error: null }] });
    expect(slow.held).toBe(1);
    expect((await deliveries(sSlow['id'])).map((d) => d.status)).toEqual(['pending']);
    slow.release();
    expect((await finished(sSlow['id'], 1))[0]).toMatchObject({ status: 'succeeded' });
    expect(slow.requests[0]!.json.event_id).toBe(fast.requests[0]!.json.event_id);
  });

  it('retries once after a 500: two attempts with the same body and event id, the second succeeds; the answer body is never logged', async () => {
    const t = await tenant('retry');
    const r = await receiver();
    r.queue({ kind: 'status', status: 500, body: BODY_MARKER });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: t.clientId });
    await changeStatus(t.sessionId);
    const [first, second] = await r.waitFor(2);
    expect(second!.raw.equals(first!.raw)).toBe(true);
    expect(second!.headers['x-svc-delivery']).toBe(first!.headers['x-svc-delivery']);
    await expectSigned(second!, sub as never, 'status_changed');
    const [d] = await finished(sub['id'], 1);
    expect(d).toMatchObject({
      status: 'succeeded',
      attempts: [
        { attempt: 1, status_code: 500, error: 'HTTP 500' },
        { attempt: 2, status_code: 200, error: null },
      ],
    });
    expect(await r.waitFor(2)).toHaveLength(2);
    expect((await subRow(sub['id']))?.['consecutive_failures']).toBe(0);
    const log = await api('GET', `/api/webhooks/deliveries?id=${sub['id']}`);
    expect(log.text).not.toContain(BODY_MARKER);
    const rows = await db.query('SELECT attempts FROM webhook_deliveries WHERE subscription_id = $1', [sub['id']]);
    expect(rows.rows[0].attempts).toHaveLength(2);
    expect(JSON.stringify(rows.rows)).not.toContain(BODY_MARKER);
  });

  it('a black-holed receiver: the triggering requests are answered while the delivery hangs; timeout, one retry, failed delivery logged', async () => {
    const t = await tenant('hole');
    const r = await receiver();
    r.respond({ kind: 'hang' });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: t.clientId });
    await changeStatus(t.sessionId);
    await r.waitFor(1);
    // The receiver holds the request; the portal keeps answering, also the tenant's uploads.
    expect(r.pending).toBe(1);
    const upload = await postUpload(portal.url, t.license.key, sessionParts(sessionDoc('session-minimal.json')));
    expect(upload.status).toBe(200);
    const again = await changeStatus(t.sessionId);
    expect(again.status).toBeDefined();
    expect((await deliveries(sub['id'])).every((d) => d.status === 'pending')).toBe(true);

    const done = await finished(sub['id'], 2, 40_000);
    for (const d of done) {
      expect(d).toMatchObject({
        status: 'failed',
        attempts: [
          { attempt: 1, status_code: null, error: 'timeout after 5 s' },
          { attempt: 2, status_code: null, error: 'timeout after 5 s' },
        ],
      });
    }
    expect(r.requests).toHaveLength(4);
    // Two failed deliveries in a row reached SVC_WEBHOOK_DISABLE_AFTER=2 in this file.
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 2, enabled: false });
  });

  it('a receiver that closes the socket: both attempts fail with a connection error and no status', async () => {
    const r = await receiver();
    r.respond({ kind: 'close' });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'] });
    const ping = await api('POST', `/api/webhooks/ping?id=${sub['id']}`);
    expect(ping.status).toBe(200);
    expect(ping.body.delivery).toMatchObject({
      status: 'failed',
      attempts: [
        { attempt: 1, status_code: null },
        { attempt: 2, status_code: null },
      ],
    });
    for (const a of ping.body.delivery.attempts) expect(a.error).toMatch(/^UND_ERR_SOCKET|ECONNRESET|socket|closed/i);
    expect(r.requests).toHaveLength(2);
  });

  it('the delivery log lists deliveries newest first with every attempt, honours limit, and is 404 for an unknown subscription', async () => {
    const r = await receiver();
    r.queue({ kind: 'status', status: 503, body: BODY_MARKER }, { kind: 'status', status: 204 });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'] });
    const first = (await api('POST', `/api/webhooks/ping?id=${sub['id']}`)).body.delivery;
    const second = (await api('POST', `/api/webhooks/ping?id=${sub['id']}`)).body.delivery;
    expect(first).toMatchObject({
      status: 'succeeded',
      attempts: [
        { attempt: 1, status_code: 503, error: 'HTTP 503' },
        { attempt: 2, status_code: 204, error: null },
      ],
    });
    const log = await deliveries(sub['id']);
    expect(log.map((d) => d.id)).toEqual([second.id, first.id]);
    expect(log[1]).toEqual(first);
    for (const d of log) {
      expect(Object.keys(d).sort()).toEqual(DELIVERY_KEYS);
      for (const a of d['attempts']) {
        expect(Object.keys(a).sort()).toEqual(ATTEMPT_KEYS);
        expect(Number.isInteger(a.duration_ms) && a.duration_ms >= 0).toBe(true);
      }
    }
    const limited = await api('GET', `/api/webhooks/deliveries?id=${sub['id']}&limit=1`);
    expect(limited.body.deliveries.map((d: { id: number }) => d.id)).toEqual([second.id]);
    expect((await api('GET', `/api/webhooks/deliveries?id=${sub['id']}&limit=0`)).status).toBe(400);
    expect((await api('GET', '/api/webhooks/deliveries?id=whsub_000000000000')).status).toBe(404);
    expect((await api('GET', '/api/webhooks/deliveries')).status).toBe(400);
    expect(JSON.stringify(log)).not.toContain(BODY_MARKER);
  });

  it('POST /api/webhooks/redeliver resends the same body and event id, signed afresh, logged as a redelivery', async () => {
    const t = await tenant('redeliver');
    const r = await receiver();
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: t.clientId });
    await changeStatus(t.sessionId);
    const [original] = await r.waitFor(1);
    const [logged] = await finished(sub['id'], 1);
    const res = await api('POST', '/api/webhooks/redeliver', { delivery_id: logged!['id'] });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(['delivery']);
    expect(res.body.delivery).toEqual({
      id: expect.any(Number),
      subscription_id: sub['id'],
      event_id: original!.json.event_id,
      event_type: 'status_changed',
      status: 'succeeded',
      redelivery_of: logged!['id'],
      created_at: expect.stringMatching(ISO),
      runs: 1,
      attempts: [
        {
          attempt: 1,
          status_code: 200,
          duration_ms: expect.any(Number),
          error: null,
          attempted_at: expect.stringMatching(ISO),
        },
      ],
    });
    expect(res.body.delivery.id).not.toBe(logged!['id']);
    const [, again] = await r.waitFor(2);
    expect(again!.raw.equals(original!.raw)).toBe(true);
    expect(again!.headers['x-svc-delivery']).toBe(original!.json.event_id);
    await expectSigned(again!, sub as never, 'status_changed');
    expect((await deliveries(sub['id'])).map((d) => d['id'])).toEqual([res.body.delivery.id, logged!['id']]);
  });

  it("redeliver: unknown or impossible delivery ids are 404, bad bodies 400, another tenant's delivery 404", async () => {
    for (const id of [999_999_999, Number.MAX_SAFE_INTEGER, 2 ** 63, 1e20]) {
      const res = await api('POST', '/api/webhooks/redeliver', { delivery_id: id });
      expect(res.status, String(id)).toBe(404);
      expect(res.body).toEqual({ error: 'Delivery not found' });
    }
    for (const body of [
      {},
      { delivery_id: 0 },
      { delivery_id: 'x' },
      { delivery_id: 1.5 },
      { delivery_id: 1, extra: true },
    ]) {
      expect((await api('POST', '/api/webhooks/redeliver', body)).status, JSON.stringify(body)).toBe(400);
    }
    const mine = (await createLicense(portal, { tier: 'business', client_id: uniqueClientId('rd') })).record.client_id;
    const member = await createScopedUser(portal, [mine]);
    const r = await receiver();
    const foreign = await subscribe({ url: r.url(), event_types: ['status_changed'] });
    const ping = (await api('POST', `/api/webhooks/ping?id=${foreign['id']}`)).body.delivery;
    const res = await api('POST', '/api/webhooks/redeliver', { delivery_id: ping.id }, member.token);
    expect(res.status).toBe(404);
    expect(r.requests).toHaveLength(1);
  });

  it("after an admin moves a subscription from client A to B, B cannot list or redeliver A's past deliveries (404 like a missing one); the admin sees them but cannot redeliver them to B (409)", async () => {
    const a = await tenant('rescope-a');
    const b = (await createLicense(portal, { tier: 'business', client_id: uniqueClientId('rescope-b') })).record
      .client_id;
    const userB = await createScopedUser(portal, [b]);
    const r = await receiver();
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: a.clientId });
    await changeStatus(a.sessionId);
    const [event] = await finished(sub['id'], 1);
    const ping = await api('POST', `/api/webhooks/ping?id=${sub['id']}`);
    expect(ping.status, ping.text).toBe(200);
    expect(
      (
        await db.query('SELECT id::int, client_id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY id', [
          sub['id'],
        ])
      ).rows,
    ).toEqual([
      { id: event!['id'], client_id: a.clientId },
      { id: ping.body.delivery.id, client_id: a.clientId },
    ]);

    const moved = await api('PATCH', `/api/webhooks?id=${sub['id']}`, { client_id: b });
    expect(moved.status, moved.text).toBe(200);
    expect(r.requests).toHaveLength(2);

    // B manages the subscription now, but A's deliveries are not B's to read or resend.
    expect(await deliveries(sub['id'], userB.token)).toEqual([]);
    for (const id of [event!['id'], ping.body.delivery.id]) {
      const res = await api('POST', '/api/webhooks/redeliver', { delivery_id: id }, userB.token);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Delivery not found' });
    }
    // The admin still sees them, and cannot send A's event to what is now B's receiver either.
    expect((await deliveries(sub['id'])).map((d) => d['id'])).toEqual([ping.body.delivery.id, event!['id']]);
    const refused = await api('POST', '/api/webhooks/redeliver', { delivery_id: event!['id'] });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({
      error: 'This delivery belongs to another client than its subscription has now; it cannot be redelivered',
    });
    expect(r.requests).toHaveLength(2);

    // What is delivered under B is B's: listed, and redelivered, for B's user.
    const pingB = await api('POST', `/api/webhooks/ping?id=${sub['id']}`, undefined, userB.token);
    expect(pingB.status, pingB.text).toBe(200);
    expect((await deliveries(sub['id'], userB.token)).map((d) => d['id'])).toEqual([pingB.body.delivery.id]);
    const again = await api('POST', '/api/webhooks/redeliver', { delivery_id: pingB.body.delivery.id }, userB.token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.delivery).toMatchObject({ redelivery_of: pingB.body.delivery.id, status: 'succeeded' });
    expect(
      (await db.query('SELECT client_id FROM webhook_deliveries WHERE id = $1', [again.body.delivery.id])).rows,
    ).toEqual([{ client_id: b }]);
    expect(r.requests).toHaveLength(4);
  });

  it('POST /api/webhooks/ping?id= sends a signed ping now and answers its logged outcome', async () => {
    const r = await receiver();
    const sub = await subscribe({ url: r.url(), event_types: ['agent_purged'], enabled: false });
    const res = await api('POST', `/api/webhooks/ping?id=${sub['id']}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.delivery).toMatchObject({
      subscription_id: sub['id'],
      event_type: 'ping',
      status: 'succeeded',
      redelivery_of: null,
      attempts: [{ attempt: 1, status_code: 200, error: null }],
    });
    const [req] = await r.waitFor(1);
    await expectSigned(req!, sub as never, 'ping');
    expect(req!.json).toEqual({
      api_version: '2',
      event_type: 'ping',
      event_id: res.body.delivery.event_id,
      timestamp: expect.stringMatching(ISO),
      data: { subscription_id: sub['id'], requested_by: ADMIN_EMAIL, message: expect.any(String) },
    });
    expect((await api('POST', '/api/webhooks/ping?id=whsub_000000000000')).status).toBe(404);
    expect((await api('POST', '/api/webhooks/ping')).status).toBe(400);
  });

  it('auto-disable after SVC_WEBHOOK_DISABLE_AFTER (2) failed deliveries in a row, audited as webhook_disabled; PATCH enabled:true re-enables and clears the count', async () => {
    const t = await tenant('disable');
    const r = await receiver();
    r.respond({ kind: 'status', status: 500, body: BODY_MARKER });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'], client_id: t.clientId });

    // A success in between resets the count.
    await changeStatus(t.sessionId);
    await finished(sub['id'], 1);
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 1, enabled: true });
    r.respond({ kind: 'status', status: 200 });
    await changeStatus(t.sessionId);
    await finished(sub['id'], 2);
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 0, enabled: true });

    r.respond({ kind: 'status', status: 500, body: BODY_MARKER });
    await changeStatus(t.sessionId);
    await finished(sub['id'], 3);
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 1, enabled: true, disabled_reason: null });
    await changeStatus(t.sessionId);
    await finished(sub['id'], 4);
    const reason = 'Disabled after 2 consecutive failed deliveries';
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 2, enabled: false, disabled_reason: reason });
    const view = (await api('GET', '/api/webhooks')).body.subscriptions.find((s: { id: string }) => s.id === sub['id']);
    expect(view).toMatchObject({ enabled: false, consecutive_failures: 2, disabled_reason: reason });

    const audit = (
      await db.query(
        "SELECT * FROM audit_events WHERE event_type = 'webhook_disabled' AND data->>'subscription_id' = $1",
        [sub['id']],
      )
    ).rows;
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'system',
      client_id: t.clientId,
      data: { subscription_id: sub['id'], url: sub['url'], reason },
    });
    expect(JSON.stringify(audit[0].data)).not.toContain(sub['signing_secret']);
    const listed = await api('GET', '/api/audit?type=webhook_disabled');
    expect(listed.status).toBe(200);
    expect(listed.body.events.map((e: { data: { subscription_id: string } }) => e.data.subscription_id)).toContain(
      sub['id'],
    );

    // Disabled: later events are not delivered.
    const before = r.requests.length;
    await changeStatus(t.sessionId);
    await portal.ctx.events.drain();
    expect(r.requests).toHaveLength(before);
    expect(await deliveries(sub['id'])).toHaveLength(4);

    const res = await api('PATCH', `/api/webhooks?id=${sub['id']}`, { enabled: true });
    expect(res.status).toBe(200);
    expect(res.body.subscription).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    expect(await subRow(sub['id'])).toMatchObject({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    r.respond({ kind: 'status', status: 200 });
    await changeStatus(t.sessionId);
    const log = await finished(sub['id'], 5);
    expect(log[0]).toMatchObject({ status: 'succeeded' });
  });

  it('PATCH enabled:true on an enabled subscription also clears a failure count', async () => {
    const r = await receiver();
    r.respond({ kind: 'status', status: 500 });
    const sub = await subscribe({ url: r.url(), event_types: ['status_changed'] });
    expect((await api('POST', `/api/webhooks/ping?id=${sub['id']}`)).body.delivery.status).toBe('failed');
    expect(await subRow(sub['id'])).toMatchObject({ consecutive_failures: 1, enabled: true });
    const res = await api('PATCH', `/api/webhooks?id=${sub['id']}`, { enabled: true });
    expect(res.body.subscription).toMatchObject({ enabled: true, consecutive_failures: 0 });
  });
});
