import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { createTestDatabase, KEY_ENCRYPTION_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { blobObjects, newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';
import { type S3Peer, startS3Peer } from './helpers/s3-peer.ts';

/** npm run backup / restore on a portal whose session files live in an S3-compatible bucket. */

const CLI = path.resolve(import.meta.dirname, '../src/operations/backup/cli.ts');

describe('backup and restore with the S3 blob store', () => {
  let peer: S3Peer;
  let source: TestPortal;
  let second: TestPortal | null = null;
  let license: LicenseFixture;
  const dirs: string[] = [];
  const scratch = async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-backup-s3-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    peer = await startS3Peer();
    source = await startTestPortal({ env: peer.env('source') });
    license = await createLicense(source, { tier: 'professional' });
  });
  afterAll(async () => {
    await second?.close();
    await source?.close();
    await peer?.close();
    for (const dir of [...dirs, source?.dataDir]) if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  const download = async (portal: TestPortal, id: string, file: string) => {
    const res = await fetch(`${portal.url}/api/download?session=${id}&file=${file}`, {
      headers: { 'x-api-key': license.key },
    });
    expect(res.status, `${id} ${file}`).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  };

  /** Each session's findings index: the file it was built from and the file its due counts count. */
  const indexKeys = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ session_id: string; file_key: string; due_counted_key: string | null }>(
        'SELECT session_id, file_key, due_counted_key FROM session_findings_state ORDER BY session_id',
      );
      return rows;
    } finally {
      await client.end();
    }
  };

  it('copies the objects out of one bucket prefix and into another through the store', async () => {
    const ids = [newSessionId(), newSessionId()];
    for (const id of ids) {
      const parts = sessionParts(sessionDoc('session-complete.json', id), { report: `<html>${id}</html>` });
      const res = await postUpload(source.url, license.key, parts);
      expect(res.status, res.text).toBe(200);
    }
    const archive = path.join(await scratch(), 'portal.tar');
    const common = { SVC_IDENTITY_KEY_ENCRYPTION_KEY: KEY_ENCRYPTION_KEY };
    const made = await runCli(process.execPath, [CLI, 'backup', archive], {
      env: { ...common, ...peer.env('source'), DATABASE_URL: source.databaseUrl, SVC_DATA_DIR: source.dataDir },
    });
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);

    const target = { DATABASE_URL: await createTestDatabase(), SVC_DATA_DIR: await scratch() };
    const restored = await runCli(process.execPath, [CLI, 'restore', archive], {
      env: { ...common, ...peer.env('restored'), ...target },
    });
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(await peer.objects('restored/')).toHaveLength(2 * ids.length);
    expect(await blobObjects(target.SVC_DATA_DIR)).toEqual([]);
    // The objects have new keys: the findings indexes and their due counts follow them.
    const before = await indexKeys(source.databaseUrl);
    const after = await indexKeys(target.DATABASE_URL);
    expect(before.map((r) => r.session_id)).toEqual([...ids].sort());
    expect(after.map((r) => r.session_id)).toEqual([...ids].sort());
    for (const [i, r] of after.entries()) {
      expect(r.file_key).not.toBe(before[i]?.file_key);
      expect(r.due_counted_key).toBe(r.file_key);
    }

    second = await startTestPortal({
      databaseUrl: target.DATABASE_URL,
      env: { ...peer.env('restored'), SVC_DATA_DIR: target.SVC_DATA_DIR },
    });
    for (const id of ids)
      for (const file of ['session_results.json', 'report.html'])
        expect(await download(second, id, file)).toEqual(await download(source, id, file));
  });
});
