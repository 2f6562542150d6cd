import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@svc/test-support/ports';
import { login } from '@svc/test-support/portal';
import {
  describe as describeProcess,
  isAlive,
  killAll,
  killProcess,
  makeDataDir,
  postgresProcessesFor,
  readPostmasterPid,
  sleep,
  startPortalProcess,
  waitForDeath,
  type PortalProcess,
} from '@svc/test-support/portal-process';
import {
  blobObjects,
  blobPath,
  blobTmp,
  multipart,
  newSessionId,
  rawRequest,
  sessionDoc,
  sessionParts,
  sha256,
  type Multipart,
} from '@svc/test-support/upload';

/**
 * Crash consistency of uploads (docs/api.md: "a crash at any byte leaves either nothing or
 * the whole session, and orphaned temp files are cleaned up"), with the real portal
 * process (`node packages/portal/src/main.ts`, embedded PostgreSQL, its own data dir):
 * an upload is trickled in, the portal is killed with -9 at several points of it, its
 * PostgreSQL killed too or left orphaned, and a restart on the same data dir must show
 * no trace of the upload; an upload completed before a kill -9 must be there in full.
 * The tests run in order on one data dir.
 */

const LEGACY_KEY = 'crash-test-legacy-key-0123456789abcdef';
const ADMIN_EMAIL = 'crash-admin@test.local';
const ADMIN_PASSWORD = 'crash-password-0123';
const KB = 1024;

let dataDir: string;
let pgPort: number;
let current: PortalProcess | null = null;

function start(): Promise<PortalProcess> {
  return startPortalProcess({
    dataDir,
    pgPort,
    env: {
      SVC_UPLOAD_API_KEY: LEGACY_KEY,
      SVC_ADMIN_EMAIL: ADMIN_EMAIL,
      SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
      SVC_LOG_LEVEL: 'info',
      SVC_BASE_URL: 'http://portal.test',
    },
  });
}

async function withDatabase<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const { password } = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  const client = new pg.Client({ connectionString: `postgres://postgres:${password}@127.0.0.1:${pgPort}/svc` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Poll (bounded, to catch hangs only) until `check` holds. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${current ? `\n${describeProcess(current)}` : ''}`);
    await sleep(25);
  }
}

const tmpBytes = async () => {
  let total = 0;
  for (const name of await blobTmp(dataDir))
    total += (await fs.stat(path.join(dataDir, 'blobs', 'tmp', name)).catch(() => ({ size: 0 }))).size;
  return total;
};

/** An upload whose body the test sends piece by piece over node:http. */
function trickle(url: string, mp: Multipart) {
  const req = http.request(`${url}/api/upload`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': mp.contentType, 'content-length': mp.body.length, 'x-api-key': LEGACY_KEY },
  });
  let sent = 0;
  let closed = false;
  const outcome = new Promise<string>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve(`answered ${res.statusCode}`);
    });
    req.on('error', (err) => resolve(`failed: ${err.message}`));
    req.on('close', () => {
      closed = true;
      resolve('closed');
    });
  });
  req.flushHeaders();
  return {
    outcome,
    get sent() {
      return sent;
    },
    /** Send the body up to (not including) byte `offset`. */
    async sendUntil(offset: number): Promise<void> {
      while (sent < offset && !closed) {
        const end = Math.min(offset, sent + 64 * KB);
        const flushed = req.write(mp.body.subarray(sent, end));
        sent = end;
        if (!flushed) {
          await new Promise<void>((resolve) => {
            const done = () => {
              req.off('drain', done);
              req.off('close', done);
              resolve();
            };
            req.on('drain', done);
            req.on('close', done);
          });
        }
      }
      if (closed) throw new Error(`the connection closed after ${sent} bytes: ${await outcome}`);
    },
    destroy: () => req.destroy(),
  };
}

/** Body: pipeline_log (the first file part), session_json, report_html, exec_summary_html. */
function crashUpload(sessionId: string) {
  const log = Buffer.alloc(2048 * KB, 'l');
  const report = Buffer.from(`<html><body>${'r'.repeat(1024 * KB)}</body></html>`);
  const exec = Buffer.from(`<html><body>${'e'.repeat(512 * KB)}</body></html>`);
  const json = JSON.stringify(sessionDoc('session-complete.json', sessionId), null, 2);
  const mp = multipart([
    { name: 'pipeline_log', filename: 'pipeline.log', contentType: 'text/plain', data: log },
    { name: 'session_json', filename: 'session_results.json', contentType: 'application/json', data: json },
    { name: 'report_html', filename: 'report_x.html', contentType: 'text/html', data: report },
    { name: 'exec_summary_html', filename: 'exec_summary_x.html', contentType: 'text/html', data: exec },
  ]);
  const at = (needle: string | Buffer, from = 0) => {
    const i = mp.body.indexOf(needle, from);
    if (i < 0) throw new Error('offset not found');
    return i;
  };
  const logStart = at(log.subarray(0, 64));
  const jsonEnd = at(json) + Buffer.byteLength(json);
  const reportStart = at(report.subarray(0, 64), jsonEnd);
  return { mp, offsets: { logStart, jsonEnd, reportStart } };
}

/** kill -9 the portal; then its PostgreSQL too (postmaster and every backend), or leave it orphaned. */
async function crash(p: PortalProcess, postgres: 'kill' | 'leave'): Promise<void> {
  const postmaster = await readPostmasterPid(dataDir);
  expect(postmaster).not.toBeNull();
  await killProcess(p);
  expect((await p.exited).signal).toBe('SIGKILL');
  if (postgres === 'kill') {
    process.kill(postmaster!, 'SIGKILL');
    expect(await waitForDeath(postmaster!)).toBe(true);
    for (const pid of await postgresProcessesFor(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
      expect(await waitForDeath(pid)).toBe(true);
    }
  } else {
    // The orphan keeps running; the next start has to stop it.
    expect(isAlive(postmaster!)).toBe(true);
  }
}

/** The restarted portal's first orphan sweep, which runs once it listens, has completed. */
const sweptOnce = () => current!.waitForOutput(/"msg":"orphaned file sweep done"/);

/** After a restart: the killed upload left no row and no file (besides `keep`, the committed sessions' objects). */
async function expectNoTrace(sessionId: string, keep: string[]): Promise<void> {
  await sweptOnce();
  const rows = await withDatabase((c) => c.query('SELECT session_id FROM sessions WHERE session_id = $1', [sessionId]));
  expect(rows.rowCount).toBe(0);
  const tokens = await withDatabase((c) => c.query('SELECT 1 FROM share_tokens WHERE session_id = $1', [sessionId]));
  expect(tokens.rowCount).toBe(0);
  const audit = await withDatabase((c) => c.query('SELECT 1 FROM audit_events WHERE session_id = $1', [sessionId]));
  expect(audit.rowCount).toBe(0);
  expect(await blobObjects(dataDir)).toStrictEqual([...keep].sort());
  expect(await blobTmp(dataDir)).toStrictEqual([]);
  const token = await login(current!.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  const res = await rawRequest(`${current!.url}/api/sessions?session=${sessionId}`, {
    method: 'GET',
    headers: { 'x-identity-token': token },
  });
  expect(res.status).toBe(404);
}

/** Object keys of every committed session. */
async function committedKeys(): Promise<string[]> {
  const rows = await withDatabase((c) => c.query('SELECT files FROM sessions'));
  return rows.rows.flatMap((r: { files: Record<string, { key: string }> }) => Object.values(r.files).map((f) => f.key));
}

beforeAll(async () => {
  dataDir = await makeDataDir('svc-upload-crash-');
  pgPort = await freePort();
});

afterAll(async () => {
  // Every portal process and every PostgreSQL process in the data dir (orphans too), then the dir.
  await killAll();
});

describe('upload crash consistency with a real portal process', { timeout: 240_000 }, () => {
  it('kill -9 after some bytes of the first file part (PostgreSQL killed too): nothing of the upload survives', async () => {
    current = await start();
    const id = newSessionId();
    const { mp, offsets } = crashUpload(id);
    const up = trickle(current.url, mp);
    try {
      await up.sendUntil(offsets.logStart + 256 * KB);
      // The portal is streaming the log into a staging file.
      await until('the staging file of pipeline.log', async () => (await tmpBytes()) > 0);
      expect(await blobObjects(dataDir)).toStrictEqual([]);
      await crash(current, 'kill');
    } finally {
      up.destroy();
    }
    expect(await up.outcome).not.toMatch(/^answered/);

    current = await start();
    await expectNoTrace(id, []);
  });

  it('kill -9 after the session_json part (PostgreSQL left orphaned, the restart stops it)', async () => {
    const id = newSessionId();
    const { mp, offsets } = crashUpload(id);
    const up = trickle(current!.url, mp);
    try {
      // The log and the JSON are complete, the report is under way.
      await up.sendUntil(offsets.reportStart + 128 * KB);
      await until(
        'pipeline.log stored and report.html staging',
        async () => (await blobObjects(dataDir)).length === 1 && (await tmpBytes()) > 0,
      );
      await crash(current!, 'leave');
    } finally {
      up.destroy();
    }
    expect(await up.outcome).not.toMatch(/^answered/);

    current = await start();
    expect(current.stdout() + current.stderr()).toMatch(/still running; stopping it first/);
    await expectNoTrace(id, []);
  });

  it('an upload completed before a kill -9 is there in full after the restart; one killed just before its last bytes is not', async () => {
    // A complete upload first.
    const doneId = newSessionId();
    const files = {
      log: Buffer.alloc(700 * KB, 'p'),
      report: Buffer.from(`<html><body>${'q'.repeat(300 * KB)}</body></html>`),
      exec: Buffer.from('<html><body>exec</body></html>'),
    };
    const json = JSON.stringify(sessionDoc('session-complete.json', doneId));
    const doneBody = multipart(sessionParts(json, files));
    const done = await rawRequest(`${current!.url}/api/upload`, {
      headers: { 'content-type': doneBody.contentType, 'x-api-key': LEGACY_KEY },
      body: doneBody.body,
    });
    expect(done.status, done.text).toBe(200);

    // Then one that stops 4 bytes short of its end: every file part is complete (and
    // stored), only the closing boundary's "--\r\n" is missing.
    const id = newSessionId();
    const { mp } = crashUpload(id);
    const keepBefore = await committedKeys();
    const up = trickle(current!.url, mp);
    try {
      await up.sendUntil(mp.body.length - 4);
      await until(
        'all three files of the unfinished upload stored',
        async () => (await blobObjects(dataDir)).length === keepBefore.length + 3,
      );
      expect(await withDatabase((c) => c.query('SELECT 1 FROM sessions WHERE session_id = $1', [id]))).toMatchObject({
        rowCount: 0,
      });
      await crash(current!, 'kill');
    } finally {
      up.destroy();
    }
    expect(await up.outcome).not.toMatch(/^answered/);

    current = await start();
    const keep = await committedKeys();
    expect(keep.sort()).toStrictEqual(keepBefore.sort());
    await expectNoTrace(id, keep);

    // The completed session: its row, its share token, every file on disk and downloadable, sha256 intact.
    const row = await withDatabase((c) => c.query('SELECT * FROM sessions WHERE session_id = $1', [doneId]));
    expect(row.rowCount).toBe(1);
    const stored = row.rows[0].files as Record<string, { key: string; size: number; sha256: string }>;
    expect(Object.keys(stored).sort()).toStrictEqual([
      'exec_summary.html',
      'pipeline.log',
      'report.html',
      'session_results.json',
    ]);
    const sent: Record<string, Buffer> = {
      'session_results.json': Buffer.from(json),
      'pipeline.log': files.log,
      'report.html': files.report,
      'exec_summary.html': files.exec,
    };
    for (const [name, f] of Object.entries(stored)) {
      const onDisk = await fs.readFile(blobPath(dataDir, f.key));
      expect(sha256(onDisk), name).toBe(f.sha256);
      expect(f.sha256, name).toBe(sha256(sent[name]!));
      expect(onDisk.length, name).toBe(f.size);
    }
    const token = await login(current.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    const detail = await rawRequest(`${current.url}/api/sessions?session=${doneId}`, {
      method: 'GET',
      headers: { 'x-identity-token': token },
    });
    expect(detail.status).toBe(200);
    expect(detail.body.session).toMatchObject({
      session_id: doneId,
      client_id: 'acme-from-json',
      risk_score: 75, // the complete fixture's findings, scored by the portal (docs/scoring.md)
      has_exec_summary: true,
    });
    expect(
      await withDatabase((c) => c.query('SELECT 1 FROM share_tokens WHERE session_id = $1', [doneId])),
    ).toMatchObject({ rowCount: 1 });

    // Through the API as well, when the download endpoint is there.
    for (const name of Object.keys(stored)) {
      const res = await fetch(`${current.url}/api/download?session=${doneId}&file=${name}&as_uploaded=true`, {
        headers: { 'x-api-key': LEGACY_KEY },
      });
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.status, name).toBe(200);
      expect(sha256(body), name).toBe(sha256(sent[name]!));
    }
  });

  it('a kill -9 right after an answered upload keeps it (PostgreSQL left orphaned)', async () => {
    const id = newSessionId();
    const log = Buffer.alloc(100 * KB, 'z');
    const mp = multipart(sessionParts(sessionDoc('session-minimal.json', id), { log }));
    const res = await rawRequest(`${current!.url}/api/upload`, {
      headers: { 'content-type': mp.contentType, 'x-api-key': LEGACY_KEY },
      body: mp.body,
    });
    expect(res.status).toBe(200);
    await crash(current!, 'leave');
    current = await start();
    await sweptOnce();
    const row = await withDatabase((c) => c.query('SELECT files FROM sessions WHERE session_id = $1', [id]));
    expect(row.rowCount).toBe(1);
    const f = (row.rows[0].files as Record<string, { key: string; sha256: string }>)['pipeline.log']!;
    expect(f.sha256).toBe(sha256(log));
    expect(sha256(await fs.readFile(blobPath(dataDir, f.key)))).toBe(f.sha256);
    expect(await blobTmp(dataDir)).toStrictEqual([]);
  });
});
