import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDb } from '@svc/test-support/factories';
import { http, withToken, type HttpResult } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * Webhook URL safety (docs/api.md#webhooks: localhost and private
 * addresses refused): the rules at creation and update, and at
 * delivery, where a rebinding DNS answer, a stored URL the current configuration no
 * longer allows, or a redirect must never reach a non-public address. Receivers are real
 * HTTPS servers on 127.0.0.1 that count every TCP connection, so "refused" means nothing
 * connected at all.
 */

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';
const BODY_MARKER = `receiver-body-${randomBytes(6).toString('hex')}`;

let ca: TestCa;
const receivers: HttpsReceiver[] = [];
async function receiver(): Promise<HttpsReceiver> {
  const r = await HttpsReceiver.start(ca);
  receivers.push(r);
  return r;
}

function tableResolver(table: Record<string, string[]>) {
  return async (host: string) => {
    const a = table[host];
    if (a === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a;
  };
}

beforeAll(async () => {
  ca = await createTestCa(['receiver.test', 'rebind.example', 'mixed-later.example']);
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await ca?.cleanup();
});

interface Harness {
  portal: TestPortal;
  db: pg.Client;
  admin: string;
  api: (method: string, path: string, json?: unknown) => Promise<HttpResult>;
}

async function harness(env: Record<string, string>, dns: Record<string, string[]>): Promise<Harness> {
  const portal = await startTestPortal({
    env: { SVC_WEBHOOK_CA_FILE: ca.caFile, ...env },
    resolver: tableResolver(dns),
  });
  const db = await openDb(portal);
  const admin = await portal.adminToken();
  return {
    portal,
    db,
    admin,
    api: (method, path, json) => http(portal.url, method, path, { headers: withToken(admin), json }),
  };
}

describe('without SVC_WEBHOOK_ALLOW_CIDRS (the default)', () => {
  const dns: Record<string, string[]> = {
    'public.example': [PUBLIC_V4],
    'public6.example': [PUBLIC_V6, PUBLIC_V4],
    'mixed.example': [PUBLIC_V4, '10.0.0.1'],
    'mixed6.example': [PUBLIC_V6, '::1'],
    'metadata.example': ['169.254.169.254'],
    'mapped.example': ['::ffff:127.0.0.1'],
    // The system resolver's answer for localhost; the portal must not even need it.
    localhost: ['127.0.0.1', '::1'],
  };
  let h: Harness;
  beforeAll(async () => {
    h = await harness({}, dns);
  });
  afterEach(async () => {
    await h.portal.ctx.events.drain();
  });
  afterAll(async () => {
    await h?.db.end();
    await h?.portal.close();
  });

  const count = async () =>
    (await h.db.query('SELECT count(*)::int AS n FROM webhook_subscriptions')).rows[0].n as number;

  it.each([
    // loopback, in every spelling the URL parser normalises
    ['https://127.0.0.1/', 'loopback'],
    ['https://127.1/', 'loopback'],
    ['https://0x7f.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://017700000001/', 'loopback'],
    ['https://127.0.0.1:8443/hook', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://localhost/', 'loopback'],
    ['https://localhost:9000/hook', 'loopback'],
    ['https://LocalHost./', 'loopback'],
    ['https://hooks.localhost/', 'loopback'],
    // private
    ['https://10.0.0.1/', 'private'],
    ['https://10.255.255.254/', 'private'],
    ['https://172.16.0.1/', 'private'],
    ['https://172.31.255.1/', 'private'],
    ['https://192.168.0.10/', 'private'],
    // link-local and metadata
    ['https://169.254.169.254/latest/meta-data/', 'linkLocal'],
    ['https://[fe80::1]/', 'linkLocal'],
    // CGNAT, unspecified, multicast, broadcast
    ['https://100.64.0.1/', 'carrierGradeNat'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    ['https://224.0.0.251/', 'multicast'],
    ['https://[ff02::1]/', 'multicast'],
    ['https://255.255.255.255/', 'broadcast'],
    // documentation ranges
    ['https://192.0.2.1/', 'reserved'],
    ['https://198.51.100.7/', 'reserved'],
    ['https://203.0.113.9/', 'reserved'],
    ['https://[2001:db8::1]/', 'reserved'],
    // IPv4-mapped and IPv4-compatible IPv6, NAT64, unique-local
    ['https://[::ffff:127.0.0.1]/', 'loopback'],
    ['https://[::ffff:7f00:1]/', 'loopback'],
    ['https://[::ffff:169.254.169.254]/', 'linkLocal'],
    ['https://[::127.0.0.1]/', 'reserved'],
    ['https://[64:ff9b::7f00:1]/', 'rfc6052'],
    ['https://[fd00::1]/', 'uniqueLocal'],
    // names resolving to non-public addresses
    ['https://metadata.example/', 'linkLocal'],
    ['https://mapped.example/', 'loopback'],
    ['https://mixed.example/', 'private'],
    ['https://mixed6.example/', 'loopback'],
  ])('POST refuses %s (%s) with 400 and stores nothing', async (url, range) => {
    const before = await count();
    const res = await h.api('POST', '/api/webhooks', { url, event_types: ['scan_completed'] });
    expect(res.status, res.text).toBe(400);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatch(new RegExp(`^url is not allowed: .* is not a public address \\(${range}\\)$`));
    expect(await count()).toBe(before);
  });

  it.each([
    ['https://u:p@example.com/', 'url must not contain credentials'],
    ['https://user@public.example/', 'url must not contain credentials'],
    ['http://public.example/', 'url must use https'],
    ['ftp://public.example/', 'url must use https'],
    ['file:///etc/passwd', 'url must use https'],
    ['gopher://public.example:70/', 'url must use https'],
    ['ws://public.example/', 'url must use https'],
    ['https://does-not-resolve.example/', 'url host does-not-resolve.example does not resolve'],
  ])('POST refuses %s: %s', async (url, message) => {
    const res = await h.api('POST', '/api/webhooks', { url, event_types: ['scan_completed'] });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toEqual({ error: message });
  });

  it.each([
    [`https://${PUBLIC_V4}/`],
    [`https://${PUBLIC_V4}:8443/in?x=1`],
    [`https://[${PUBLIC_V6}]/hook`],
    ['https://public.example/hook'],
    ['https://public6.example/'],
  ])('POST accepts %s (checked, not connected to)', async (url) => {
    const res = await h.api('POST', '/api/webhooks', { url, event_types: ['scan_completed'] });
    expect(res.status, res.text).toBe(201);
    expect(res.body.subscription.url).toBe(new URL(url).toString());
  });

  it('PATCH applies the same rules to a new URL', async () => {
    const sub = (
      await h.api('POST', '/api/webhooks', { url: 'https://public.example/', event_types: ['scan_completed'] })
    ).body.subscription;
    for (const url of [
      'https://127.0.0.1/',
      'https://[::ffff:10.0.0.1]/',
      'https://mixed.example/',
      'https://localhost/',
      'https://169.254.169.254/',
    ]) {
      const res = await h.api('PATCH', `/api/webhooks?id=${sub.id}`, { url });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatch(/^url is not allowed: /);
    }
    expect((await h.db.query('SELECT url FROM webhook_subscriptions WHERE id = $1', [sub.id])).rows[0].url).toBe(
      'https://public.example/',
    );
  });

  it('DNS rebinding: public at creation, 127.0.0.1 at delivery: refused, the receiver sees no connection, the log shows why', async () => {
    const r = await receiver();
    dns['rebind.example'] = [PUBLIC_V4];
    const created = await h.api('POST', '/api/webhooks', {
      url: `https://rebind.example:${r.port}/hook`,
      event_types: ['agent_purged'],
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.subscription.id;

    for (const answer of [['127.0.0.1'], ['::ffff:127.0.0.1'], [PUBLIC_V4, '127.0.0.1'], ['10.1.2.3']]) {
      dns['rebind.example'] = answer;
      const ping = await h.api('POST', `/api/webhooks/ping?id=${id}`);
      expect(ping.status).toBe(200);
      expect(ping.body.delivery.status).toBe('failed');
      expect(ping.body.delivery.attempts).toHaveLength(2);
      for (const a of ping.body.delivery.attempts) {
        expect(a.status_code).toBeNull();
        expect(a.error).toMatch(/^url is not allowed: .* is not a public address \((loopback|private)\)$/);
      }
    }
    dns['rebind.example'] = [];
    const gone = await h.api('POST', `/api/webhooks/ping?id=${id}`);
    expect(gone.body.delivery.attempts.map((a: { error: string }) => a.error)).toEqual([
      'url host rebind.example does not resolve',
      'url host rebind.example does not resolve',
    ]);
    expect(r.connections).toBe(0);
    expect(r.requests).toEqual([]);
  });

  it('DNS rebinding on a real event: the dispatcher refuses too', async () => {
    const r = await receiver();
    dns['rebind.example'] = [PUBLIC_V4];
    const created = await h.api('POST', '/api/webhooks', {
      url: `https://rebind.example:${r.port}/hook`,
      event_types: ['agent_purged', 'agent_deregistered'],
    });
    expect(created.status).toBe(201);
    const id = created.body.subscription.id;
    dns['rebind.example'] = ['127.0.0.1'];
    // A real agent_deregistered event (audited and published by PATCH /api/agents).
    const agentId = `svcd_ssrf_${randomBytes(4).toString('hex')}`;
    const hb = await http(h.portal.url, 'POST', '/api/health', {
      headers: { 'x-api-key': 'legacy-shared-key-for-tests-0123456789' },
      json: {
        agent_id: agentId,
        version: '4.2.3',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 1,
      },
    });
    expect(hb.status, hb.text).toBe(200);
    expect((await h.api('PATCH', '/api/agents', { agent_id: agentId, action: 'deregister' })).status).toBe(200);
    let log: any[] = [];
    await until(async () => {
      log = (await h.api('GET', `/api/webhooks/deliveries?id=${id}`)).body.deliveries;
      return log.some((d: { status: string }) => d.status !== 'pending');
    }, 20_000);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ event_type: 'agent_deregistered', status: 'failed' });
    expect(log[0].attempts.map((a: { error: string }) => a.error)).toEqual([
      'url is not allowed: 127.0.0.1 is not a public address (loopback)',
      'url is not allowed: 127.0.0.1 is not a public address (loopback)',
    ]);
    expect(r.connections).toBe(0);
  });

  it('a stored loopback URL (e.g. created under an earlier SVC_WEBHOOK_ALLOW_CIDRS) is refused at delivery: no connection', async () => {
    const r = await receiver();
    const urls = [r.url(), `https://[::ffff:127.0.0.1]:${r.port}/hook`, `https://localhost:${r.port}/hook`];
    for (const [i, url] of urls.entries()) {
      const id = `whsub_${randomBytes(6).toString('hex')}`;
      await h.db.query(
        `INSERT INTO webhook_subscriptions (id, url, event_types, signing_secret, enabled, description, client_id, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, true, 'planted', null, $5, now(), now())`,
        [id, url, ['agent_purged'], randomBytes(32).toString('hex'), ADMIN_EMAIL],
      );
      const ping = await h.api('POST', `/api/webhooks/ping?id=${id}`);
      expect(ping.status, url).toBe(200);
      expect(ping.body.delivery.status, url).toBe('failed');
      for (const a of ping.body.delivery.attempts)
        expect(a.error, `${i}: ${url}`).toMatch(/^url is not allowed: .*\(loopback\)$/);
    }
    expect(r.connections).toBe(0);
    expect(r.requests).toEqual([]);
  });
});

describe('with SVC_WEBHOOK_ALLOW_CIDRS=127.0.0.0/8 (local test receivers)', () => {
  const dns: Record<string, string[]> = { 'receiver.test': ['127.0.0.1'] };
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' }, dns);
  });
  afterEach(async () => {
    await h.portal.ctx.events.drain();
  });
  afterAll(async () => {
    await h?.db.end();
    await h?.portal.close();
  });

  async function subscribe(url: string) {
    const res = await h.api('POST', '/api/webhooks', { url, event_types: ['agent_purged'] });
    expect(res.status, res.text).toBe(201);
    return res.body.subscription as { id: string };
  }

  it('the allow list opens exactly its range: other private, link-local and ::1 stay refused', async () => {
    expect(
      (await h.api('POST', '/api/webhooks', { url: 'https://127.0.0.1:9/', event_types: ['scan_completed'] })).status,
    ).toBe(201);
    for (const url of [
      'https://10.0.0.1/',
      'https://192.168.1.1/',
      'https://169.254.169.254/',
      'https://[::1]/',
      'https://localhost/',
      'https://100.64.0.1/',
    ]) {
      const res = await h.api('POST', '/api/webhooks', { url, event_types: ['scan_completed'] });
      expect(res.status, url).toBe(400);
    }
  });

  it('a control: the same local receiver is reached when allowed', async () => {
    const r = await receiver();
    const sub = await subscribe(r.url());
    const ping = await h.api('POST', `/api/webhooks/ping?id=${sub.id}`);
    expect(ping.body.delivery).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200, error: null }] });
    expect(r.requests).toHaveLength(1);
  });

  it('rebinding to an address outside the allow list is refused at delivery', async () => {
    const r = await receiver();
    dns['mixed-later.example'] = ['127.0.0.1'];
    const sub = await subscribe(`https://mixed-later.example:${r.port}/hook`);
    dns['mixed-later.example'] = ['127.0.0.1', '10.9.8.7'];
    const ping = await h.api('POST', `/api/webhooks/ping?id=${sub.id}`);
    expect(ping.body.delivery.status).toBe('failed');
    for (const a of ping.body.delivery.attempts)
      expect(a.error).toBe('url is not allowed: 10.9.8.7 is not a public address (private)');
    expect(r.connections).toBe(0);
  });

  it.each([[301], [302], [303], [307], [308]])(
    'a %i redirect is not followed: the target gets nothing, the delivery fails with that status',
    async (status) => {
      const first = await receiver();
      const second = await receiver();
      first.respond({ kind: 'redirect', status, location: second.url('/stolen'), body: BODY_MARKER });
      const sub = await subscribe(first.url());
      const ping = await h.api('POST', `/api/webhooks/ping?id=${sub.id}`);
      expect(ping.status).toBe(200);
      expect(ping.body.delivery).toMatchObject({
        status: 'failed',
        attempts: [
          { attempt: 1, status_code: status, error: `HTTP ${status}` },
          { attempt: 2, status_code: status, error: `HTTP ${status}` },
        ],
      });
      expect(first.requests).toHaveLength(2);
      expect(second.requests).toEqual([]);
      expect(second.connections).toBe(0);
      expect(ping.text).not.toContain(BODY_MARKER);
      expect(ping.text).not.toContain('/stolen');
    },
  );

  it('a redirect to the metadata address is not followed either', async () => {
    const r = await receiver();
    r.respond({ kind: 'redirect', location: 'https://169.254.169.254/latest/meta-data/' });
    const sub = await subscribe(r.url());
    const ping = await h.api('POST', `/api/webhooks/ping?id=${sub.id}`);
    expect(ping.body.delivery.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([302, 302]);
  });

  it("the subscriber's response body never appears in the delivery log, the API answers or the stored rows", async () => {
    const r = await receiver();
    const big = `${BODY_MARKER}${'x'.repeat(1024 * 1024)}`;
    r.queue(
      { kind: 'status', status: 500, body: BODY_MARKER },
      { kind: 'status', status: 400, body: BODY_MARKER, headers: { 'content-type': 'application/json' } },
      { kind: 'status', status: 200, body: big },
      { kind: 'redirect', location: r.url('/again'), body: BODY_MARKER },
      { kind: 'status', status: 201, body: BODY_MARKER },
    );
    const sub = await subscribe(r.url());
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) answers.push((await h.api('POST', `/api/webhooks/ping?id=${sub.id}`)).text);
    expect(r.requests).toHaveLength(5);
    const log = await h.api('GET', `/api/webhooks/deliveries?id=${sub.id}`);
    expect(
      log.body.deliveries.map((d: { attempts: { status_code: number }[] }) => d.attempts.map((a) => a.status_code)),
    ).toEqual([[302, 201], [200], [500, 400]]);
    const redelivered = await h.api('POST', '/api/webhooks/redeliver', { delivery_id: log.body.deliveries[0].id });
    const list = await h.api('GET', '/api/webhooks');
    for (const text of [...answers, log.text, redelivered.text, list.text]) expect(text).not.toContain(BODY_MARKER);
    const rows = await h.db.query('SELECT * FROM webhook_deliveries WHERE subscription_id = $1', [sub.id]);
    expect(rows.rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows.rows)).not.toContain(BODY_MARKER);
    const audit = await h.db.query('SELECT data FROM audit_events');
    expect(JSON.stringify(audit.rows)).not.toContain(BODY_MARKER);
  });
});
