import fs from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as request, withToken } from '@svc/test-support/http';
import { type CliResult, runCli, SVC, tempHome } from '@svc/test-support/cli';
import { scannerSessionId } from '@svc/protocol';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { listenOldSshBanner } from './helpers/ssh-banner.ts';

/**
 * The prior state from the portal as real processes: `svc scan --upload` to a real portal, a finding triaged in
 * the portal (PATCH /api/remediation-update), then the next `svc scan` starts from the portal's
 * state and keeps `in_progress` and the note. With the portal unreachable, one warning and the
 * local history. Loopback only: nmap scans one port the test opens on 127.0.0.1.
 */

interface ScanJson {
  path: string;
  session_id: string;
}
interface Doc {
  remediation: { title: string; status: string; note: string; first_seen: string; fingerprint?: string }[];
}

const fixture = usePortalWithKey({ tier: 'business' });
let server: net.Server;
/** Accepts connections and drops them at once: a portal that does not answer. */
let deaf: net.Server;
let port: number;
let work: string;

const NOTE = 'OPS-42: upgrade planned';

async function scan(url: string, upload: boolean): Promise<{ r: CliResult; out: ScanJson; doc: Doc }> {
  const r = await runCli(
    SVC,
    [
      'scan',
      '--targets',
      '127.0.0.1',
      '--ports',
      `T:${port}`,
      '--no-tools',
      '--sessions-dir',
      path.join(work, 'sessions'),
      '--json',
      ...(upload ? ['--upload'] : []),
    ],
    { env: { CONSULTATION_API_URL: url, SVC_API_KEY: fixture.key }, timeoutMs: 3 * 60_000 },
  );
  const out = JSON.parse(r.stdout || '{}') as ScanJson;
  const doc =
    r.code === 0
      ? (JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as Doc)
      : { remediation: [] };
  return { r, out, doc };
}

/** Session ids have one-second resolution: the next scan starts once the clock has left the previous one's second. */
async function nextSecondAfter(id: string): Promise<void> {
  for (let i = 0; i < 100 && scannerSessionId(new Date()) <= id; i++) await sleep(25);
}

beforeAll(async () => {
  ({ server, port } = await listenOldSshBanner());
  deaf = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => deaf.listen(0, '127.0.0.1', resolve));
  work = await tempHome();
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (deaf ? deaf.close(() => resolve()) : resolve()));
  if (work) await fs.rm(work, { recursive: true, force: true });
});

describe('prior state from the portal', () => {
  let first: Awaited<ReturnType<typeof scan>>;
  let second: Awaited<ReturnType<typeof scan>>;
  let third: Awaited<ReturnType<typeof scan>>;
  let title: string;

  it('scan 1 uploads; a finding is set in_progress with a note in the portal', { timeout: 4 * 60_000 }, async () => {
    first = await scan(fixture.uploadUrl, true);
    expect(first.r.code, first.r.stderr).toBe(0);
    expect(first.doc.remediation.length).toBeGreaterThan(0);
    expect(first.doc.remediation.every((e) => e.status === 'new' && /^[0-9a-f]{64}$/.test(e.fingerprint ?? ''))).toBe(
      true,
    );
    title = first.doc.remediation[0]!.title;
    const res = await request(fixture.portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(await fixture.portal.adminToken()),
      json: {
        session_id: first.out.session_id,
        client_id: fixture.clientId,
        items: [{ title, status: 'in_progress', note: NOTE }],
      },
    });
    expect(res.status, res.text).toBe(200);
  });

  it('scan 2 starts from the portal: the finding keeps in_progress and the note', { timeout: 4 * 60_000 }, async () => {
    await nextSecondAfter(first.out.session_id);
    second = await scan(fixture.uploadUrl, true);
    expect(second.r.code, second.r.stderr).toBe(0);
    expect(second.r.stderr).not.toMatch(/Portal state/);
    const entry = second.doc.remediation.find((e) => e.title === title);
    expect(entry).toMatchObject({ status: 'in_progress', note: NOTE, first_seen: first.out.session_id });
    for (const other of second.doc.remediation.filter((e) => e.title !== title))
      expect(other.status).toBe('persistent');
  });

  it('with the portal unreachable: one warning, and the local history carries the triage', {
    timeout: 4 * 60_000,
  }, async () => {
    await nextSecondAfter(second.out.session_id);
    third = await scan(`http://127.0.0.1:${(deaf.address() as AddressInfo).port}/api/upload`, false);
    expect(third.r.code, third.r.stderr).toBe(0);
    const warnings = third.r.stderr.split('\n').filter((l) => /Portal state of 127\.0\.0\.1 not read/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/remediation uses the local session history/);
    expect(third.doc.remediation.find((e) => e.title === title)).toMatchObject({ status: 'in_progress', note: NOTE });
  });

  it('svc upload of a session directory written offline takes the decision made in the portal since', {
    timeout: 4 * 60_000,
  }, async () => {
    // Decided in the portal on its latest session (scan 2) after scan 3 was written offline.
    const res = await request(fixture.portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(await fixture.portal.adminToken()),
      json: {
        session_id: second.out.session_id,
        client_id: fixture.clientId,
        items: [{ title, status: 'deferred', note: 'next quarter' }],
      },
    });
    expect(res.status, res.text).toBe(200);
    const up = await runCli(SVC, ['upload', third.out.path, '--json', '--no-benchmark'], {
      env: { CONSULTATION_API_URL: fixture.uploadUrl, SVC_API_KEY: fixture.key },
      timeoutMs: 60_000,
    });
    expect(up.code, up.stderr).toBe(0);
    const local = JSON.parse(await fs.readFile(path.join(third.out.path, 'session_results.json'), 'utf8')) as Doc;
    expect(local.remediation.find((e) => e.title === title)).toMatchObject({
      status: 'deferred',
      note: 'next quarter',
    });
    const stored = await request(
      fixture.portal.url,
      'GET',
      `/api/download?session=${third.out.session_id}&client_id=${fixture.clientId}`,
      { headers: withToken(await fixture.portal.adminToken()) },
    );
    expect(stored.status).toBe(200);
    const body = (typeof stored.body === 'string' ? JSON.parse(stored.body) : stored.body) as Doc;
    expect(body.remediation.find((e) => e.title === title)).toMatchObject({ status: 'deferred', note: 'next quarter' });
  });
});
