import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  type LicenseFixture,
  type ScopedUser,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * What changed (docs/findings-of-record.md#what-changed), through a real portal on a real
 * PostgreSQL: a sequence of scans of one target, the counts per target
 * (GET /api/targets/changes) and the lists behind them (a session's findings with `change=`),
 * each listed finding's history, and scoping.
 */

type Doc = Record<string, any>;
const HOST_A = '10.8.0.1';
const HOST_B = '10.8.0.2';
interface F {
  rule: string;
  host: string;
  port: number;
  severity: string;
  title: string;
}
const FTP: F = { rule: 'ftp-anonymous', host: HOST_A, port: 21, severity: 'high', title: 'Anonymous FTP' };
const TELNET: F = { rule: 'telnet-open', host: HOST_A, port: 23, severity: 'critical', title: 'Telnet' };
const HTTP: F = { rule: 'http-no-tls', host: HOST_A, port: 80, severity: 'medium', title: 'HTTP without TLS' };
const SSH: F = { rule: 'ssh-weak-algorithms', host: HOST_B, port: 22, severity: 'low', title: 'Weak SSH' };
const fp = (f: F) => findingFingerprint({ rule_id: f.rule, host: f.host, port: f.port, protocol: 'tcp' });

function scan(sessionId: string, target: string, findings: F[], tcp = '1-65535'): Doc {
  const at = `${sessionId.slice(0, 4)}-${sessionId.slice(4, 6)}-${sessionId.slice(6, 8)}T${sessionId.slice(9, 11)}:${sessionId.slice(11, 13)}:00.000Z`;
  return {
    metadata: { session_id: sessionId, target, finished_at: at },
    findings: findings.map((f, i) => ({
      id: `f-${i}`,
      rule_id: f.rule,
      title: f.title,
      severity: f.severity,
      host: f.host,
      port: f.port,
      protocol: 'tcp',
      fingerprint: fp(f),
    })),
    remediation: findings.map((f, i) => ({
      title: f.title,
      severity: f.severity,
      host: f.host,
      finding_id: `f-${i}`,
      fingerprint: fp(f),
      status: 'new',
      note: '',
      first_seen: sessionId,
      exception_status: null,
    })),
    remediation_resolved: [],
    coverage: {
      hosts: [HOST_A, HOST_B],
      ports: { tcp },
      profile: 'quick_recon',
      tools: ['nmap'],
      source: 'svc-scan',
    },
  };
}

const none = { new: 0, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 };

describe('what changed per target and per session', () => {
  let portal: TestPortal;
  let acme: LicenseFixture;
  let other: LicenseFixture;
  let acmeUser: ScopedUser;
  let otherUser: ScopedUser;
  const target = '10.8.0.0/30';

  async function upload(key: string, doc: Doc): Promise<Doc> {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    const body = (await res.json()) as Doc;
    if (res.status !== 200) throw new Error(`upload ${res.status} ${JSON.stringify(body)}`);
    return body['findings'] as Doc;
  }
  const get = async (path: string, token?: string) =>
    http(portal.url, 'GET', path, { headers: withToken(token ?? (await portal.adminToken())) });
  const changesOf = async (token?: string) => {
    const res = await get(`/api/targets/changes?client_id=${acme.record.client_id}`, token);
    expect(res.status, res.text).toBe(200);
    const targets = (res.body as Doc)['targets'] as Doc[];
    expect(targets).toHaveLength(1);
    return targets[0]!;
  };
  /** The titles one change of a session lists, and the rows. */
  const listed = async (sessionId: string, change: string, token?: string) => {
    const res = await get(
      `/api/sessions/${sessionId}/findings?client_id=${acme.record.client_id}&change=${change}&sort=host`,
      token,
    );
    expect(res.status, res.text).toBe(200);
    return (res.body as Doc)['findings'] as Doc[];
  };
  const titles = (rows: Doc[]) => rows.map((r) => r['title']).sort();

  beforeAll(async () => {
    portal = await startTestPortal();
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    other = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('other') });
    acmeUser = await createScopedUser(portal, [acme.record.client_id]);
    otherUser = await createScopedUser(portal, [other.record.client_id]);
  });
  afterAll(async () => {
    await portal?.close();
  });

  it('counts and lists new, resolved, reopened and not-checked findings scan after scan', async () => {
    const client = acme.record.client_id;
    // First scan: everything is new, there is no scan before it.
    const s1 = '20261120_100000';
    expect(await upload(acme.key, scan(s1, target, [FTP, TELNET, HTTP]))).toEqual({ ...none, new: 3 });
    expect(await changesOf()).toEqual({
      client_id: client,
      target,
      session_id: s1,
      scanned_at: '2026-11-20T10:00:00.000Z',
      session_stored: true,
      previous_session_id: null,
      previous_scanned_at: null,
      changes: { ...none, new: 3 },
    });
    expect(titles(await listed(s1, 'new'))).toEqual(['Anonymous FTP', 'HTTP without TLS', 'Telnet']);

    // Second scan: HTTP is gone where the scan looked (resolved), two kept, SSH new.
    const s2 = '20261121_100000';
    const second = { ...none, new: 1, persistent: 2, resolved: 1 };
    expect(await upload(acme.key, scan(s2, target, [FTP, TELNET, SSH]))).toEqual(second);
    expect(await changesOf()).toMatchObject({
      session_id: s2,
      previous_session_id: s1,
      previous_scanned_at: '2026-11-20T10:00:00.000Z',
      changes: second,
    });
    const resolved = await listed(s2, 'resolved');
    expect(resolved.map((r) => [r['title'], r['status'], r['change'], r['in_scan']])).toEqual([
      ['HTTP without TLS', 'resolved', 'resolved', false],
    ]);
    expect(titles(await listed(s2, 'new'))).toEqual(['Weak SSH']);
    expect(titles(await listed(s2, 'persistent'))).toEqual(['Anonymous FTP', 'Telnet']);
    // The resolved finding's history says which scan resolved it.
    const detail = await get(`/api/sessions/${s2}/findings/${resolved[0]!['index']}?client_id=${client}`);
    expect(detail.status, detail.text).toBe(200);
    const history = (detail.body as Doc)['history'] as Doc[];
    expect(history.at(-1)).toMatchObject({ field: 'status', to: 'resolved', session_id: s2 });

    // Third scan: HTTP is back (reopened, not new).
    const s3 = '20261122_100000';
    const third = { ...none, persistent: 3, reopened: 1 };
    expect(await upload(acme.key, scan(s3, target, [FTP, TELNET, SSH, HTTP]))).toEqual(third);
    expect(await changesOf()).toMatchObject({ session_id: s3, previous_session_id: s2, changes: third });
    expect(titles(await listed(s3, 'reopened'))).toEqual(['HTTP without TLS']);
    // The second scan still says what it did then.
    expect(titles(await listed(s2, 'resolved'))).toEqual(['HTTP without TLS']);

    // A narrow scan (other ports) resolves nothing: every finding is not checked and stays open.
    const s4 = '20261123_100000';
    const fourth = { ...none, not_checked: 4 };
    expect(await upload(acme.key, scan(s4, target, [], '8000-8100'))).toEqual(fourth);
    expect(await changesOf()).toMatchObject({ session_id: s4, previous_session_id: s3, changes: fourth });
    const notChecked = await listed(s4, 'not_checked');
    expect(titles(notChecked)).toEqual(['Anonymous FTP', 'HTTP without TLS', 'Telnet', 'Weak SSH']);
    expect(notChecked.every((r) => r['status'] !== 'resolved' && r['in_scan'] === false)).toBe(true);
    expect(await listed(s4, 'resolved')).toEqual([]);

    // One target by name; an unknown one is a 404.
    const one = await get(`/api/targets/changes?client_id=${client}&target=${encodeURIComponent(target)}`);
    expect(one.status, one.text).toBe(200);
    expect((one.body as Doc)['targets']).toHaveLength(1);
    const unknown = await get(`/api/targets/changes?client_id=${client}&target=10.0.0.0%2F8`);
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Target not found' }]);
  });

  it('pages the targets by client and target, each page after the last one', async () => {
    const paged = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('paged') });
    const client = paged.record.client_id;
    const targets = ['10.9.0.0/30', '10.9.0.4/30', '10.9.0.8/30', 'db.paged.test', 'web.paged.test'];
    for (const [i, t] of targets.entries()) await upload(paged.key, scan(`2026112${i}_110000`, t, [FTP]));
    const pageOf = async (query: string) => {
      const res = await get(`/api/targets/changes?client_id=${client}${query}`);
      expect(res.status, res.text).toBe(200);
      return res.body as { targets: Doc[]; next_cursor: string | null };
    };
    const all = await pageOf('');
    expect(all.targets.map((t) => t['target'])).toEqual([...targets].sort());
    expect(all.next_cursor).toBeNull();
    const seen: string[] = [];
    const cursors: (string | null)[] = [];
    let cursor = '';
    for (let i = 0; i < 5; i++) {
      const page = await pageOf(`&limit=2${cursor === '' ? '' : `&cursor=${cursor}`}`);
      seen.push(...page.targets.map((t) => t['target'] as string));
      cursors.push(page.next_cursor);
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(all.targets.map((t) => t['target']));
    expect(cursors.map((c) => c === null)).toEqual([false, false, true]);
    // Past the last target of the client: an empty page, not a 404.
    const past = Buffer.from(JSON.stringify([client, 'zzz'])).toString('base64url');
    expect(await pageOf(`&cursor=${past}`)).toEqual({ targets: [], next_cursor: null });
    // Any cursor the portal did not write, and a page size out of range, are 400s that say what is wrong.
    for (const bad of ['x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["a"]').toString('base64url')]) {
      const res = await get(`/api/targets/changes?cursor=${bad}`);
      expect([res.status, res.body]).toEqual([
        400,
        { error: 'Invalid cursor parameter: use next_cursor of the previous page' },
      ]);
    }
    for (const limit of ['0', '1001', 'ten'])
      expect((await get(`/api/targets/changes?limit=${limit}`)).status).toBe(400);
  });

  it('shows a customer user only their clients: another client is a 404', async () => {
    // The customer user of acme sees the same counts as the admin.
    expect(await changesOf(acmeUser.token)).toMatchObject({
      session_id: '20261123_100000',
      changes: { not_checked: 4 },
    });
    expect(titles(await listed('20261122_100000', 'reopened', acmeUser.token))).toEqual(['HTTP without TLS']);
    // Another client's user: acme's target and session do not exist for them.
    const all = await get('/api/targets/changes', otherUser.token);
    expect([all.status, all.body]).toEqual([200, { targets: [], next_cursor: null }]);
    const named = await get(`/api/targets/changes?client_id=${acme.record.client_id}`, otherUser.token);
    expect([named.status, named.body]).toEqual([404, { error: 'Target not found' }]);
    const session = await get(
      `/api/sessions/20261121_100000/findings?client_id=${acme.record.client_id}&change=resolved`,
      otherUser.token,
    );
    expect(session.status).toBe(404);
    // Bad input is a 400 that says what is wrong; no credential is a 401.
    const bad = await get('/api/targets/changes?since=yesterday');
    expect(bad.status).toBe(400);
    const badClient = await get('/api/targets/changes?client_id=%20x');
    expect(badClient.status).toBe(400);
    const anonymous = await http(portal.url, 'GET', '/api/targets/changes');
    expect(anonymous.status).toBe(401);
  });
});
