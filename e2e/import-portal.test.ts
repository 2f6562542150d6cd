import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempHome } from '@svc/test-support/cli';
import {
  ANON_FTP,
  FIRST_SCAN,
  SCAN_END,
  SCAN_INFO,
  SCAN_START,
  TERRAPIN,
  TLS10,
  withOids,
  withTemplates,
} from '@svc/test-support/foreign-items';
import { type ForeignItem, nessusV2, nucleiJsonl, openvasReport } from '@svc/test-support/foreign-reports';
import { http as request, withToken } from '@svc/test-support/http';
import { importCli, type ImportJson } from './helpers/import-cli.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * `svc import` end to end against a real portal: each foreign format becomes an uploaded session
 * with its findings and a report; a second import of the same target marks the finding that is
 * gone resolved where the file says its scan looked (docs/cli/import.md#coverage: a Nessus policy
 * scanning every port) and not checked where it does not (a Nuclei file covers only what its
 * results name), the one that appeared new, and keeps the triage made in the portal on the first
 * (PATCH /api/remediation-update). `svc upload <foreign file>` imports, then uploads.
 */

interface Doc {
  metadata: Record<string, unknown>;
  findings: { rule_id: string; title: string; severity: string }[];
  remediation: { title: string; status: string; note: string; first_seen: string }[];
  remediation_resolved: { title: string; status: string }[];
  remediation_not_checked?: { title: string; status: string; first_seen: string }[];
}

const fixture = usePortalWithKey({ tier: 'business' });
let work: string;

beforeAll(async () => {
  work = await tempHome();
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const SMB_SIGNING: ForeignItem = {
  host: '192.0.2.11',
  port: 445,
  protocol: 'tcp',
  service: 'cifs',
  id: '57608',
  name: 'SMB Signing not required',
  severity: 'medium',
  cvss: 5.3,
  description: 'Signing is not required on the remote SMB server.',
  solution: 'Enforce message signing in the host configuration.',
  output: 'Message signing is disabled.',
};
/** The second scan: the anonymous FTP finding is gone, SMB signing is new. */
const SECOND_SCAN: readonly ForeignItem[] = [TLS10, TERRAPIN, SMB_SIGNING, SCAN_INFO];
const NOTE = 'OPS-77: ssh upgrade planned';
const DAY = 86_400_000;

/** The policy of a Nessus scan of every port (`port_range` all), which the import takes as its coverage. */
const allPorts = (nessus: string) =>
  nessus.replace(
    '</ServerPreferences>',
    '<preference><name>port_range</name><value>all</value></preference>\n</ServerPreferences>',
  );

const svc = importCli(() => ({ uploadUrl: fixture.uploadUrl, key: fixture.key, work }));

async function file(name: string, text: string): Promise<string> {
  const p = path.join(work, name);
  await fs.writeFile(p, text);
  return p;
}

async function stored(sessionId: string, name = 'session_results.json') {
  return request(
    fixture.portal.url,
    'GET',
    `/api/download?session=${sessionId}&file=${name}&client_id=${fixture.clientId}`,
    { headers: withToken(await fixture.portal.adminToken()) },
  );
}
const docOf = (body: unknown) => (typeof body === 'string' ? JSON.parse(body) : body) as Doc;

/**
 * Import 1 → triage in the portal → import 2 of the same target: the finding gone is resolved when
 * import 2 covers its port (`gone: 'resolved'`), else still open and not checked; the one that
 * appeared is new; the triage is kept.
 */
function chain(
  format: 'nessus' | 'nuclei',
  write: (items: readonly ForeignItem[], start: Date) => string,
  ruleOf: (i: ForeignItem) => string,
  gone: 'resolved' | 'not_checked',
) {
  let first: ImportJson;
  it(`${format}: import 1 is uploaded with its findings and a report`, async () => {
    const r = await svc([
      'import',
      await file(`${format}-1`, write(FIRST_SCAN, SCAN_START)),
      '--target',
      `lab-${format}`,
      '--upload',
    ]);
    expect(r.code, r.stderr).toBe(0);
    first = r.out;
    expect(first.format).toBe(format);
    expect(first.upload?.session_id).toBe(first.session_id);
    const res = await stored(first.session_id);
    expect(res.status, res.text).toBe(200);
    const doc = docOf(res.body);
    expect(doc.findings.map((f) => f.rule_id)).toEqual(FIRST_SCAN.map(ruleOf));
    expect(doc.metadata).toMatchObject({
      target: `lab-${format}`,
      scan_profile: `import:${format}`,
      started_at: SCAN_START.toISOString(),
      source: { tool: format, file: `${format}-1` },
    });
    expect(doc.remediation.map((e) => e.status)).toEqual(['new', 'new', 'new', 'new']);
    const report = await stored(first.session_id, 'report.html');
    expect(report.status).toBe(200);
    expect(report.text).toContain(ANON_FTP.name);
    const triage = await request(fixture.portal.url, 'PATCH', '/api/remediation-update', {
      headers: withToken(await fixture.portal.adminToken()),
      json: {
        session_id: first.session_id,
        client_id: fixture.clientId,
        items: [{ title: TERRAPIN.name, status: 'in_progress', note: NOTE }],
      },
    });
    expect(triage.status, triage.text).toBe(200);
  });

  it(`${format}: import 2 of the same target marks ${gone === 'resolved' ? 'resolved' : 'not checked'} and new, and keeps the portal's triage`, {
    timeout: 120_000,
  }, async () => {
    const second = await svc([
      'import',
      await file(`${format}-2`, write(SECOND_SCAN, new Date(SCAN_START.getTime() + DAY))),
      '--target',
      `lab-${format}`,
      '--upload',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).not.toMatch(/Portal state/);
    const doc = docOf((await stored(second.out.session_id)).body);
    const status = Object.fromEntries(doc.remediation.map((e) => [e.title, e.status]));
    expect(status).toEqual({
      [TLS10.name]: 'persistent',
      [TERRAPIN.name]: 'in_progress',
      [SMB_SIGNING.name]: 'new',
      [SCAN_INFO.name]: 'persistent',
    });
    if (gone === 'resolved') {
      expect(doc.remediation_resolved.map((e) => [e.title, e.status])).toEqual([[ANON_FTP.name, 'resolved']]);
      expect(doc.remediation_not_checked ?? []).toEqual([]);
    } else {
      // Its port is not in what import 2 covers: still open as it was, in none of the session's numbers.
      expect(doc.remediation_resolved).toEqual([]);
      expect(doc.remediation_not_checked?.map((e) => [e.title, e.status, e.first_seen])).toEqual([
        [ANON_FTP.name, 'new', first.session_id],
      ]);
    }
    expect(doc.remediation.find((e) => e.title === TERRAPIN.name)).toMatchObject({
      note: NOTE,
      first_seen: first.session_id,
    });
  });
}

describe('svc import to a real portal', () => {
  chain(
    'nessus',
    (items, start) => allPorts(nessusV2({ start, end: new Date(start.getTime() + 20 * 60_000), items })),
    (i) => `nessus:${i.id}`,
    'resolved',
  );
  chain(
    'nuclei',
    (items, start) => nucleiJsonl({ start, end: start, items: withTemplates(items) }),
    (i) => `nuclei:svc-test-${i.id}`,
    'not_checked',
  );

  it('svc upload of a Greenbone report imports it, then uploads it with a report', async () => {
    const gvm = await file(
      'gvm.xml',
      openvasReport({ start: SCAN_START, end: SCAN_END, items: withOids(FIRST_SCAN), target: 'Lab hosts' }),
    );
    const r = await svc(['upload', gvm]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.out).toMatchObject({ format: 'openvas', upload: { session_id: r.out.session_id } });
    const doc = docOf((await stored(r.out.session_id)).body);
    expect(doc.metadata).toMatchObject({
      target: 'Lab hosts',
      source: { tool: 'openvas', version: '22.4', file: 'gvm.xml' },
    });
    expect(doc.findings).toHaveLength(4);
    expect((await stored(r.out.session_id, 'report.html')).status).toBe(200);
  });

  it('nmap XML from a scan run elsewhere is uploaded with the findings svc scan gives', {
    timeout: 120_000,
  }, async () => {
    const nmap = path.resolve(import.meta.dirname, '../packages/client/tests/fixtures/nmap/real-lab-odd-ports.xml');
    const r = await svc(['import', nmap, '--upload']);
    expect(r.code, r.stderr).toBe(0);
    const doc = docOf((await stored(r.out.session_id)).body);
    expect(doc.metadata).toMatchObject({ target: '127.0.0.1', source: { tool: 'nmap', version: '7.93' } });
    expect(doc.findings.map((f) => f.rule_id)).toContain('tls-deprecated-protocol');
    expect((await stored(r.out.session_id, 'report.html')).status).toBe(200);
  });

  it('without --upload, a target the portal has never seen: the previous local import is the prior', {
    timeout: 120_000,
  }, async () => {
    const sessions = path.join(work, 'offline-sessions');
    const offline = async (name: string, items: readonly ForeignItem[]) => {
      // The portal only resolves the license tier (remediation needs one); it holds nothing of this target.
      const { code, out, stderr } = await svc(
        ['import', await file(name, nessusV2({ start: SCAN_START, end: SCAN_END, items }))],
        { sessionsDir: sessions },
      );
      expect(code, stderr).toBe(0);
      return JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as Doc;
    };
    const first = await offline('offline-1.nessus', FIRST_SCAN);
    const doc = await offline('offline-2.nessus', SECOND_SCAN);
    // No --target: the policy's TARGET.
    expect(doc.metadata['target']).toBe('192.0.2.10,192.0.2.11');
    expect(doc.metadata['session_id']).not.toBe(first.metadata['session_id']);
    // The policy states no port range (Nessus's default list is not in the file): the FTP port is
    // not known to be scanned by import 2, so the prior's finding there stays open, not checked.
    expect(doc.remediation_resolved).toEqual([]);
    expect(doc.remediation_not_checked?.map((e) => [e.title, e.status, e.first_seen])).toEqual([
      [ANON_FTP.name, 'new', first.metadata['session_id']],
    ]);
    expect(doc.remediation.find((e) => e.title === SMB_SIGNING.name)?.status).toBe('new');
  });

  it('refused input: exit 1 with the reason; a file of no known format: exit 2', async () => {
    const lol = await file(
      'lol.nessus',
      '<!DOCTYPE NessusClientData_v2 [<!ENTITY a "a">]><NessusClientData_v2>&a;</NessusClientData_v2>',
    );
    const refused = await svc(['import', lol]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Refused: the XML declares a document type with entities or an external DTD/);
    const big = await file('big.jsonl', `${'x'.repeat(2 * 1024 * 1024)}\n`);
    const tooBig = await svc(['import', big, '--max-size', '1']);
    expect(tooBig.code).toBe(1);
    expect(tooBig.stderr).toContain(`${big} is 2097153 bytes, over the import limit of 1 MiB (--max-size)`);
    const other = await file('notes.txt', 'hello\n');
    const unknown = await svc(['import', other]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/is not a format svc imports/);
    const badFormat = await svc(['import', other, '--format', 'csv']);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toMatch(/unknown format "csv": use auto, nmap, nessus, openvas, nuclei/);
  });
});
