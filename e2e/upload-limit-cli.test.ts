import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { SCAN_END, SCAN_START } from '@svc/test-support/foreign-items';
import { type ForeignItem, nessusV2 } from '@svc/test-support/foreign-reports';
import { sessionDoc } from '@svc/test-support/upload';
import { startPortalWithKey, type PortalWithKey } from './helpers/portal-with-key.ts';

/**
 * `svc upload` and `svc import --upload` measure the request they would send
 * and refuse one over the upload limit before sending it, naming the limit (SVC_UPLOAD_MAX_MB,
 * the contract's 25 MB by default, the protocol's one rule). The portal counts what reaches it: with
 * SVC_ACCESS_LOG=all every request it answers is logged once ("request completed"), and these
 * tests count those lines.
 */

const MB = 1024 * 1024;
const lines: string[] = [];
let fixture: PortalWithKey;
let work: string;

beforeAll(async () => {
  // The portal takes 26 MB, one more than the clients' default: only the client's check refuses 25 MB + 1.
  fixture = await startPortalWithKey({
    portal: {
      env: { SVC_UPLOAD_MAX_MB: '26', SVC_LOG_LEVEL: 'info', SVC_ACCESS_LOG: 'all' },
      logDestination: { write: (line: string) => void lines.push(line) },
    },
  });
  work = await tempHome();
});
afterAll(async () => {
  await fixture?.close();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** The requests the portal has received so far (method and path), from its log. */
const received = () =>
  lines
    .map((l) => JSON.parse(l) as { msg: string; req?: { method: string; url: string } })
    .filter((l) => l.msg === 'request completed')
    .map((l) => `${l.req?.method} ${l.req?.url.split('?')[0]}`);

const env = (extra: Record<string, string> = {}) => ({
  CONSULTATION_API_URL: fixture.uploadUrl,
  SVC_API_KEY: fixture.key,
  SVC_SESSIONS_DIR: path.join(work, 'sessions'),
  ...extra,
});

/** A session directory whose upload is `total` bytes or a little more: a small session file and a padded log. */
async function sessionDirOf(logBytes: number): Promise<{ dir: string; id: string }> {
  const doc = sessionDoc('session-minimal.json');
  const id = doc['metadata']['session_id'] as string;
  const dir = path.join(work, id);
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, 'session_results.json'), JSON.stringify(doc, null, 2));
  await fs.writeFile(path.join(dir, 'pipeline.log'), Buffer.alloc(logBytes, 'x'));
  return { dir, id };
}

const notSent = (bytes: string, limitMb: number) =>
  new RegExp(
    `^error: Upload not sent: the request would be ${bytes} bytes \\(\\d+(\\.\\d)? MB\\), over the upload limit of ${limitMb} MB \\(${limitMb * MB} bytes, SVC_UPLOAD_MAX_MB\\); the portal refuses larger uploads with 413\\. If the portal's operator raised its limit, set SVC_UPLOAD_MAX_MB to the same value here`,
    'm',
  );

describe('svc upload over the upload limit', () => {
  it('on the default 25 MB: refused before any request, the limit named; exit 1', async () => {
    const { dir } = await sessionDirOf(25 * MB);
    const before = received().length;
    const r = await runCli(SVC, ['upload', dir, '--no-benchmark'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(notSent('\\d+', 25));
    expect(received().slice(before)).toEqual([]);
  });

  it('with SVC_UPLOAD_MAX_MB raised to the portal’s 26 MB, the same directory is uploaded', async () => {
    const { dir, id } = await sessionDirOf(25 * MB);
    const before = received().length;
    const r = await runCli(SVC, ['upload', dir, '--no-benchmark', '--json'], {
      env: env({ SVC_UPLOAD_MAX_MB: '26' }),
      timeoutMs: 120_000,
    });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout).session_id).toBe(id);
    expect(received().slice(before)).toContain('POST /api/upload');
  });

  it('SVC_UPLOAD_MAX_MB that is not a whole number of MB from 1 to 512: exit 2, nothing sent', async () => {
    const { dir } = await sessionDirOf(1024);
    const before = received().length;
    const r = await runCli(SVC, ['upload', dir, '--no-benchmark'], { env: env({ SVC_UPLOAD_MAX_MB: '2GB' }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: SVC_UPLOAD_MAX_MB must be a whole number of MB from 1 to 512, the portal's upload limit (got "2GB")\n`,
    );
    expect(received().slice(before)).toEqual([]);
  });
});

describe('svc import --upload over the upload limit', () => {
  it('writes the session, then refuses its upload before sending it, naming the limit and the directory', async () => {
    // 3,000 Nessus results with a few KB of plugin output each: a session of several MB.
    const items: ForeignItem[] = Array.from({ length: 3000 }, (_, i) => ({
      host: `198.51.100.${1 + (i % 200)}`,
      port: 1000 + Math.floor(i / 200),
      protocol: 'tcp',
      service: 'www',
      id: String(200_000 + i),
      name: `Synthetic weakness ${i}`,
      severity: 'medium',
      cvss: 5.3,
      description: `Weakness ${i}. ${'The service answers in a way that shows it. '.repeat(20)}`,
      solution: 'Upgrade the service.',
      output: `Banner ${i}: ${'x'.repeat(2000)}`,
    }));
    const file = path.join(work, 'large.nessus');
    await fs.writeFile(file, nessusV2({ target: '198.51.100.0/24', start: SCAN_START, end: SCAN_END, items }));
    const before = received().length;
    const r = await runCli(SVC, ['import', file, '--upload'], {
      env: env({ SVC_UPLOAD_MAX_MB: '1' }),
      timeoutMs: 120_000,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(notSent('\\d+', 1));
    const dir = /\(the session is in (.+)\)\n$/.exec(r.stderr)?.[1];
    expect(dir).toBeDefined();
    expect((await fs.stat(path.join(dir as string, 'session_results.json'))).size).toBeGreaterThan(MB);
    // The import may ask the portal for its triage of the target; the upload itself never left.
    expect(received().slice(before)).not.toContain('POST /api/upload');
  });
});
