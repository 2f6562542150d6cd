import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import {
  blobTmp,
  multipart,
  newSessionId,
  type Part,
  postUpload,
  rawRequest,
  sessionDoc,
  sessionParts,
} from '@svc/test-support/upload';

/**
 * Disk. Uploads in flight count against the data directory's free space (two
 * uploads cannot together take it below SVC_MIN_FREE_DISK_MB), and the default floor suits a
 * small disk: 5 % of it, at most 1,024 MB (the old 1,024 MB default refused every upload on a
 * disk under 1 GB free). Each test gives its portal a data directory on a tmpfs of its own, so
 * free space is what the test makes it, whatever else runs on the machine.
 */

const run = promisify(execFile);
const MB = 1024 * 1024;
const DISK_MB = 64;
/** Bounds a wait for a condition (a hang guard, not a pace). */
const WAIT = { timeout: 60_000, interval: 20 };

/** Root, and a tmpfs can be mounted (as in CI; not in every container). */
const canMount =
  process.getuid?.() === 0 &&
  (await run('unshare', ['--mount', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt']).then(
    () => true,
    () => false,
  ));

const mounts: string[] = [];
const portals: TestPortal[] = [];

/** A fresh tmpfs of DISK_MB, mounted on a temporary directory; unmounted after the test. */
async function smallDisk(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-small-disk-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${DISK_MB}m,mode=0755`, 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

async function freeBytes(dir: string): Promise<number> {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
}

afterEach(async () => {
  for (const p of portals.splice(0)) await p.close();
  for (const dir of mounts.splice(0)) {
    // Lazy: a file a failed test left open does not keep the mount (or the next test) waiting.
    await run('umount', ['--lazy', dir]);
    await fs.rmdir(dir);
  }
});

/** An upload whose pipeline_log part comes first and is `logBytes` long (streamed to disk as it arrives). */
function uploadOf(logBytes: number) {
  const log: Part = { name: 'pipeline_log', filename: 'pipeline.log', data: Buffer.alloc(logBytes, 'x') };
  return multipart([log, ...sessionParts(sessionDoc('session-minimal.json', newSessionId()))]);
}

const diskFull = (uploadBytes: number, floorMb: number) => ({
  error: `The portal's disk is nearly full: this upload (up to ${Number((uploadBytes / MB).toFixed(1))} MB) and those in progress would leave less than ${floorMb} MB free (SVC_MIN_FREE_DISK_MB): the upload was not stored`,
  limit: 'SVC_MIN_FREE_DISK_MB',
});

describe.skipIf(!canMount)('free disk space and uploads', () => {
  it('two concurrent uploads cannot together take the disk below SVC_MIN_FREE_DISK_MB', async () => {
    const dataDir = await smallDisk();
    const body = 8 * MB;
    // Room for one upload and a half above the floor: either fits alone, not both.
    const floorMb = Math.floor(((await freeBytes(dataDir)) - 1.5 * body) / MB);
    const portal = await startTestPortal({ env: { SVC_DATA_DIR: dataDir, SVC_MIN_FREE_DISK_MB: String(floorMb) } });
    portals.push(portal);
    const { key } = await createLicense(portal, { tier: 'business' });

    // The first upload sends its first 64 KB, then waits until this test lets it go on.
    const first = uploadOf(body);
    let goOn = () => {};
    const gate = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    const answer = rawRequest(`${portal.url}/api/upload`, {
      headers: { 'content-type': first.contentType, 'content-length': first.body.length, 'x-api-key': key },
      chunks: (async function* () {
        yield first.body.subarray(0, 64 * 1024);
        await gate;
        for (let i = 64 * 1024; i < first.body.length; i += 256 * 1024) yield first.body.subarray(i, i + 256 * 1024);
      })(),
    });
    answer.catch(() => undefined);
    try {
      // It passed the check and is storing its log part: its staging file exists.
      await vi.waitFor(async () => expect(await blobTmp(dataDir)).toHaveLength(1), WAIT);

      // The disk still has more free than the floor plus this upload, but not once the first
      // upload's remaining bytes are counted.
      const second = uploadOf(body);
      expect((await freeBytes(dataDir)) - second.body.length).toBeGreaterThan(floorMb * MB);
      const refused = await postUpload(portal.url, key, second);
      expect([refused.status, refused.body]).toEqual([507, diskFull(second.body.length, floorMb)]);
    } finally {
      goOn();
    }
    expect((await answer).status).toBe(200);
    // Its reservation is gone with its answer: a small upload fits beside what it stored.
    const small = await postUpload(portal.url, key, sessionParts(sessionDoc('session-minimal.json')));
    expect(small.status).toBe(200);
  });

  it('the default floor is 5 % of a small disk: uploads go in until they would take it below that', async () => {
    const dataDir = await smallDisk();
    const portal = await startTestPortal({ env: { SVC_DATA_DIR: dataDir } });
    portals.push(portal);
    const { key } = await createLicense(portal, { tier: 'business' });
    expect((await postUpload(portal.url, key, uploadOf(4 * MB))).status).toBe(200);

    // Fill the disk to 2 MB above the floor (3.2 MB: 5 % of 64 MB): a 4 MB upload no longer fits.
    const floor = 0.05 * DISK_MB * MB;
    await fs.writeFile(
      path.join(dataDir, 'filler'),
      Buffer.alloc(Math.floor((await freeBytes(dataDir)) - floor - 2 * MB), 0),
    );
    const over = uploadOf(4 * MB);
    const refused = await postUpload(portal.url, key, over);
    expect([refused.status, refused.body]).toEqual([507, diskFull(over.body.length, 3.2)]);
    expect((await postUpload(portal.url, key, uploadOf(512 * 1024))).status).toBe(200);
  });
});
