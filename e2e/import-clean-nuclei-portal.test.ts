import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempHome } from '@svc/test-support/cli';
import { http as request, withToken } from '@svc/test-support/http';
import { importCli, type ImportJson } from './helpers/import-cli.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * A clean Nuclei rescan closes what it covered (docs/cli/import.md, "Coverage"), through a real
 * portal: a real result (secureCodeBox's log4shell.jsonl) is uploaded, then secureCodeBox's real
 * empty output of a run without results is imported with the `--targets` it scanned. A run that
 * covered another port leaves the finding open, not checked; one that covered its URL resolves
 * it, in the session and in the portal's findings of record.
 */

interface Doc {
  metadata: Record<string, unknown>;
  coverage: { hosts: string[]; ports: Record<string, string> };
  findings: unknown[];
  remediation_resolved: { title: string; status: string }[];
  remediation_not_checked?: { title: string; status: string }[];
}

const FIXTURES = path.resolve(import.meta.dirname, '../packages/client/tests/fixtures/imports');
const LOG4SHELL = path.join(FIXTURES, 'securecodebox-nuclei-log4shell.jsonl');
const EMPTY = path.join(FIXTURES, 'securecodebox-nuclei-empty.jsonl');
const TARGET = 'lab-log4j';
const TITLE = 'Remote code injection in Log4j';

const fixture = usePortalWithKey({ tier: 'business' });
let work: string;
beforeAll(async () => {
  work = await tempHome();
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const svc = importCli(() => ({ uploadUrl: fixture.uploadUrl, key: fixture.key, work }));

async function stored(sessionId: string): Promise<Doc> {
  const res = await request(
    fixture.portal.url,
    'GET',
    `/api/download?session=${sessionId}&file=session_results.json&client_id=${fixture.clientId}`,
    { headers: withToken(await fixture.portal.adminToken()) },
  );
  expect(res.status, res.text).toBe(200);
  return (typeof res.body === 'string' ? JSON.parse(res.body) : res.body) as Doc;
}

/** The findings API's rows of a session with the given change (new, resolved, not_checked...). */
async function changed(sessionId: string, change: string): Promise<Record<string, unknown>[]> {
  const res = await request(
    fixture.portal.url,
    'GET',
    `/api/sessions/${sessionId}/findings?client_id=${fixture.clientId}&change=${change}`,
    { headers: withToken(await fixture.portal.adminToken()) },
  );
  expect(res.status, res.text).toBe(200);
  return res.body.findings as Record<string, unknown>[];
}

describe('an empty Nuclei output is a clean run of its --targets', () => {
  it('without --targets: exit 2, naming the file; with an nmap file: --targets refused', {
    timeout: 60_000,
  }, async () => {
    const bare = await svc(['import', EMPTY]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain(
      `error: ${EMPTY} holds no Nuclei result: a run without results writes an empty file; name what it scanned with --targets (URLs, host:port or hosts) to import it as a clean run\n`,
    );
    const range = await svc(['import', EMPTY, '--targets', '10.1.6.0/24']);
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/--targets: "10\.1\.6\.0\/24" is a network range/);
    const nmap = path.join(FIXTURES, 'securecodebox-nmap-localhost.xml');
    const wrong = await svc(['import', nmap, '--targets', '127.0.0.1']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      `--targets applies to Nuclei output, which does not say what it scanned; ${nmap} is nmap`,
    );
  });

  let first: ImportJson;
  it('the real log4shell result is uploaded: one finding, new', async () => {
    const r = await svc(['import', LOG4SHELL, '--target', TARGET, '--upload']);
    expect(r.code, r.stderr).toBe(0);
    first = r.out;
    expect(first.upload?.findings).toMatchObject({ new: 1, resolved: 0 });
    expect((await changed(first.session_id, 'new')).map((f) => f['title'])).toEqual([TITLE]);
  });

  it('a clean run of another port leaves it open, not checked', async () => {
    const r = await svc(['import', EMPTY, '--targets', 'http://10.1.6.107:9090', '--target', TARGET, '--upload']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out.upload?.findings).toMatchObject({ new: 0, resolved: 0, not_checked: 1 });
    const doc = await stored(r.out.session_id);
    expect(doc.coverage).toMatchObject({ hosts: ['10.1.6.107'], ports: { tcp: '9090' }, source: 'import:nuclei' });
    expect(doc.findings).toEqual([]);
    expect(doc.remediation_resolved).toEqual([]);
    expect(doc.remediation_not_checked?.map((e) => [e.title, e.status])).toEqual([[TITLE, 'new']]);
  });

  it('a clean run of its URL resolves it, in the session and the findings of record', {
    timeout: 120_000,
  }, async () => {
    const r = await svc(['import', EMPTY, '--targets', 'http://10.1.6.107:8080', '--target', TARGET, '--upload']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('nuclei (empty): 0 records, 0 findings on 0 hosts');
    expect(r.out.upload?.findings).toMatchObject({ new: 0, persistent: 0, resolved: 1, not_checked: 0 });
    const doc = await stored(r.out.session_id);
    expect(doc.metadata).toMatchObject({
      target: TARGET,
      scan_profile: 'import:nuclei',
      source: { tool: 'nuclei', variant: 'empty', file: 'securecodebox-nuclei-empty.jsonl' },
    });
    expect(doc.coverage).toMatchObject({ hosts: ['10.1.6.107'], ports: { tcp: '8080' } });
    expect(doc.remediation_resolved.map((e) => [e.title, e.status])).toEqual([[TITLE, 'resolved']]);
    const resolved = await changed(r.out.session_id, 'resolved');
    expect(resolved.map((f) => [f['title'], f['status']])).toEqual([[TITLE, 'resolved']]);
  });
});
