import fs from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture, openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { multipart, newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * Storage is limited per client (SVC_CLIENT_STORAGE_LIMIT_MB, 413) and for
 * the portal (SVC_STORAGE_LIMIT_MB, database and session files together, 507), and an upload
 * is refused while the disk is nearly full (SVC_MIN_FREE_DISK_MB, 507). A refused upload
 * leaves no session and no file; concurrent uploads cannot both take the last room.
 */

const MB = 1024 * 1024;
/** A report of 300 KB: three fit under a 1 MB client limit, four do not. */
const REPORT = `<!doctype html><html><body>${'x'.repeat(300 * 1024)}</body></html>`;
const CLIENT_FULL =
  'Storage limit of this client reached: its sessions may take at most 1 MB (SVC_CLIENT_STORAGE_LIMIT_MB); delete old sessions first';

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('per-client storage limit', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  const A = uniqueClientId('quota-a');
  const B = uniqueClientId('quota-b');

  beforeAll(async () => {
    portal = await startTestPortal({ env: { SVC_CLIENT_STORAGE_LIMIT_MB: '1' } });
    db = await openDb(portal);
    keyA = await createLicense(portal, { tier: 'msp', client_id: A });
    keyB = await createLicense(portal, { tier: 'msp', client_id: B });
  });
  afterAll(async () => {
    await db.end();
    await portal.close();
  });

  const upload = (key: string, id = newSessionId()) =>
    postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json', id), { report: REPORT }));
  const used = async (clientId: string) =>
    Number((await db.query('SELECT bytes FROM storage_usage WHERE client_id = $1', [clientId])).rows[0]?.bytes ?? 0);
  const storedBytes = async (clientId: string) =>
    Number(
      (
        await db.query(
          `SELECT COALESCE(SUM((f.value->>'size')::bigint), 0) AS b FROM sessions, jsonb_each(files) f WHERE client_id = $1`,
          [clientId],
        )
      ).rows[0].b,
    );

  it('uploads until the client is full, then 413 with a clear message; nothing of the refused upload stays', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = newSessionId();
      const res = await upload(keyA.key, id);
      expect(res.status, res.text).toBe(200);
      ids.push(id);
    }
    expect(await used(A)).toBe(await storedBytes(A));
    const filesBefore = await filesUnder(portal.dataDir);
    const refused = newSessionId();
    const res = await upload(keyA.key, refused);
    expect([res.status, res.body]).toEqual([413, { error: CLIENT_FULL }]);
    expect((await db.query('SELECT 1 FROM sessions WHERE session_id = $1', [refused])).rowCount).toBe(0);
    expect((await filesUnder(portal.dataDir)).filter((f) => !f.includes(`${path.sep}tmp${path.sep}`))).toEqual(
      filesBefore.filter((f) => !f.includes(`${path.sep}tmp${path.sep}`)),
    );
    expect(await used(A)).toBe(await storedBytes(A));
    // Another client is not affected.
    expect((await upload(keyB.key)).status).toBe(200);
    // Deleting a session makes room again.
    const admin = await portal.adminToken();
    const del = await http(portal.url, 'DELETE', `/api/sessions?session=${ids[0]}&client_id=${A}`, {
      headers: withToken(admin),
    });
    expect(del.status).toBe(200);
    expect(await used(A)).toBe(await storedBytes(A));
    expect((await upload(keyA.key)).status).toBe(200);
  });

  it('a refresh that would take the client past its limit is 413 and keeps the stored file', async () => {
    const C = uniqueClientId('quota-c');
    const key = await createLicense(portal, { tier: 'msp', client_id: C });
    const id = newSessionId();
    expect((await upload(key.key, id)).status).toBe(200);
    const before = await used(C);
    const big = `<!doctype html><html><body>${'y'.repeat(1100 * 1024)}</body></html>`;
    const res = await http(portal.url, 'PUT', `/api/refresh?session=${id}&file=report.html`, {
      headers: { ...withKey(key.key), 'content-type': 'text/html' },
      body: big,
    });
    expect([res.status, res.body]).toEqual([413, { error: CLIENT_FULL }]);
    expect(await used(C)).toBe(before);
    const stored = await http(portal.url, 'GET', `/api/download?session=${id}&file=report.html`, {
      headers: withKey(key.key),
    });
    expect(stored.text).toBe(REPORT);
  });

  it('concurrent uploads with room for one: exactly one is stored', async () => {
    for (let round = 0; round < 3; round++) {
      const D = uniqueClientId('quota-d');
      const key = await createLicense(portal, { tier: 'msp', client_id: D });
      for (let i = 0; i < 2; i++) expect((await upload(key.key)).status).toBe(200);
      const answers = await Promise.all([upload(key.key), upload(key.key), upload(key.key)]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 413, 413]);
      expect(await used(D)).toBe(await storedBytes(D));
      expect(await used(D)).toBeLessThanOrEqual(MB);
    }
  });
});

describe('portal-wide storage limit and free disk', () => {
  let first: TestPortal;
  beforeAll(async () => {
    first = await startTestPortal();
  });
  afterAll(() => first.close());

  it('SVC_STORAGE_LIMIT_MB counts the database and the session files: past it, 507 and nothing stored', async () => {
    const db = await openDb(first);
    const total = async () =>
      Number(
        (
          await db.query(
            'SELECT pg_database_size(current_database()) + (SELECT COALESCE(SUM(bytes), 0) FROM storage_usage) AS b',
          )
        ).rows[0].b,
      );
    // Room for a few uploads of 300 KB above what is stored now.
    const limitMb = Math.ceil((await total()) / MB) + 1;
    const portal = await startTestPortal({
      databaseUrl: first.databaseUrl,
      env: { SVC_STORAGE_LIMIT_MB: String(limitMb) },
    });
    try {
      const key = await createLicense(portal, { tier: 'msp' });
      const statuses: number[] = [];
      let refused: { id: string; body: unknown } | null = null;
      for (let i = 0; i < 12 && refused === null; i++) {
        const id = newSessionId();
        const res = await postUpload(
          portal.url,
          key.key,
          sessionParts(sessionDoc('session-minimal.json', id), { report: REPORT }),
        );
        statuses.push(res.status);
        if (res.status !== 200) refused = { id, body: res.body };
      }
      expect(statuses[0]).toBe(200);
      expect(statuses.at(-1)).toBe(507);
      expect(refused?.body).toEqual({
        error: `The portal's storage limit is reached (${limitMb} MB, SVC_STORAGE_LIMIT_MB): the upload was not stored`,
      });
      expect((await db.query('SELECT 1 FROM sessions WHERE session_id = $1', [refused?.id])).rowCount).toBe(0);
      expect(await total()).toBeLessThanOrEqual(limitMb * MB + REPORT.length);
    } finally {
      await portal.close();
      await db.end();
    }
  });

  it('SVC_MIN_FREE_DISK_MB: an upload while the disk has less free is 507 before anything is stored', async () => {
    const portal = await startTestPortal({
      databaseUrl: first.databaseUrl,
      env: { SVC_MIN_FREE_DISK_MB: '100000000' },
    });
    try {
      const key = await createLicense(portal, { tier: 'msp' });
      const id = newSessionId();
      const body = multipart(sessionParts(sessionDoc('session-minimal.json', id)));
      const res = await postUpload(portal.url, key.key, body);
      expect([res.status, res.body]).toEqual([
        507,
        {
          error: `The portal's disk is nearly full: this upload (up to ${body.body.length} bytes) and those in progress would leave less than 100000000 MB free (SVC_MIN_FREE_DISK_MB): the upload was not stored`,
          limit: 'SVC_MIN_FREE_DISK_MB',
        },
      ]);
    } finally {
      await portal.close();
    }
  });
});
