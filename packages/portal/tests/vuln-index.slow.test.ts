import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VulnIndex } from '@svc/protocol';
import { importFeeds, type FeedSource } from '../src/vuln-feeds/import.ts';
import { createLicense, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { epssCsv, feedFixture, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';

/**
 * Feeds imported into the portal's database and the index served at GET /api/vuln-index
 * (docs/vuln-feeds.md): the index's exact content, idempotent re-imports, a feed imported
 * alone, a bad file changing nothing, and the conditional GET by key.
 */

let portal: TestPortal;
let license: LicenseFixture;
const NOW = new Date('2026-11-27T10:00:00.000Z');

const source = (label: string, text: string | Buffer): FeedSource => ({
  label,
  open: () => Readable.from([Buffer.from(text)]),
});

const NVD = nvdFeed([
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    description: 'ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
    cpes: [
      { criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3' },
      { criteria: 'cpe:2.3:a:openbsd:openssh:9.3:p1:*:*:*:*:*:*' },
    ],
  },
  {
    id: 'CVE-2021-41773',
    cvss: 7.5,
    description: 'Path traversal in Apache HTTP Server 2.4.49.',
    cpes: [{ criteria: 'cpe:2.3:a:apache:http_server:2.4.49:*:*:*:*:*:*:*' }],
  },
  { id: 'CVE-2024-0001', description: 'No configuration yet.' },
]);
const KEV = kevCatalog(
  [
    { cve: 'CVE-2021-41773', dateAdded: '2021-11-03', dueDate: '2021-11-17', ransomware: true },
    { cve: 'CVE-2020-0001', dateAdded: '2022-03-15', description: 'Android privilege escalation.' },
  ],
  { catalogVersion: '2026.11.26' },
);
const EPSS = epssCsv(
  [
    { cve: 'CVE-2021-41773', epss: 0.94379, percentile: 0.99969 },
    { cve: 'CVE-2023-38408', epss: 0.0123, percentile: 0.85 },
    { cve: 'CVE-2024-0001', epss: 0.0004, percentile: 0.1 },
  ],
  { scoreDate: '2026-11-26T00:00:00Z' },
);

const at = NOW.toISOString();
const EXPECTED_CONTENT = {
  format: 2,
  generated_at: at,
  sources: {
    nvd: { records: 3, imported_at: at },
    kev: { records: 2, catalog_version: '2026.11.26', imported_at: at },
    epss: { records: 3, score_date: '2026-11-26T00:00:00Z', imported_at: at },
    debian: null,
  },
  cves: [
    {
      id: 'CVE-2020-0001',
      cvss: null,
      cvss_version: null,
      severity: null,
      summary: 'Android privilege escalation.',
      kev: { date_added: '2022-03-15', due_date: '2022-03-15', known_ransomware: false },
      epss: null,
      epss_percentile: null,
    },
    {
      id: 'CVE-2021-41773',
      cvss: 7.5,
      cvss_version: '3.1',
      severity: 'high',
      summary: 'Path traversal in Apache HTTP Server 2.4.49.',
      kev: { date_added: '2021-11-03', due_date: '2021-11-17', known_ransomware: true },
      epss: 0.94379,
      epss_percentile: 0.99969,
    },
    {
      id: 'CVE-2023-38408',
      cvss: 9.8,
      cvss_version: '3.1',
      severity: 'critical',
      summary: 'ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
      kev: null,
      epss: 0.0123,
      epss_percentile: 0.85,
    },
    // No range names it, but a finding naming it is enriched with its EPSS.
    {
      id: 'CVE-2024-0001',
      cvss: null,
      cvss_version: null,
      severity: null,
      summary: 'No configuration yet.',
      kev: null,
      epss: 0.0004,
      epss_percentile: 0.1,
    },
  ],
  products: {
    'a:apache:http_server': [{ cve: 1, version: '2.4.49' }],
    'a:openbsd:openssh': [
      { cve: 2, end_excluding: '9.3' },
      { cve: 2, version: '9.3p1' },
    ],
  },
  debian: null,
};

const getIndex = (headers: Record<string, string> = withKey(license.key)) =>
  fetch(`${portal.url}/api/vuln-index`, { headers });

const count = async (table: string) =>
  (await portal.ctx.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n;

beforeAll(async () => {
  portal = await startTestPortal();
  license = await createLicense(portal);
});
afterAll(() => portal?.close());

describe('GET /api/vuln-index', () => {
  it('answers 404 with a clear message before any import, and 401 without a key', async () => {
    const res = await http(portal.url, 'GET', '/api/vuln-index', { headers: withKey(license.key) });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error:
        'No vulnerability index: the portal has no feeds imported yet (an operator runs npm run feeds:import, docs/vuln-feeds.md)',
    });
    const anonymous = await http(portal.url, 'GET', '/api/vuln-index');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: 'Unauthorized' });
  });

  it('serves the index built from the three feeds: exact content, ETag its version, 304 when unchanged', async () => {
    const report = await importFeeds(
      portal.ctx.pool,
      { nvd: [source('nvd.json.gz', gzipSync(NVD))], kev: source('kev.json', KEV), epss: source('epss.csv', EPSS) },
      () => NOW,
    );
    expect(report).toEqual({
      nvd: { files: 1, read: 3, changed: 3, total: 3 },
      kev: { records: 2, catalog_version: '2026.11.26' },
      epss: { records: 3, score_date: '2026-11-26T00:00:00Z' },
      debian: null,
      index: {
        version: expect.stringMatching(/^[0-9a-f]{64}$/),
        changed: true,
        cves: 4,
        products: 2,
        ranges: 3,
        debian_packages: 0,
        bytes: expect.any(Number),
      },
    });
    const res = await getIndex({ ...withKey(license.key), 'accept-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const index = (await res.json()) as VulnIndex;
    expect(res.headers.get('etag')).toBe(`"${report.index.version}"`);
    expect(index).toEqual({ ...EXPECTED_CONTENT, version: report.index.version });

    const again = await getIndex({ ...withKey(license.key), 'if-none-match': `"${report.index.version}"` });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(`"${report.index.version}"`);
    const stale = await getIndex({ ...withKey(license.key), 'if-none-match': '"0000"' });
    expect(stale.status).toBe(200);
  });

  it('sends plain JSON to a caller that takes no gzip, and refuses a wrong key', async () => {
    const res = await http(portal.url, 'GET', '/api/vuln-index', {
      headers: { ...withKey(license.key), 'accept-encoding': 'identity' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(res.body).toMatchObject({ format: 2, cves: EXPECTED_CONTENT.cves });
    const wrong = await http(portal.url, 'GET', '/api/vuln-index', { headers: withKey('svc_pro_wrongwrongwrong') });
    expect(wrong.status).toBe(403);
  });

  it('re-importing the same feeds changes nothing: same version, same rows', async () => {
    const before = (await portal.ctx.pool.query('SELECT version FROM vuln_indexes ORDER BY seq')).rows;
    const report = await importFeeds(
      portal.ctx.pool,
      { nvd: [source('nvd.json', NVD)], kev: source('kev.json', KEV), epss: source('epss.csv', gzipSync(EPSS)) },
      () => new Date('2026-11-28T10:00:00.000Z'),
    );
    expect(report.index.changed).toBe(false);
    expect(report.nvd).toEqual({ files: 1, read: 3, changed: 0, total: 3 });
    expect((await portal.ctx.pool.query('SELECT version FROM vuln_indexes ORDER BY seq')).rows).toEqual(before);
    expect([
      await count('vuln_nvd_cves'),
      await count('vuln_nvd_ranges'),
      await count('vuln_kev'),
      await count('vuln_epss'),
    ]).toEqual([3, 3, 2, 3]);
  });

  it('a KEV catalogue imported alone updates the index and leaves the NVD records as they were', async () => {
    const nvdBefore = (await portal.ctx.pool.query('SELECT * FROM vuln_nvd_ranges ORDER BY seq')).rows;
    const sourceBefore = (await portal.ctx.pool.query(`SELECT * FROM vuln_feed_sources WHERE feed = 'nvd'`)).rows;
    const later = new Date('2026-11-29T10:00:00.000Z');
    const report = await importFeeds(
      portal.ctx.pool,
      {
        kev: source(
          'kev.json',
          kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2026-11-28' }], { catalogVersion: '2026.11.28' }),
        ),
      },
      () => later,
    );
    expect(report).toMatchObject({
      nvd: null,
      epss: null,
      kev: { records: 1, catalog_version: '2026.11.28' },
      index: { changed: true, cves: 3 },
    });
    expect((await portal.ctx.pool.query('SELECT * FROM vuln_nvd_ranges ORDER BY seq')).rows).toEqual(nvdBefore);
    expect((await portal.ctx.pool.query(`SELECT * FROM vuln_feed_sources WHERE feed = 'nvd'`)).rows).toEqual(
      sourceBefore,
    );

    const index = (await (await getIndex()).json()) as VulnIndex;
    expect(index.version).toBe(report.index.version);
    expect(index.sources.kev).toEqual({ records: 1, catalog_version: '2026.11.28', imported_at: later.toISOString() });
    // The identical re-import above stored no index, but it was an import: the NVD source says when.
    expect(index.sources.nvd).toEqual({ records: 3, imported_at: '2026-11-28T10:00:00.000Z' });
    expect(index.cves.map((c) => [c.id, c.kev])).toEqual([
      ['CVE-2021-41773', null],
      ['CVE-2023-38408', { date_added: '2026-11-28', due_date: '2026-11-28', known_ransomware: false }],
      ['CVE-2024-0001', null],
    ]);
    expect(index.products).toEqual({
      'a:apache:http_server': [{ cve: 0, version: '2.4.49' }],
      'a:openbsd:openssh': [
        { cve: 1, end_excluding: '9.3' },
        { cve: 1, version: '9.3p1' },
      ],
    });
  });

  it('a bad file changes nothing of its feed, and the connection stays usable for the next import', async () => {
    const version = (await getIndex()).headers.get('etag');
    const broken = `${nvdFeed([{ id: 'CVE-2025-0001', cvss: 5, cpes: [{ criteria: 'cpe:2.3:a:x:y:1.0:*:*:*:*:*:*:*' }] }]).slice(0, -3)}, garbage`;
    await expect(importFeeds(portal.ctx.pool, { nvd: [source('bad.json', broken)] }, () => NOW)).rejects.toThrow(
      /^bad\.json: not valid JSON/,
    );
    expect(await count('vuln_nvd_cves')).toBe(3);
    expect((await getIndex()).headers.get('etag')).toBe(version);
    // NVD records replace what was held of the same CVE; the modified file comes after the yearly one.
    const update = nvdFeed([
      {
        id: 'CVE-2021-41773',
        cvss: 9.8,
        description: 'Updated.',
        cpes: [{ criteria: 'cpe:2.3:a:apache:http_server:2.4.50:*:*:*:*:*:*:*' }],
      },
    ]);
    const report = await importFeeds(
      portal.ctx.pool,
      { nvd: [source('2021.json', NVD), source('modified.json', update)] },
      () => NOW,
    );
    expect(report.nvd).toEqual({ files: 2, read: 4, changed: 1, total: 3 });
    const index = (await (await getIndex()).json()) as VulnIndex;
    expect(index.cves.find((c) => c.id === 'CVE-2021-41773')).toMatchObject({
      cvss: 9.8,
      severity: 'critical',
      summary: 'Updated.',
    });
    expect(index.products['a:apache:http_server']).toEqual([{ cve: 0, version: '2.4.50' }]);
  });

  it('a refused file after an imported feed: that feed stays imported and the index is built from it', async () => {
    const kev = kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2026-11-30' }]);
    await expect(
      importFeeds(portal.ctx.pool, { kev: source('kev.json', kev), epss: source('epss.csv', 'cve,epss\n') }, () => NOW),
    ).rejects.toThrow('epss.csv: line 1: expected the header "cve,epss,percentile"; not an EPSS CSV');
    const index = (await (await getIndex()).json()) as VulnIndex;
    expect(index.cves.find((c) => c.id === 'CVE-2023-38408')?.kev?.date_added).toBe('2026-11-30');
    expect(index.sources.epss?.records).toBe(3);
  });

  it('keeps the last three indexes, the newest served', async () => {
    for (const day of ['2026-12-01', '2026-12-02', '2026-12-03'])
      await importFeeds(
        portal.ctx.pool,
        { kev: source('kev.json', kevCatalog([{ cve: 'CVE-2021-41773', dateAdded: day }])) },
        () => NOW,
      );
    const { rows } = await portal.ctx.pool.query<{ version: string; body: Buffer }>(
      'SELECT version, body FROM vuln_indexes ORDER BY seq',
    );
    expect(rows).toHaveLength(3);
    const newest = rows[2]!;
    expect((await getIndex()).headers.get('etag')).toBe(`"${newest.version}"`);
    expect((JSON.parse(gunzipSync(newest.body).toString('utf8')) as VulnIndex).cves[0]?.kev?.date_added).toBe(
      '2026-12-03',
    );
  });
});

describe('POST /api/vuln-feeds/{feed}', () => {
  const post = (feed: string, body: string | Buffer | undefined, headers: Record<string, string>) =>
    fetch(`${portal.url}/api/vuln-feeds/${feed}`, { method: 'POST', headers, ...(body === undefined ? {} : { body }) });

  it('imports a feed file an admin sends (gzip allowed), audits it, and the index serves it', async () => {
    const token = await portal.adminToken();
    const kev = gzipSync(
      kevCatalog([{ cve: 'CVE-2021-41773', dateAdded: '2027-01-05', ransomware: true }], {
        catalogVersion: '2027.01.05',
      }),
    );
    const res = await post('kev', kev, { 'x-identity-token': token, 'content-type': 'application/gzip' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { index: { version: string } };
    expect(body).toEqual({
      nvd: null,
      kev: { records: 1, catalog_version: '2027.01.05' },
      epss: null,
      debian: null,
      index: {
        version: expect.stringMatching(/^[0-9a-f]{64}$/),
        changed: true,
        cves: 3,
        products: 2,
        ranges: 3,
        debian_packages: 0,
        bytes: expect.any(Number),
      },
    });
    expect((await getIndex()).headers.get('etag')).toBe(`"${body.index.version}"`);
    const { rows } = await portal.ctx.pool.query(
      `SELECT actor, data FROM audit_events WHERE event_type = 'vuln_feed_imported' ORDER BY id DESC LIMIT 1`,
    );
    expect(rows).toEqual([
      {
        actor: expect.any(String),
        data: { feed: 'kev', bytes: kev.length, records: 1, index_version: body.index.version, index_changed: true },
      },
    ]);
  });

  it("imports the Debian tracker's JSON an admin sends, and the index carries its fixed versions", async () => {
    const token = await portal.adminToken();
    const tracker = gzipSync(await feedFixture('debian/vunnel-debian.json'));
    const res = await post('debian', tracker, { 'x-identity-token': token, 'content-type': 'application/gzip' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { debian: unknown; index: { version: string; debian_packages: number } };
    // chromium-browser's one entry has no release: no statement, so no package in the index.
    expect(body.debian).toEqual({ packages: 5, cves: 5, statements: 21 });
    expect(body.index.debian_packages).toBe(4);
    const index = (await (await getIndex()).json()) as VulnIndex;
    expect(index.version).toBe(body.index.version);
    expect(index.sources.debian).toEqual({ records: 5, imported_at: expect.any(String) });
    const chromium = index.debian?.['chromium'];
    expect(chromium?.releases['bullseye']).toEqual(['90.0.4430.212-1', '98.0.4758.102-1~deb11u1']);
    expect(chromium?.cves.map((c) => [index.cves[c.cve]?.id, c.fixed])).toEqual([
      [
        'CVE-2022-0456',
        {
          bookworm: '98.0.4758.80-1',
          bullseye: '98.0.4758.80-1~deb11u1',
          buster: null,
          sid: '98.0.4758.80-1',
          stretch: null,
        },
      ],
    ]);
    expect(index.debian?.['prototypejs']?.cves.find((c) => index.cves[c.cve]?.id === 'CVE-2007-2383')).toEqual({
      cve: expect.any(Number),
      fixed: { buster: '0', jessie: '0', sid: '0', stretch: '0' },
      unimportant: ['buster', 'jessie', 'sid', 'stretch'],
    });
    // A CVE only the tracker knows is in the index, its summary the tracker's description.
    expect(index.cves.find((c) => c.id === 'CVE-2013-1444')?.summary).toMatch(/^A certain Debian patch for txt2man/);
    const wrong = await post('debian', KEV, { 'x-identity-token': token, 'content-type': 'application/json' });
    expect([wrong.status, await wrong.json()]).toEqual([
      400,
      {
        error:
          'debian feed: "title" is not a package\'s CVE entries: not the Debian security tracker\'s JSON (https://security-tracker.debian.org/tracker/data/json)',
      },
    ]);
    expect((await getIndex()).headers.get('etag')).toBe(`"${body.index.version}"`);
  });

  it('refuses a bad file (400, nothing changed), an unknown feed, no body, and anyone but an admin', async () => {
    const token = await portal.adminToken();
    const before = (await getIndex()).headers.get('etag');
    const bad = await post('epss', 'cve,score\n', { 'x-identity-token': token, 'content-type': 'text/csv' });
    expect([bad.status, await bad.json()]).toEqual([
      400,
      { error: 'epss feed: line 1: expected the header "cve,epss,percentile"; not an EPSS CSV' },
    ]);
    expect((await getIndex()).headers.get('etag')).toBe(before);
    const unknown = await post('osv', '{}', { 'x-identity-token': token, 'content-type': 'application/json' });
    expect(unknown.status).toBe(400);
    const empty = await post('kev', undefined, { 'x-identity-token': token });
    expect([empty.status, await empty.json()]).toEqual([
      400,
      { error: 'Missing body: send the CISA KEV catalogue (JSON) file (gzip allowed)' },
    ]);
    const byKey = await post('kev', KEV, { ...withKey(license.key), 'content-type': 'application/json' });
    expect(byKey.status).toBe(401);
  });

  it('refuses a file over the route limit with 413', async () => {
    const token = await portal.adminToken();
    const res = await post('kev', Buffer.alloc(16 * 1024 ** 2 + 1, 0x20), {
      'x-identity-token': token,
      'content-type': 'application/json',
    });
    expect([res.status, await res.json()]).toEqual([
      413,
      {
        error: "CISA KEV catalogue (JSON) larger than 16 MB: import it with npm run feeds:import on the portal's host",
      },
    ]);
  });
});
