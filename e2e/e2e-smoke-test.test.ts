import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { http as portalHttp, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { CHECK_NAMES } from '@svc/client/engine';
import { runCli, tool, writeConfig } from '@svc/test-support/cli';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

// tools/e2e_smoke_test.sh as a real process against the real portal (in process, real
// PostgreSQL), behind a proxy that hides an endpoint, and against servers that refuse or
// never answer.

const SMOKE = tool('e2e_smoke_test.sh');
const ALL_PASS = CHECK_NAMES.map((n) => `PASS ${n}`);
const SESSION_ID = /^\d{8}_\d{6}_smoke-[0-9a-f]{8}$/;

let portal: TestPortal;
let business: LicenseFixture;
let dir: string;
const servers: (http.Server | net.Server)[] = [];

const fixture = usePortalWithKey({ tier: 'business' });

beforeAll(async () => {
  portal = fixture.portal;
  business = { key: fixture.key, record: fixture.license };
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-smoke-test-'));
});

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

let configs = 0;
async function config(values: Record<string, string>): Promise<string> {
  return writeConfig(dir, values, `svc-${++configs}.conf`);
}

const businessConfig = (url = `${portal.url}/api/upload`) =>
  config({ CONSULTATION_API_URL: url, SVC_API_KEY: business.key });

/** The admin's view of one session: 200 when it exists, 404 when not. */
async function adminSessionStatus(sessionId: string): Promise<number> {
  const res = await portalHttp(portal.url, 'GET', `/api/sessions?session=${encodeURIComponent(sessionId)}`, {
    headers: withToken(await portal.adminToken()),
  });
  return res.status;
}

async function adminSessionCount(clientId: string): Promise<number> {
  const res = await portalHttp(portal.url, 'GET', `/api/sessions?client_id=${encodeURIComponent(clientId)}&limit=100`, {
    headers: withToken(await portal.adminToken()),
  });
  expect(res.status).toBe(200);
  return (res.body.sessions as unknown[]).length;
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

async function listen(server: http.Server | net.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/**
 * A reverse proxy in front of the portal: `intercept` answers some requests itself (returns
 * true), everything else is piped through unchanged. Returns its port.
 */
async function proxy(intercept: (req: http.IncomingMessage, res: http.ServerResponse) => boolean): Promise<number> {
  const target = new URL(portal.url);
  return listen(
    http.createServer((req, res) => {
      if (intercept(req, res)) return;
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: false,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      // Once the answer is out the exchange is over: a request body still unsent (a 403
      // comes before the body is read) would otherwise hold the portal's connection open.
      res.on('close', () => {
        if (!upstream.writableFinished) upstream.destroy();
      });
      req.pipe(upstream);
    }),
  );
}

describe('e2e_smoke_test.sh', () => {
  it('all ten checks pass against a fresh portal; the uploaded session is deleted afterwards; exit 0', async () => {
    const before = await adminSessionCount(business.record.client_id);
    const r = await runCli(SMOKE, ['-c', await businessConfig()]);
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out.slice(0, 10)).toEqual(ALL_PASS);
    expect(out[10]).toMatch(/^cleanup: deleted session \d{8}_\d{6}_smoke-[0-9a-f]{8}$/);
    expect(out[11]).toBe('10 passed, 0 failed');
    expect(out).toHaveLength(12);
    expect(r.stdout).not.toContain('\u001b['); // not a terminal: no color
    expect(r.stderr).not.toContain(business.key);
    const sessionId = out[10]!.replace('cleanup: deleted session ', '');
    expect(await adminSessionStatus(sessionId)).toBe(404);
    expect(await adminSessionCount(business.record.client_id)).toBe(before);
  });

  it('--no-cleanup keeps the uploaded session and says so', async () => {
    const r = await runCli(SMOKE, ['-c', await businessConfig(), '--no-cleanup']);
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out.slice(0, 10)).toEqual(ALL_PASS);
    const m = /^cleanup: skipped \(--no-cleanup\); session (\S+) kept$/.exec(out[10] ?? '');
    expect(m, out[10]).not.toBeNull();
    expect(m![1]).toMatch(SESSION_ID);
    expect(out[11]).toBe('10 passed, 0 failed');
    expect(await adminSessionStatus(m![1]!)).toBe(200);
    const del = await portalHttp(portal.url, 'DELETE', `/api/sessions?session=${m![1]}`, {
      headers: withToken(await portal.adminToken()),
    });
    expect(del.status).toBe(200);
  });

  it('--json lists the ten checks with pass/fail, the cleanup and the outcome', async () => {
    const r = await runCli(SMOKE, ['-c', await businessConfig(), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as {
      checks: { name: string; passed: boolean; reason: string | null }[];
      passed: number;
      failed: number;
      ok: boolean;
      session_id: string;
      cleanup: { status: string };
    };
    expect(body.checks.map((c) => c.name)).toEqual([...CHECK_NAMES]);
    expect(body.checks.every((c) => c.passed && c.reason === null)).toBe(true);
    expect(body).toMatchObject({ passed: 10, failed: 0, ok: true, cleanup: { status: 'deleted' } });
    expect(body.session_id).toMatch(SESSION_ID);
    expect(await adminSessionStatus(body.session_id)).toBe(404);
  });

  it('a professional key passes too (benchmark refused for its tier only), and SVC_JWT is used by sessions auth', async () => {
    const pro = await createLicense(portal, { tier: 'professional' });
    const cfg = await config({
      CONSULTATION_API_URL: portal.url,
      SVC_API_KEY: pro.key,
      SVC_JWT: await portal.adminToken(),
    });
    const r = await runCli(SMOKE, ['-c', cfg, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const body = JSON.parse(r.stdout) as { checks: { name: string; passed: boolean; detail: string | null }[] };
    expect(body.checks.find((c) => c.name === 'benchmark with key')?.detail).toContain(
      'Insufficient permissions for benchmark',
    );
    expect(body.checks.find((c) => c.name === 'sessions auth')?.detail).toContain(
      'the configured JWT lists sessions (200)',
    );
    expect(await adminSessionCount(pro.record.client_id)).toBe(0);
  });

  it('--dry-run prints every request with secrets masked, sends nothing, exit 0', async () => {
    const fresh = await createLicense(portal, { tier: 'business' });
    const cfg = await config({
      CONSULTATION_API_URL: `${portal.url}/api/upload`,
      SVC_API_KEY: fresh.key,
      SVC_JWT: 'secret-jwt-value',
    });
    const r = await runCli(SMOKE, ['-c', cfg, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    const out = lines(r.stdout);
    expect(out[0]).toBe(`Dry run against ${portal.url}/api/upload (timeout 30 s per request); nothing is sent.`);
    for (const name of CHECK_NAMES)
      expect(
        out.some((l) => l.startsWith(`${name}: `)),
        name,
      ).toBe(true);
    expect(out).toContain(`health: GET ${portal.url}/api/health`);
    expect(out).toContain(
      `upload round-trip: POST ${portal.url}/api/upload with the key (svc_biz_****), multipart session_json`,
    );
    expect(out).toContain(`share-token lookup: GET ${portal.url}/api/share?token=<share_token from the upload>`);
    expect(out).toContain(`sessions auth: GET ${portal.url}/api/sessions without credentials`);
    expect(out).toContain(`sessions auth: GET ${portal.url}/api/sessions?limit=1 with the JWT (****)`);
    expect(out).toContain(
      `upload auth: POST ${portal.url}/api/upload with a bogus key (svc_pro_****), multipart session_json`,
    );
    expect(out.at(-2)).toMatch(
      new RegExp(
        `^cleanup: DELETE ${portal.url}/api/sessions\\?session=\\d{8}_\\d{6}_smoke-[0-9a-f]{8} with the key \\(svc_biz_\\*{4}\\)$`,
      ),
    );
    expect(out.at(-1)).toBe('10 checks would run.');
    expect(r.stdout).not.toContain(fresh.key);
    expect(r.stdout).not.toContain(fresh.key.slice(8));
    expect(r.stdout).not.toContain('secret-jwt-value');
    expect(await adminSessionCount(fresh.record.client_id)).toBe(0);

    // Nothing at all reaches the network: a server that counts requests sees none.
    let seen = 0;
    const port = await listen(
      http.createServer((_req, res) => {
        seen++;
        res.end();
      }),
    );
    const dry = await runCli(SMOKE, [
      '-c',
      await config({ CONSULTATION_API_URL: `http://127.0.0.1:${port}/api/upload`, SVC_API_KEY: fresh.key }),
      '--dry-run',
      '--json',
    ]);
    expect(dry.code).toBe(0);
    const plan = JSON.parse(dry.stdout) as { dry_run: boolean; checks: { name: string; requests: string[] }[] };
    expect(plan.dry_run).toBe(true);
    expect(plan.checks.map((c) => c.name)).toEqual([...CHECK_NAMES]);
    expect(seen).toBe(0);
  });

  it('usage and configuration errors exit 2 with a one-line reason', async () => {
    const noConfig = await runCli(SMOKE, []);
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toContain("error: required option '-c, --config <file>' not specified");
    expect(noConfig.stdout).toBe('');

    const missingFile = await runCli(SMOKE, ['-c', path.join(dir, 'nope.conf')]);
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr.trim()).toBe(`error: Config file not found: ${path.join(dir, 'nope.conf')}`);

    const noUrlCfg = await config({ SVC_API_KEY: business.key });
    const noUrl = await runCli(SMOKE, ['-c', noUrlCfg]);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/^error: No portal URL/m);
    expect(noUrl.stdout).toBe('');

    const noKeyCfg = await config({ CONSULTATION_API_URL: portal.url });
    const noKey = await runCli(SMOKE, ['-c', noKeyCfg]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr.trim()).toBe(`error: No API key: set SVC_API_KEY (or CONSULTATION_API_KEY) in ${noKeyCfg}`);

    const badTimeout = await runCli(SMOKE, ['-c', await businessConfig(), '--timeout', 'soon']);
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toContain('--timeout must be a whole number of seconds');
  });

  it('a bogus key fails the key-dependent checks; exit 1', async () => {
    const cfg = await config({ CONSULTATION_API_URL: portal.url, SVC_API_KEY: `svc_biz_${'ab'.repeat(32)}` });
    const r = await runCli(SMOKE, ['-c', cfg]);
    expect(r.code).toBe(1);
    expect(lines(r.stdout)).toEqual([
      'PASS health',
      'PASS health JSON',
      'PASS benchmark auth',
      'FAIL benchmark with key: GET /api/benchmark with the key answered 403 (Invalid API key; expected 200, 404 Session not found, or 403 Insufficient permissions for benchmark)',
      'PASS sessions auth',
      'PASS upload method',
      'FAIL upload round-trip: POST /api/upload with the key answered 403 (Invalid API key; expected 200)',
      'FAIL share-token lookup: skipped: upload round-trip failed',
      'PASS upload auth',
      'FAIL delete auth: skipped: upload round-trip failed',
      'cleanup: nothing to delete',
      '6 passed, 4 failed',
    ]);
    expect(r.stderr).toContain('error: smoke test failed: 4 of 10 checks failed');
  });

  it('a portal missing an endpoint: that check fails with a clear reason, the others pass; exit 1', async () => {
    const port = await proxy((req, res) => {
      if ((req.url ?? '').split('?')[0] !== '/api/share') return false;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return true;
    });
    const r = await runCli(SMOKE, ['-c', await businessConfig(`http://127.0.0.1:${port}/api/upload`)]);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.slice(0, 10)).toEqual(
      ALL_PASS.map((l) =>
        l === 'PASS share-token lookup'
          ? 'FAIL share-token lookup: GET /api/share answered 404 (endpoint missing?)'
          : l,
      ),
    );
    expect(out[10]).toMatch(/^cleanup: deleted session \S+$/);
    expect(out[11]).toBe('9 passed, 1 failed');
    expect(r.stderr).toContain('error: smoke test failed: 1 of 10 checks failed');
  });

  it('a failed cleanup is reported and fails the run even when every check passed; exit 1', async () => {
    // The keyed DELETE (the cleanup) fails; the refused DELETEs of "delete auth" go through.
    const port = await proxy((req, res) => {
      if (req.method !== 'DELETE' || req.headers['x-api-key'] !== business.key) return false;
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"error":"Database unavailable, try again shortly"}');
      return true;
    });
    const r = await runCli(SMOKE, ['-c', await businessConfig(`http://127.0.0.1:${port}/api/upload`)]);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    expect(out.slice(0, 10)).toEqual(ALL_PASS);
    const m =
      /^cleanup FAILED: session (\S+): DELETE \/api\/sessions with the key answered 503 \(Database unavailable, try again shortly; expected 200\)$/.exec(
        out[10] ?? '',
      );
    expect(m, out[10]).not.toBeNull();
    expect(out[11]).toBe('10 passed, 0 failed');
    expect(r.stderr).toContain('error: smoke test failed: cleanup failed');
    expect(await adminSessionStatus(m![1]!)).toBe(200);
    await portalHttp(portal.url, 'DELETE', `/api/sessions?session=${m![1]}`, {
      headers: withToken(await portal.adminToken()),
    });
  });

  it('an unreachable portal fails every check cleanly with the connection reason; exit 1', async () => {
    const closed = net.createServer();
    const port = await new Promise<number>((resolve) =>
      closed.listen(0, '127.0.0.1', () => resolve((closed.address() as net.AddressInfo).port)),
    );
    await new Promise((resolve) => closed.close(resolve));
    const r = await runCli(SMOKE, ['-c', await businessConfig(`http://127.0.0.1:${port}/api/upload`)]);
    expect(r.code).toBe(1);
    const out = lines(r.stdout);
    const reason = `Cannot reach http://127.0.0.1:${port}: ECONNREFUSED`;
    expect(out[0]).toBe(`FAIL health: GET /api/health: ${reason}`);
    for (const [i, name] of CHECK_NAMES.slice(1).entries())
      expect(out[i + 1]).toBe(`FAIL ${name}: not attempted: portal unreachable (${reason})`);
    expect(out.slice(10)).toEqual(['cleanup: nothing to delete', '0 passed, 10 failed']);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain('unexpected failure');
  });

  it('--timeout applies per request: a server that never answers ends the run within seconds; exit 1', async () => {
    const sockets: net.Socket[] = [];
    // Counted from the server's first connection, not from the spawn: the tool's start-up on a
    // loaded machine is not the timeout under test.
    let reached = 0;
    const silent = net.createServer((s) => {
      reached ||= Date.now();
      sockets.push(s);
    });
    const port = await listen(silent);
    const r = await runCli(
      SMOKE,
      ['-c', await businessConfig(`http://127.0.0.1:${port}/api/upload`), '--timeout', '1'],
      { timeoutMs: 20_000 },
    );
    const elapsed = Date.now() - reached;
    for (const s of sockets) s.destroy();
    expect(r.code).toBe(1);
    expect(reached).toBeGreaterThan(0);
    expect(elapsed).toBeLessThan(8_000);
    const out = lines(r.stdout);
    expect(out[0]).toBe(`FAIL health: GET /api/health: No answer from http://127.0.0.1:${port} within 1 s`);
    expect(
      out
        .slice(1, 10)
        .every((l) =>
          l.endsWith(`not attempted: portal unreachable (No answer from http://127.0.0.1:${port} within 1 s)`),
        ),
    ).toBe(true);
    expect(out.at(-1)).toBe('0 passed, 10 failed');
  });
});
