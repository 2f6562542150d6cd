import net from 'node:net';
import pg from 'pg';
import { uploadLimitBytes, uploadTooLargeMessage } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLicense, openDb } from '@svc/test-support/factories';
import { leanSessionDoc } from '@svc/test-support/large-session';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { usePortalWithDb } from '@svc/test-support/portal-db';
import {
  multipart,
  newSessionId,
  type Part,
  postUpload,
  rawRequest,
  sessionDoc,
  sessionParts,
} from '@svc/test-support/upload';

/**
 * A large session goes in or gets a clear answer. The body idle timeout
 * (SVC_BODY_IDLE_TIMEOUT_SECONDS) bounds a body that stops arriving, never the storing after
 * it; the size limit is a setting (SVC_UPLOAD_MAX_MB, the contract's 25 MB by default) and its 413
 * names it; a refused upload is logged; a 100,000-finding session uploads on the defaults.
 */

/** Bounds a wait for a condition (a hang guard, not a pace). */
const WAIT = { timeout: 60_000, interval: 20 };

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

/** Resolves when the portal closes `socket` (an idle connection, after the idle timeout). */
function closed(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

describe('an upload whose storing outlasts the body idle timeout', () => {
  /** Issues the key, on the defaults: fetch's keep-alive reuse races a 1 s idle timeout. */
  let setup: TestPortal;
  /** The same database, with the idle timeout at 1 s: only the upload (no keep-alive) goes here. */
  let portal: TestPortal;
  let db: pg.Client;
  beforeAll(async () => {
    setup = await startTestPortal();
    portal = await startTestPortal({
      databaseUrl: setup.databaseUrl,
      env: { SVC_BODY_IDLE_TIMEOUT_SECONDS: '1' },
    });
    db = await openDb(portal);
  });
  afterAll(async () => {
    await db?.end();
    await portal?.close();
    await setup?.close();
  });

  it('gets its 200 and is stored, though nothing moved on its connection for longer than the timeout', async () => {
    const { key, record } = await createLicense(setup, { tier: 'business' });
    const id = newSessionId();
    // The upload's transaction locks its key's row first (sessions/commit.ts): held here, the
    // storing waits, in a real way, for as long as this test says.
    const holder = new pg.Client({ connectionString: portal.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM licenses WHERE id = $1 FOR UPDATE', [record.id]);
      const answer = postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', id)));
      answer.catch(() => undefined);
      // The body is all in and the storing waits on the lock.
      await vi.waitFor(async () => {
        const waiting = await db.query(
          "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        expect(waiting.rowCount).toBe(1);
      }, WAIT);
      // A connection opened now, with nothing sent on it, is closed by the idle timeout: once it
      // is, the upload's connection (silent since before it opened) has been idle longer.
      const probe = net.connect(Number(new URL(portal.url).port), '127.0.0.1');
      probe.on('error', () => undefined);
      await closed(probe);
      await holder.query('COMMIT');
      const res = await answer;
      expect([res.status, res.body.session_id]).toEqual([200, id]);
      const stored = await db.query('SELECT 1 FROM sessions WHERE session_id = $1 AND client_id = $2', [
        id,
        record.client_id,
      ]);
      expect(stored.rowCount).toBe(1);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
  });
});

describe('SVC_UPLOAD_MAX_MB', () => {
  const lines: string[] = [];
  let portal: TestPortal;
  const limit = uploadLimitBytes(1);
  beforeAll(async () => {
    portal = await startTestPortal({
      env: { SVC_UPLOAD_MAX_MB: '1', SVC_LOG_LEVEL: 'info' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
  });
  afterAll(async () => {
    await portal?.close();
  });

  /** session_json and a pipeline_log padded so the whole body is exactly `total` bytes. */
  const bodyOfSize = (total: number) => {
    const head = sessionParts(sessionDoc('session-minimal.json', newSessionId()));
    const log = (n: number): Part => ({ name: 'pipeline_log', filename: 'pipeline.log', data: Buffer.alloc(n, 'x') });
    const base = multipart([...head, log(0)]).body.length;
    const mp = multipart([...head, log(total - base)]);
    expect(mp.body.length).toBe(total);
    return mp;
  };

  it('a body of exactly the limit is stored; one byte more is a 413 that names the limit, and is logged', async () => {
    const { key, record } = await createLicense(portal, { tier: 'business' });
    expect((await postUpload(portal.url, key, bodyOfSize(limit))).status).toBe(200);

    const res = await postUpload(portal.url, key, bodyOfSize(limit + 1));
    expect([res.status, res.body]).toEqual([
      413,
      {
        error:
          "Upload exceeds 1 MB: the whole request may be at most 1048576 bytes (the portal's upload limit, SVC_UPLOAD_MAX_MB)",
        limit_bytes: limit,
      },
    ]);
    expect(res.body.error).toBe(uploadTooLargeMessage(limit));
    await vi.waitFor(() => {
      const refusals = lines
        .map((l) => JSON.parse(l) as LogLine)
        .filter((l) => l.msg === 'upload refused: over a limit');
      expect(refusals).toEqual([
        expect.objectContaining({
          level: 30,
          status: 413,
          error: uploadTooLargeMessage(limit),
          declared_bytes: limit + 1,
          client_id: record.client_id,
        }),
      ]);
    }, WAIT);
  });
});

describe('a 100,000-finding session on the defaults', () => {
  let portal: TestPortal;
  let db: pg.Client;
  usePortalWithDb((p) => {
    ({ portal, db } = p);
  });

  it('is stored whole: 22 MB of lean findings, under the 25 MB limit', async () => {
    const { key, record } = await createLicense(portal, { tier: 'business' });
    const id = newSessionId();
    const json = JSON.stringify(leanSessionDoc(id, record.client_id, 100_000));
    expect(json.length).toBeGreaterThan(20 * 1024 * 1024);
    expect(json.length).toBeLessThan(uploadLimitBytes(25) - 1024);
    const mp = multipart(sessionParts(json));
    // About 20 s here, several times that on a loaded machine: the bound only catches a hang.
    const res = await rawRequest(`${portal.url}/api/upload`, {
      headers: { 'content-type': mp.contentType, 'x-api-key': key },
      body: mp.body,
      timeoutMs: 540_000,
    });
    expect([res.status, res.body.session_id, res.body.findings]).toEqual([
      200,
      id,
      { new: 100_000, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 },
    ]);
    const indexed = await db.query('SELECT count(*)::int AS n FROM session_findings WHERE session_id = $1', [id]);
    expect(indexed.rows[0].n).toBe(100_000);
  }, 600_000);
});
