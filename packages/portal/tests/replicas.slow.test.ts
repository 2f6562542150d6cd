import http from 'node:http';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeatBody, newAgentId, uniqueClientId } from '@svc/test-support/factories';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { http as call, withKey, withToken } from '@svc/test-support/http';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  KEY_ENCRYPTION_KEY,
  LEGACY_KEY,
  createTestDatabase,
  login,
} from '@svc/test-support/portal';
import { multipart, newSessionId, postUpload, sessionParts, sha256 } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { type Nginx, nginxListener, requestFrom, startNginx } from '@svc/test-support/nginx';
import {
  killAll,
  killProcess,
  makeDataDir,
  startPortalProcess,
  type PortalProcess,
} from '@svc/test-support/portal-process';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';

/**
 * Two portal processes behind a real nginx (docs/deployment-replicas.md): one external
 * PostgreSQL, one S3 bucket, one key-encryption key, one SVC_BASE_URL (the proxy's). Each
 * check goes through the proxy and straight to each replica.
 */

const KEY_FAILURES_PER_MINUTE = 3;
const prefix = `replicas-${randomBytes(4).toString('hex')}`;

let peer: S3Peer;
let ca: TestCa;
let receiver: HttpsReceiver;
let nginx: Nginx;
let db: pg.Client;
let a: PortalProcess;
let b: PortalProcess;
/** The proxy's address (SVC_BASE_URL of both replicas). */
let front: string;
let frontPort: number;
let token: string;
let key: string;

/** Over one 5 MiB part, so the report goes up to the bucket as a multipart upload. */
const bigReport = (fill: string) =>
  Buffer.from(
    `<!doctype html><html><body><h1>${fill}</h1><pre>${fill.repeat(Math.ceil((6 << 20) / fill.length))}</pre></body></html>`,
  );
const sessionJson = (sessionId: string) => ({
  metadata: { session_id: sessionId, client: 'Acme', target: '10.1.0.0/24' },
  summary: { risk_score: 42, risk_grade: 'C', total_findings: 2, total_hosts: 1 },
});
const upload = (url: string, sessionId: string, report: Buffer) =>
  postUpload(url, key, sessionParts(sessionJson(sessionId), { log: 'stage ok\n', report }));
const download = (url: string, sessionId: string) =>
  call(url, 'GET', `/api/download?session=${sessionId}&file=report.html`, { headers: withKey(key) });
/** The replica (its port) that answered through the proxy: the last address nginx tried. */
const upstreamOf = (res: { headers: Headers | http.IncomingHttpHeaders }): string => {
  const value = res.headers instanceof Headers ? res.headers.get('x-upstream') : res.headers['x-upstream'];
  return String(value).split(':').pop() ?? '';
};

beforeAll(async () => {
  peer = await startS3Peer();
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
  const listener = await nginxListener();
  frontPort = listener.port;
  front = `http://127.0.0.1:${frontPort}`;
  const env = {
    DATABASE_URL: await createTestDatabase({ migrated: true }),
    SVC_BASE_URL: front,
    SVC_TRUST_PROXY: '127.0.0.1',
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_UPLOAD_API_KEY: LEGACY_KEY,
    SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY,
    SVC_API_KEY_FAILURES_PER_MINUTE: String(KEY_FAILURES_PER_MINUTE),
    SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
    SVC_WEBHOOK_CA_FILE: ca.caFile,
    SVC_LOG_LEVEL: 'info', // the 'portal listening' line tells the port it picked
    ...peer.env(prefix),
  };
  [a, b] = await Promise.all([
    makeDataDir('svc-replica-a-').then((dataDir) => startPortalProcess({ dataDir, env })),
    makeDataDir('svc-replica-b-').then((dataDir) => startPortalProcess({ dataDir, env })),
  ]);
  nginx = await startNginx(
    [
      {
        listener,
        body: `client_max_body_size 100m;
    proxy_request_buffering off;
    location / {
      proxy_pass http://portals;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      add_header X-Upstream $upstream_addr always;
    }`,
      },
    ],
    `upstream portals {
    server 127.0.0.1:${a.port} max_fails=1 fail_timeout=30s;
    server 127.0.0.1:${b.port} max_fails=1 fail_timeout=30s;
    keepalive 8;
  }`,
  );
  db = new pg.Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  token = await login(a.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  const lic = await call(b.url, 'POST', '/api/licenses', {
    headers: withToken(token),
    json: { tier: 'msp', client_id: uniqueClientId(), name: 'replicas' },
  });
  expect(lic.status, lic.text).toBe(201);
  key = lic.body.license.plaintext_key;
});

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await nginx?.stop();
  await killAll();
  await receiver?.close();
  await ca?.cleanup();
  await peer?.close();
});

describe('two replicas behind nginx', () => {
  it('an admin token from one replica works on the other and through the proxy (one signing key)', async () => {
    for (const url of [a.url, b.url, front]) {
      const res = await call(url, 'GET', '/api/licenses', { headers: withToken(token) });
      expect(res.status, url).toBe(200);
    }
  });

  it('an upload through A downloads byte-identical and opens its share page through B and the proxy', async () => {
    const sessionId = newSessionId();
    const report = bigReport('through replica A');
    const up = await upload(a.url, sessionId, report);
    expect(up.status, up.text).toBe(200);
    const shared = `/share/frame?token=${up.body.share_token}&file=report.html`;
    for (const url of [b.url, front, front]) {
      const got = await download(url, sessionId);
      expect(got.status, url).toBe(200);
      expect(sha256(got.text)).toBe(sha256(report));
      const page = await call(url, 'GET', `/share/?token=${up.body.share_token}`);
      expect(page.status).toBe(200);
      const frame = await call(url, 'GET', shared);
      expect(frame.status).toBe(200);
      expect(frame.text.startsWith('<!doctype html><html><body><h1>through replica A</h1>')).toBe(true);
    }
    // And the other way, through the proxy: both replicas answer, each with the same bytes.
    const viaProxy = newSessionId();
    expect((await upload(front, viaProxy, report)).status).toBe(200);
    const seen = new Set<string>();
    await until(
      async () => {
        const got = await download(front, viaProxy);
        expect(sha256(got.text)).toBe(sha256(report));
        seen.add(upstreamOf(got));
        return seen.size === 2;
      },
      20_000,
      () => `downloads through the proxy reached only ${[...seen]}`,
    );
    expect([...seen].sort()).toEqual([String(a.port), String(b.port)].sort());
  });

  it('a command queued on A is claimed exactly once by heartbeats alternating A and B, and by concurrent ones', async () => {
    const agentId = newAgentId('replica');
    const beat = (url: string) =>
      call(url, 'POST', '/api/health', { headers: withKey(key), json: heartbeatBody(agentId) });
    expect((await beat(b.url)).status).toBe(200);
    const queue = async (n: number) => {
      const ids: number[] = [];
      for (let i = 0; i < n; i++) {
        const res = await call(a.url, 'POST', '/api/agent-commands', {
          headers: withToken(token),
          json: { agent_id: agentId, command_type: 'set_log_level', payload: { level: 'debug' } },
        });
        expect(res.status, res.text).toBe(201);
        ids.push(...res.body.commands.map((c: { id: number }) => c.id));
      }
      return ids;
    };
    const claimed: number[] = [];
    const take = async (url: string) => {
      const res = await beat(url);
      expect(res.status, res.text).toBe(200);
      claimed.push(...res.body.commands.map((c: { id: number }) => c.id));
    };
    const one = await queue(1);
    for (const url of [b.url, a.url, front, b.url, a.url, front]) await take(url);
    expect(claimed).toEqual(one);

    claimed.length = 0;
    const many = await queue(30);
    for (let round = 0; round < 40 && claimed.length < many.length; round++)
      await Promise.all([take(a.url), take(b.url), take(front)]);
    expect([...claimed].sort((x, y) => x - y)).toEqual([...many].sort((x, y) => x - y));
    const rows = await db.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM agent_commands WHERE agent_id = $1 GROUP BY status',
      [agentId],
    );
    expect(rows.rows).toEqual([{ status: 'sent', n: String(1 + many.length) }]);
  });

  it('each webhook event is delivered once, whichever replica handled it', async () => {
    const sub = await call(b.url, 'POST', '/api/webhooks', {
      headers: withToken(token),
      json: { url: receiver.url('/replicas'), event_types: ['scan_completed', 'session_deleted', 'command_completed'] },
    });
    expect(sub.status, sub.text).toBe(201);
    const subId = sub.body.subscription.id as string;
    const sessions = Array.from({ length: 6 }, () => newSessionId());
    const report = Buffer.from('<html><body>small</body></html>');
    await Promise.all(sessions.map((s, i) => upload([a.url, b.url, front][i % 3] as string, s, report)));
    // The same session deleted on both replicas at once: one delete wins, one event.
    const raced = sessions.slice(0, 2);
    const deletes = await Promise.all(
      raced.flatMap((s) =>
        [a.url, b.url].map((url) =>
          call(url, 'DELETE', `/api/sessions?session=${s}`, { headers: withToken(token) }).then((r) => r.status),
        ),
      ),
    );
    expect(deletes.sort()).toEqual([200, 200, 404, 404]);
    // A command completed on both replicas at once: one report wins, one event.
    const agentId = newAgentId('hooks');
    expect(
      (await call(a.url, 'POST', '/api/health', { headers: withKey(key), json: heartbeatBody(agentId) })).status,
    ).toBe(200);
    const queued = await call(a.url, 'POST', '/api/agent-commands', {
      headers: withToken(token),
      json: { agent_id: agentId, command_type: 'restart', payload: {} },
    });
    expect(queued.status, queued.text).toBe(201);
    const commandId = queued.body.commands[0].id as number;
    const claim = await call(b.url, 'POST', '/api/health', { headers: withKey(key), json: heartbeatBody(agentId) });
    expect(claim.body.commands.map((c: { id: number }) => c.id)).toEqual([commandId]);
    const reportStatus = (url: string, status: string) =>
      call(url, 'PATCH', '/api/agent-commands', {
        headers: withKey(key),
        json: { command_id: commandId, agent_id: agentId, status },
      }).then((r) => r.status);
    expect(await reportStatus(front, 'acked')).toBe(200);
    expect((await Promise.all([reportStatus(a.url, 'completed'), reportStatus(b.url, 'completed')])).sort()).toEqual([
      200, 409,
    ]);
    const expected = sessions.length + raced.length + 1;
    const settled = async () => {
      const r = await db.query<{ status: string }>('SELECT status FROM webhook_deliveries WHERE subscription_id = $1', [
        subId,
      ]);
      return r.rows.length >= expected && r.rows.every((row) => row.status !== 'pending');
    };
    await until(settled, 30_000, () => 'every delivery logged and finished');
    const got = receiver.requests.filter((r) => r.path === '/replicas').map((r) => r.json);
    const ids = got.map((e) => e.event_id as string);
    expect(new Set(ids).size).toBe(ids.length);
    const byType = (t: string) =>
      got
        .filter((e) => e.event_type === t)
        .map((e) => e.data.session_id as string)
        .sort();
    expect(byType('scan_completed')).toEqual([...sessions].sort());
    expect(byType('session_deleted')).toEqual([...raced].sort());
    expect(got.filter((e) => e.event_type === 'command_completed').map((e) => e.data.command_id)).toEqual([commandId]);
    const rows = await db.query('SELECT id FROM webhook_deliveries WHERE subscription_id = $1', [subId]);
    expect(rows.rows.length).toBe(expected);
  });

  it('a login lockout earned through one replica holds on the other; the owner signs in from elsewhere', async () => {
    const attempt = (port: number, from: string, password: string, headers: Record<string, string> = {}) =>
      requestFrom(port, from, 'POST', '/identity/token', headers, {
        grant_type: 'password',
        username: ADMIN_EMAIL,
        password,
      });
    const hit = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await attempt(frontPort, '127.0.0.2', 'wrong-password-000');
      expect(res.status, `attempt ${i}`).toBe(400);
      hit.add(upstreamOf(res));
    }
    expect(hit.size).toBe(2);
    const LOCKED = {
      status: 429,
      body: { error: 'too_many_attempts', error_description: 'Too many failed logins; try again later' },
    };
    // Locked on both replicas through the proxy (round robin), and on each one directly.
    const tries = [
      await attempt(frontPort, '127.0.0.2', ADMIN_PASSWORD),
      await attempt(frontPort, '127.0.0.2', ADMIN_PASSWORD),
      await attempt(a.port, '127.0.0.1', ADMIN_PASSWORD, { 'x-forwarded-for': '127.0.0.2' }),
      await attempt(b.port, '127.0.0.1', ADMIN_PASSWORD, { 'x-forwarded-for': '127.0.0.2' }),
    ];
    expect(tries.map((t) => ({ status: t.status, body: t.body }))).toEqual(Array(4).fill(LOCKED));
    expect(new Set(tries.slice(0, 2).map(upstreamOf)).size).toBe(2);
    const owner = await attempt(frontPort, '127.0.0.3', ADMIN_PASSWORD);
    expect(owner.status).toBe(200);
  });

  it('key guessing: each replica counts its own minute, so N replicas admit at most N times the limit', async () => {
    // One key prefix (its first 14 characters), counted per address and prefix.
    const keyPrefix = `svc_pro_${randomBytes(3).toString('hex')}`;
    const guess = () => keyPrefix + randomBytes(29).toString('hex').slice(0, 52);
    const outcome = async (port: number, from: string) => {
      const res = await requestFrom(port, from, 'GET', '/api/license', { 'x-api-key': guess() });
      return res.status;
    };
    // Through the proxy from one client: 2 × the limit answered, then every replica refuses.
    const statuses: number[] = [];
    for (let i = 0; i < 4 * KEY_FAILURES_PER_MINUTE; i++) statuses.push(await outcome(frontPort, '127.0.0.4'));
    expect(statuses.filter((s) => s === 200).length).toBe(2 * KEY_FAILURES_PER_MINUTE);
    expect(statuses.slice(2 * KEY_FAILURES_PER_MINUTE)).toEqual(Array(2 * KEY_FAILURES_PER_MINUTE).fill(429));
    for (const port of [a.port, b.port]) {
      const res = await requestFrom(port, '127.0.0.1', 'GET', '/api/license', {
        'x-api-key': guess(),
        'x-forwarded-for': '127.0.0.4',
      });
      expect(res.status).toBe(429);
    }
  });

  // Last: it ends replica A.
  it('a replica killed with -9 mid-upload loses nothing the other committed, and the other keeps serving', async () => {
    const committed = newSessionId();
    const report = bigReport('committed through B');
    expect((await upload(b.url, committed, report)).status).toBe(200);
    const doomed = newSessionId();
    const mp = multipart(sessionParts(sessionJson(doomed), { log: 'stage ok\n', report: bigReport('never stored') }));
    const req = http.request(`${a.url}/api/upload`, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': mp.contentType, 'content-length': mp.body.length, 'x-api-key': key },
    });
    const ended = new Promise<string>((resolve) => {
      req.on('response', (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (err) => resolve(`failed: ${err.message}`));
    });
    const seen = peer.requests.length;
    // All but the last MiB: A streams the report's first part into the bucket and waits for more.
    req.write(mp.body.subarray(0, mp.body.length - (1 << 20)));
    await until(
      () => peer.requests.slice(seen).some((line) => line.startsWith('PUT ') && line.includes('partNumber=1')),
      30_000,
      () => `A sending its first part to the bucket; the peer saw ${peer.requests.slice(seen).join(', ')}`,
    );
    await killProcess(a);
    expect((await a.exited).signal).toBe('SIGKILL');
    expect(await ended).toMatch(/^failed: /);

    // B and the proxy (which now finds only B) serve everything committed, byte for byte.
    for (const url of [b.url, front, front, front]) {
      const got = await download(url, committed);
      expect(got.status, url).toBe(200);
      expect(sha256(got.text)).toBe(sha256(report));
    }
    // Nothing of the killed upload is visible: no session, and every object is one a session names.
    const detail = await call(b.url, 'GET', `/api/sessions?session=${doomed}`, { headers: withToken(token) });
    expect(detail.status).toBe(404);
    expect((await db.query('SELECT 1 FROM sessions WHERE session_id = $1', [doomed])).rows).toEqual([]);
    const rows = await db.query<{ files: Record<string, { key: string }> }>('SELECT files FROM sessions');
    const named = rows.rows.flatMap((r) => Object.values(r.files).map((f) => `${prefix}/${f.key}`)).sort();
    const objects = await peer.objects(`${prefix}/`);
    expect(objects.filter((k) => named.includes(k))).toEqual(named);
    // The rest are files A had stored whole before the kill: unreferenced, swept after the grace
    // period; its report, cut mid-way, is an unfinished multipart upload, never an object.
    const putByKilled = (k: string) =>
      peer.requests.slice(seen).some((line) => line.split('?')[0] === `PUT /${peer.bucket}/${k}`);
    expect(objects.filter((k) => !named.includes(k) && !putByKilled(k))).toEqual([]);
    expect((await peer.unfinishedUploads()).filter((k) => k.startsWith(`${prefix}/`)).length).toBe(1);
    // B keeps taking uploads, through the proxy too.
    const after = newSessionId();
    const up = await upload(front, after, report);
    expect(up.status).toBe(200);
    expect(upstreamOf(up)).toBe(String(b.port));
    expect(sha256((await download(b.url, after)).text)).toBe(sha256(report));
  });
});
