import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { http, withKey } from '@svc/test-support/http';
import { startTestPortal, type TestPortal, type TestPortalOptions } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';
import { until } from '@svc/test-support/wait';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';
import { type SilentStore, startSilentStore } from './helpers/silent-store.ts';

/**
 * A store that is slow or large never blocks a start (docs/s3-storage.md):
 * the orphan sweep runs after the portal listens and retries a failed pass; a store that
 * accepts connections and never answers turns requests into 503s within the store timeouts,
 * and the portal lets go of every socket it opened to it.
 */

const UNAVAILABLE = { error: 'Session storage is unavailable, try again shortly' };
/** SVC_S3_REQUEST_TIMEOUT_MS here; every request to the store is tried twice (s3-store.ts). */
const REQUEST_TIMEOUT_MS = 1000;
/** The documented bound (two tries of the request timeout), plus room for a busy machine. */
const ANSWER_BOUND_MS = 2 * REQUEST_TIMEOUT_MS + 5000;

interface LogLine {
  level: number;
  msg: string;
  err?: { message: string };
  failed_passes?: number;
  retry_in_ms?: number;
}

let peer: S3Peer | null = null;
let silent: SilentStore | null = null;
let portal: TestPortal | null = null;
afterEach(async () => {
  await portal?.close();
  if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  await silent?.close();
  await peer?.close();
  portal = null;
  silent = null;
  peer = null;
});

async function start(env: Record<string, string>, opts: Partial<TestPortalOptions> = {}) {
  const lines: string[] = [];
  portal = await startTestPortal({
    env: { ...env, SVC_LOG_LEVEL: 'info' },
    logDestination: { write: (line: string) => void lines.push(line) },
    ...opts,
  });
  const logs = () => lines.map((l) => JSON.parse(l) as LogLine);
  return { portal, logs, said: (msg: string) => logs().filter((l) => l.msg === msg) };
}

/** The portal's S3 settings for an endpoint that is not the peer. */
const storeEnv = (endpoint: string) => ({
  SVC_BLOB_URL: `s3://svc-test/p-${randomBytes(4).toString('hex')}`,
  AWS_ENDPOINT_URL_S3: endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  SVC_S3_FORCE_PATH_STYLE: 'true',
  SVC_S3_CONNECT_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
  SVC_S3_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
});

const sessionJson = (sessionId: string) => ({
  metadata: { session_id: sessionId, client: 'Acme', target: '10.1.0.0/24' },
  summary: { risk_score: 42, risk_grade: 'C', total_findings: 0, total_hosts: 1 },
});

/** The answer and how long it took. */
async function timed<T>(request: () => Promise<T>): Promise<{ res: T; ms: number }> {
  const began = performance.now();
  const res = await request();
  return { res, ms: performance.now() - began };
}

describe('a store that is slow or large never blocks a start', () => {
  it('a store whose listing fails: the portal listens, logs the failure, retries with a growing delay, and sweeps once the listing works', async () => {
    peer = await startS3Peer();
    peer.refuse = (req, res) => {
      if (req.method !== 'GET' || !(req.url ?? '').includes('list-type=2')) return false;
      req.resume();
      res.writeHead(500, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0"?><Error><Code>InternalError</Code><Message>listing broken</Message></Error>');
      return true;
    };
    const { portal: p, said } = await start(peer.env(`p-${randomBytes(4).toString('hex')}`), {
      orphanSweep: { retryFirstMs: 40, retryMaxMs: 160 },
    });
    expect((await http(p.url, 'GET', '/api/health')).status).toBe(200);
    const failed = () => said('orphaned file sweep failed, will retry');
    await until(
      () => failed().length >= 4,
      30_000,
      () => `four failed passes (${failed().length})`,
    );
    const first = failed().slice(0, 4);
    expect(first.map((l) => l.failed_passes)).toStrictEqual([1, 2, 3, 4]);
    // The store's own words, after the bucket and where it is (pino joins an error's causes with ': ').
    const where = `S3 bucket "${peer.bucket}" at ${peer.endpoint}`;
    expect(first.map((l) => l.err?.message)).toStrictEqual(
      Array(4).fill(`${where}: InternalError (HTTP 500): listing broken`),
    );
    // Jittered within [half, whole] of a delay that doubles from 40 ms and stops at 160 ms.
    const ceilings = [40, 80, 160, 160];
    first.forEach((l, i) => {
      expect(l.retry_in_ms).toBeGreaterThanOrEqual(ceilings[i]! / 2);
      expect(l.retry_in_ms).toBeLessThanOrEqual(ceilings[i]!);
    });
    // Meanwhile the portal serves, the store included.
    const key = await createLicense(p);
    const sessionId = newSessionId();
    expect((await postUpload(p.url, key.key, sessionParts(sessionJson(sessionId)))).status).toBe(200);

    peer.refuse = null;
    await until(
      () => said('orphaned file sweep done').length === 1,
      30_000,
      () => 'a pass that succeeds',
    );
    // Its one line says it had been failing, and how often.
    expect(said('orphaned file sweep done')[0]?.failed_passes).toBe(failed().length);
    const download = await http(p.url, 'GET', `/api/download?session=${sessionId}`, { headers: withKey(key.key) });
    expect(download.status).toBe(200);
  });

  it('a store that accepts connections and never answers: the portal starts and listens though it can neither check nor list the bucket; an upload gets 503 within the timeouts; no socket to the store stays open', async () => {
    silent = await startSilentStore();
    const { portal: p, said } = await start(storeEnv(silent.endpoint), {
      // One pass only: a retry in the middle of the test would open sockets of its own.
      orphanSweep: { retryFirstMs: 3_600_000, retryMaxMs: 3_600_000 },
    });
    const unreachable = said('session storage is not reachable; starting without it');
    expect(unreachable).toHaveLength(1);
    expect(unreachable[0]?.err?.message).toMatch(
      new RegExp(`^S3 bucket "svc-test" at ${silent.endpoint} is not reachable: TimeoutError: `),
    );
    expect((await http(p.url, 'GET', '/api/health')).status).toBe(200);
    await until(
      () => said('orphaned file sweep failed, will retry').length === 1,
      30_000,
      () => 'the failed sweep',
    );
    expect(said('orphaned file sweep failed, will retry')[0]?.err?.message).toMatch(/TimeoutError/);

    const key = await createLicense(p);
    const { res, ms } = await timed(() => postUpload(p.url, key.key, sessionParts(sessionJson(newSessionId()))));
    expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toStrictEqual({
      status: 503,
      retryAfter: '5',
      body: UNAVAILABLE,
    });
    expect(ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(silent.accepted()).toBeGreaterThan(0);
    const store = silent;
    await until(
      () => store.open() === 0,
      20_000,
      () => `no open connection to the store (${store.open()} open)`,
    );
  });

  it('a store that goes silent after the start: download and upload get 503 within the timeouts, and the portal lets go of its sockets', async () => {
    peer = await startS3Peer();
    silent = await startSilentStore({ forwardTo: peer.port });
    const { portal: p, said } = await start(storeEnv(silent.endpoint));
    const key = await createLicense(p);
    const sessionId = newSessionId();
    expect((await postUpload(p.url, key.key, sessionParts(sessionJson(sessionId)))).status).toBe(200);
    expect(said('session storage is not reachable; starting without it')).toStrictEqual([]);

    silent.silence();
    const down = await timed(() =>
      http(p.url, 'GET', `/api/download?session=${sessionId}`, { headers: withKey(key.key) }),
    );
    expect({
      status: down.res.status,
      retryAfter: down.res.headers.get('retry-after'),
      body: down.res.body,
    }).toStrictEqual({ status: 503, retryAfter: '5', body: UNAVAILABLE });
    expect(down.ms).toBeLessThan(ANSWER_BOUND_MS);
    const up = await timed(() => postUpload(p.url, key.key, sessionParts(sessionJson(newSessionId()))));
    expect({ status: up.res.status, body: up.res.body }).toStrictEqual({ status: 503, body: UNAVAILABLE });
    expect(up.ms).toBeLessThan(ANSWER_BOUND_MS);
    const store = silent;
    await until(
      () => store.open() === 0,
      20_000,
      () => `no open connection to the store (${store.open()} open)`,
    );
  });
});
