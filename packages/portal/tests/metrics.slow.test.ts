import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, heartbeatBody, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { multipart, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { AREA_FAMILIES, histogramCount, sampleValue, scrape, type Scrape } from '@svc/test-support/metrics-scrape';

/**
 * GET /metrics of a real portal, scraped over HTTP and read with a Prometheus text parser:
 * real traffic moves the numbers; the token, the separate listen address, and the 404 when off.
 */

const TOKEN = 'metrics-token-0123456789abcdef0123456789abcdef';
const UNAUTHORIZED = { error: 'Unauthorized' };

let ca: TestCa;
let receiver: HttpsReceiver;
let portal: TestPortal;
let admin: string;
let business: LicenseFixture;
const logLines: string[] = [];

beforeAll(async () => {
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
  portal = await startTestPortal({
    env: {
      SVC_METRICS_TOKEN: TOKEN,
      SVC_METRICS_LISTEN: '127.0.0.1:0',
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: ca.caFile,
      SVC_LOG_LEVEL: 'info',
    },
    logDestination: { write: (line: string) => void logLines.push(line) },
  });
  admin = await portal.adminToken();
  business = await createLicense(portal, { tier: 'business' });
});

afterAll(async () => {
  await portal?.close();
  await receiver?.close();
  await ca?.cleanup();
});

const scrapeOk = async (): Promise<Scrape> => {
  const s = await scrape(portal.url, TOKEN);
  expect(s.status, s.text).toBe(200);
  return s;
};

/** Scrapes until `probe` holds: the request counters are bumped once the answer has left. */
async function scrapeUntil(probe: (s: Scrape) => boolean, what: string): Promise<Scrape> {
  let last = await scrapeOk();
  await until(
    async () => {
      last = await scrapeOk();
      return probe(last);
    },
    20_000,
    () => what,
  );
  return last;
}

describe('GET /metrics with SVC_METRICS_TOKEN', () => {
  it('answers 401 in the usual error shape without the token, with another one, or in another scheme', async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef0123456789abcdef' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}` },
      { authorization: TOKEN },
      { 'x-api-key': TOKEN },
    ];
    for (const headers of attempts) {
      const res = await http(portal.url, 'GET', '/metrics', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    }
  });

  it('serves the text format: every family has the svc_ prefix and help text, process and event-loop metrics included', async () => {
    const s = await scrapeOk();
    expect(s.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(s.families.size).toBeGreaterThan(20);
    for (const [name, family] of s.families) {
      expect(name).toMatch(/^svc_/);
      expect(family.help, name).not.toBe('');
    }
    for (const name of [
      ...AREA_FAMILIES,
      'svc_nodejs_eventloop_lag_seconds',
      'svc_process_cpu_seconds_total',
      'svc_process_resident_memory_bytes',
    ])
      expect(s.families.has(name), name).toBe(true);
    expect(s.families.get('svc_http_request_duration_seconds')?.type).toBe('histogram');
    expect(sampleValue(s, 'svc_build_info', { version: '1.24.0' })).toBe(1);
    // On an external database there is no embedded server to restart.
    expect(sampleValue(s, 'svc_embedded_db_restarts_total')).toBe(0);
  });

  it('counts requests by route pattern, method and status; a path no route serves is one label, never its URL', async () => {
    const route = (r: string, method: string, status: string) => ({ route: r, method, status_code: status });
    const before = await scrapeOk();
    expect((await http(portal.url, 'GET', '/api/health')).status).toBe(200);
    expect((await http(portal.url, 'GET', '/api/health?_=cache-buster-4b2a')).status).toBe(200);
    expect((await http(portal.url, 'GET', '/api/licenses')).status).toBe(401);
    expect((await http(portal.url, 'DELETE', '/api/health')).status).toBe(404);
    // A missing console asset is the not-found answer too, not a route of its own.
    expect((await http(portal.url, 'GET', '/console/assets/no-such-file-9f3e.js')).status).toBe(404);
    expect((await http(portal.url, 'GET', '/nowhere/secret-path-7c1d?token=abc')).status).toBe(404);
    const counts = (s: Scrape) => [
      sampleValue(s, 'svc_http_requests_total', route('/api/health', 'GET', '200')),
      sampleValue(s, 'svc_http_requests_total', route('/api/licenses', 'GET', '401')),
      sampleValue(s, 'svc_http_requests_total', route('unmatched', 'DELETE', '404')),
      sampleValue(s, 'svc_http_requests_total', route('unmatched', 'GET', '404')),
    ];
    const was = counts(before);
    const after = await scrapeUntil(
      (s) => counts(s)[3] === (was[3] as number) + 2,
      'the unmatched requests to be counted',
    );
    expect(counts(after)).toEqual([was[0]! + 2, was[1]! + 1, was[2]! + 1, was[3]! + 2]);
    expect(histogramCount(after, 'svc_http_request_duration_seconds', route('/api/health', 'GET', '200'))).toBe(
      was[0]! + 2,
    );
    for (const raw of ['secret-path-7c1d', 'no-such-file-9f3e', 'cache-buster-4b2a'])
      expect(after.text).not.toContain(raw);
  });

  it('counts an upload by its body bytes: stored when committed, refused otherwise', async () => {
    const before = await scrapeOk();
    const stored = multipart(sessionParts(sessionDoc('session-minimal.json')));
    const ok = await postUpload(portal.url, business.key, stored);
    expect(ok.status, ok.text).toBe(200);
    const bad = multipart(sessionParts('{"not": json'));
    const refused = await postUpload(portal.url, business.key, bad);
    expect(refused.status).toBe(400);
    const after = await scrapeOk();
    const bytes = (s: Scrape, outcome: string) => sampleValue(s, 'svc_upload_bytes_total', { outcome });
    expect(bytes(after, 'stored') - bytes(before, 'stored')).toBe(stored.body.length);
    expect(bytes(after, 'refused') - bytes(before, 'refused')).toBe(bad.body.length);
  });

  it('counts heartbeats by outcome, and agent commands by status as the database holds them', async () => {
    const agent = `metrics-agent-${Date.now()}`;
    const beat = (body: Record<string, unknown>) =>
      http(portal.url, 'POST', '/api/health', { headers: withKey(business.key), json: body });
    const heartbeats = (s: Scrape, outcome: string) => sampleValue(s, 'svc_heartbeats_total', { outcome });
    const commands = (s: Scrape, status: string) => sampleValue(s, 'svc_agent_commands', { status });

    const before = await scrapeOk();
    expect((await beat(heartbeatBody(agent))).status).toBe(200);
    expect((await beat({ agent_id: agent })).status).toBe(400);
    const queued = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: agent, command_type: 'restart' },
    });
    expect(queued.status, queued.text).toBe(201);
    const mid = await scrapeUntil(
      (s) => heartbeats(s, 'refused') === heartbeats(before, 'refused') + 1,
      'the refused heartbeat to be counted',
    );
    expect(heartbeats(mid, 'accepted')).toBe(heartbeats(before, 'accepted') + 1);
    expect(commands(mid, 'pending')).toBe(commands(before, 'pending') + 1);

    // The next heartbeat claims it: pending to sent, read from the database at the next scrape.
    const claimed = await beat(heartbeatBody(agent));
    expect(claimed.body.commands).toHaveLength(1);
    const after = await scrapeUntil(
      (s) => heartbeats(s, 'accepted') === heartbeats(before, 'accepted') + 2,
      'the second heartbeat to be counted',
    );
    expect(commands(after, 'pending')).toBe(commands(before, 'pending'));
    expect(commands(after, 'sent')).toBe(commands(before, 'sent') + 1);
    // Every status is a series, 0 included, so an alert on one never sees "no data".
    const statuses = after.families.get('svc_agent_commands')?.samples.map((x) => x.labels['status']);
    expect(statuses?.sort()).toEqual(['acked', 'completed', 'failed', 'pending', 'sent']);
  });

  it('counts webhook deliveries to a real HTTPS receiver: delivered, then failed', async () => {
    const created = await http(portal.url, 'POST', '/api/webhooks', {
      headers: withToken(admin),
      json: { url: receiver.url(), event_types: ['status_changed'] },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.subscription.id as string;
    const ping = () => http(portal.url, 'POST', `/api/webhooks/ping?id=${id}`, { headers: withToken(admin) });
    const deliveries = (s: Scrape, outcome: string) => sampleValue(s, 'svc_webhook_deliveries_total', { outcome });

    const before = await scrapeOk();
    receiver.respond({ kind: 'status', status: 204 });
    const ok = await ping();
    expect(ok.body.delivery.status).toBe('succeeded');
    receiver.respond({ kind: 'status', status: 500 });
    const failed = await ping();
    expect(failed.body.delivery.status).toBe('failed');
    const after = await scrapeOk();
    expect(deliveries(after, 'delivered')).toBe(deliveries(before, 'delivered') + 1);
    expect(deliveries(after, 'failed')).toBe(deliveries(before, 'failed') + 1);
    expect(deliveries(after, 'shed')).toBe(deliveries(before, 'shed'));
    expect(sampleValue(after, 'svc_webhook_queue_depth')).toBe(0);
    expect(receiver.requests).toHaveLength(3);
  });

  it('reads the database pool at scrape time, and times its checkouts', async () => {
    const s = await scrapeOk();
    expect(sampleValue(s, 'svc_db_pool_max_connections')).toBe(10);
    const inUse = sampleValue(s, 'svc_db_pool_connections', { state: 'in_use' });
    const idle = sampleValue(s, 'svc_db_pool_connections', { state: 'idle' });
    expect(inUse + idle).toBe(portal.ctx.pool.totalCount);
    expect(sampleValue(s, 'svc_db_pool_waiting_clients')).toBe(0);
    expect(histogramCount(s, 'svc_db_pool_acquire_seconds')).toBeGreaterThan(0);
  });

  it('is described in the OpenAPI document while it is served', async () => {
    const doc = (await http(portal.url, 'GET', '/api/openapi.json')).body;
    const op = doc.paths['/metrics'].get;
    expect(op.operationId).toBe('scrapeMetrics');
    expect(op.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain']);
    expect(op.responses['401'].content['application/json'].schema.required).toContain('error');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('never writes the token to the log', async () => {
    expect((await http(portal.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
    expect((await http(portal.url, 'GET', `/metrics?token=${TOKEN}`)).status).toBe(401);
    await until(
      () => logLines.some((l) => l.includes('/metrics?token=')),
      10_000,
      () => 'the request logged',
    );
    expect(logLines.join('')).not.toContain(TOKEN);
  });
});

describe('SVC_METRICS_LISTEN', () => {
  it('serves /metrics on its own address without a token, and nothing else', async () => {
    expect(portal.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(portal.metricsUrl).not.toBe(portal.url);
    const s = await scrape(portal.metricsUrl as string);
    expect(s.status).toBe(200);
    expect(s.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(s.families.has('svc_http_requests_total')).toBe(true);
    for (const path of ['/api/health', '/', '/readyz', '/metrics/x']) {
      const res = await http(portal.metricsUrl as string, 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ error: `Not found: GET ${path}` });
    }
  });

  it('alone: the portal port has no /metrics (404), the listener has', async () => {
    const alone = await startTestPortal({ env: { SVC_METRICS_LISTEN: '127.0.0.1:0' } });
    try {
      const res = await http(alone.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Not found: GET /metrics' });
      expect((await scrape(alone.metricsUrl as string)).status).toBe(200);
    } finally {
      await alone.close();
    }
  });
});

describe('metrics off (the default)', () => {
  it('GET /metrics is a 404 like any unknown path, token or not, and there is no listener', async () => {
    const off = await startTestPortal();
    try {
      expect(off.metricsUrl).toBeNull();
      expect(off.ctx.metrics).toBeNull();
      expect((await http(off.url, 'GET', '/api/openapi.json')).body.paths).not.toHaveProperty(['/metrics']);
      const attempts: Record<string, string>[] = [{}, { authorization: `Bearer ${TOKEN}` }];
      for (const headers of attempts) {
        const res = await http(off.url, 'GET', '/metrics', { headers });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'Not found: GET /metrics' });
      }
    } finally {
      await off.close();
    }
  });
});
