import { describe, expect, it } from 'vitest';
import { vulnIndex } from '@svc/test-support/vuln-index';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { enrichFindings } from '../src/pipeline/vuln-enrich.ts';
import type { NmapHost, NmapService } from '../src/scanner/parse/types.ts';
import { detectFindings } from '../src/scanner/rules/index.ts';
import { vulnFeed } from '../src/scanner/rules/vuln-feed.ts';
import { compareVersions } from '../src/cve-match/compare.ts';
import { inVulnRange, matchVulnIndex, vulnLookup } from '../src/cve-match/vuln-index-match.ts';

const svc = (s: Partial<NmapService>): NmapService => ({ name: 'ssh', cpes: [], ...s });

function host(...services: NmapService[]): NmapHost {
  return {
    status: { state: 'up' },
    addresses: [{ addr: '10.0.0.7', addrtype: 'ipv4' }],
    hostnames: [],
    ports: services.map((service, i) => ({ protocol: 'tcp', portid: 2200 + i, state: 'open', service, scripts: [] })),
    os: [],
    hostscripts: [],
  };
}

const OPENSSH = 'a:openbsd:openssh';
const INDEX = vulnIndex([
  {
    id: 'CVE-2024-6387',
    cvss: 8.1,
    summary: 'Signal handler race in sshd.',
    kev: '2025-01-10',
    epss: 0.42,
    epss_percentile: 0.97,
    affects: { [OPENSSH]: [{ start_including: '8.5p1', end_excluding: '9.8p1' }] },
  },
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    epss: 0.05,
    epss_percentile: 0.9,
    affects: { [OPENSSH]: [{ end_excluding: '9.3p2' }] },
  },
  { id: 'CVE-2016-0777', cvss: 6.5, affects: { [OPENSSH]: [{ start_excluding: '5.3', end_including: '7.1p1' }] } },
  { id: 'CVE-2099-0001', cvss: null, affects: { [OPENSSH]: [{ version: '9.0p1' }] } },
  {
    id: 'CVE-2020-8617',
    cvss: 7.5,
    kev: '2022-03-25',
    affects: { 'a:isc:bind': [{ start_including: '9.16.0', end_excluding: '9.16.3' }] },
  },
]);

describe('version ranges with NVD bounds', () => {
  it.each([
    [{ version: '9.0p1' }, '9.0p1', true],
    [{ version: '9.0p1' }, '9.0', false],
    [{ start_including: '8.5p1' }, '8.5p1', true],
    [{ start_including: '8.5p1' }, '8.4p1', false],
    [{ start_excluding: '5.3' }, '5.3', false],
    [{ start_excluding: '5.3' }, '5.4', true],
    [{ end_including: '7.1p1' }, '7.1p1', true],
    [{ end_including: '7.1p1' }, '7.1p2', false],
    [{ end_excluding: '9.8p1' }, '9.8p1', false],
    [{ end_excluding: '9.8p1' }, '9.7p1', true],
    [{ start_including: '8.5p1', end_excluding: '9.8p1' }, '9.10p1', false],
    [{}, '1.0', true],
  ])('%j holds %s: %s', (range, version, expected) => {
    expect(inVulnRange(version, { cve: 0, ...range })).toBe(expected);
  });
});

describe('matching services against the index', () => {
  const lookup = vulnLookup(INDEX);
  const ids = (s: NmapService) => matchVulnIndex(s, lookup).map((m) => m.cve.id);

  it('matches by the CPE product key and the reported version, each CVE once', () => {
    const s = svc({
      product: 'OpenSSH',
      version: '9.0p1',
      cpes: ['cpe:/a:openbsd:openssh:9.0p1', 'cpe:/a:openbsd:openssh'],
    });
    expect(ids(s)).toEqual(['CVE-2024-6387', 'CVE-2023-38408', 'CVE-2099-0001']);
    expect(ids(svc({ version: '7.1p1', cpes: ['cpe:/a:openbsd:openssh:7.1p1'] }))).toEqual([
      'CVE-2023-38408',
      'CVE-2016-0777',
    ]);
    expect(ids(svc({ version: '9.8p1', cpes: ['cpe:/a:openbsd:openssh:9.8p1'] }))).toEqual([]);
  });

  it('takes the version from the CPE when the banner has none', () => {
    expect(ids(svc({ cpes: ['cpe:/a:isc:bind:9.16.1'] }))).toEqual(['CVE-2020-8617']);
  });

  it('needs a CPE: a product name alone, another vendor or no version matches nothing', () => {
    expect(ids(svc({ product: 'OpenSSH', version: '9.0p1' }))).toEqual([]);
    expect(ids(svc({ version: '9.0p1', cpes: ['cpe:/a:someone:openssh:9.0p1'] }))).toEqual([]);
    expect(ids(svc({ cpes: ['cpe:/a:openbsd:openssh'] }))).toEqual([]);
    expect(ids(svc({ version: '9.6.0 or later', cpes: ['cpe:/a:openbsd:openssh'] }))).toEqual([]);
  });

  it('builds one lookup per index', () => {
    expect(vulnLookup(INDEX)).toBe(lookup);
  });

  it("finds NVD's records of a product nmap names under another vendor (Redis, nginx)", () => {
    const named = vulnIndex([
      {
        id: 'CVE-2024-31449',
        cvss: 7,
        affects: { 'a:redis:redis': [{ start_including: '7.0.0', end_excluding: '7.2.6' }] },
      },
      {
        id: 'CVE-2021-23017',
        cvss: 7.7,
        affects: { 'a:f5:nginx': [{ start_including: '0.6.18', end_excluding: '1.20.1' }] },
      },
      {
        id: 'CVE-2013-2028',
        cvss: 7.5,
        affects: { 'a:nginx:nginx': [{ start_including: '1.3.9', end_including: '1.4.0' }] },
      },
    ]);
    const at = (service: NmapService) => matchVulnIndex(service, vulnLookup(named)).map((m) => m.cve.id);
    expect(at(svc({ name: 'redis', version: '7.0.15', cpes: ['cpe:/a:redislabs:redis:7.0.15'] }))).toEqual([
      'CVE-2024-31449',
    ]);
    expect(at(svc({ name: 'http', version: '1.4.0', cpes: ['cpe:/a:igor_sysoev:nginx:1.4.0'] }))).toEqual([
      'CVE-2021-23017',
      'CVE-2013-2028',
    ]);
    expect(at(svc({ name: 'redis', version: '7.2.6', cpes: ['cpe:/a:redislabs:redis:7.2.6'] }))).toEqual([]);
  });
});

describe('findings from the index', () => {
  const ctx = { scanTime: new Date('2026-11-27T10:00:00Z'), vulnIndex: INDEX };

  it('gives one potential finding per service and CVE with CVSS, KEV and EPSS', () => {
    const found = vulnFeed.evaluate(
      host(svc({ product: 'ISC BIND', version: '9.16.1', name: 'domain', cpes: ['cpe:/a:isc:bind:9.16.1'] })),
      ctx,
    );
    expect(found).toEqual([
      {
        rule_id: 'cve:CVE-2020-8617',
        title: 'ISC BIND 9.16.1: CVE-2020-8617 (potential)',
        severity: 'high',
        category: 'vulnerable_software',
        host: '10.0.0.7',
        port: 2200,
        protocol: 'tcp',
        service: 'domain',
        evidence:
          'tcp/2200 domain (ISC BIND 9.16.1); version 9.16.1 of cpe:/a:isc:bind:9.16.1 is in an affected ' +
          'range of CVE-2020-8617; potential: matched on the reported version only (NVD as imported 2026-11-26), a ' +
          'distribution may have backported the fix',
        description: 'ISC BIND: Summary of CVE-2020-8617.',
        remediation:
          "Upgrade ISC BIND to a release the vendor lists as fixed for CVE-2020-8617, or to the distribution's fixed package; if the distribution backported the fix, record a risk exception with its advisory.",
        references: { cve: ['CVE-2020-8617'], urls: ['https://nvd.nist.gov/vuln/detail/CVE-2020-8617'] },
        cvss: 7.5,
        match: { kind: 'version_range', confidence: 'potential', source: 'NVD' },
        kev: true,
        kev_date_added: '2022-03-25',
      },
    ]);
  });

  it('rates a CVE without a CVSS score medium and says so', () => {
    const found = vulnFeed.evaluate(
      host(svc({ product: 'OpenSSH', version: '9.0p1', cpes: ['cpe:/a:someone:x', 'cpe:/a:openbsd:openssh:9.0p1'] })),
      {
        ...ctx,
        vulnIndex: vulnIndex([{ id: 'CVE-2099-0001', cvss: null, affects: { [OPENSSH]: [{ version: '9.0p1' }] } }]),
      },
    );
    expect(found.map((f) => [f.severity, f.cvss, f.kev])).toEqual([['medium', undefined, false]]);
    expect(found[0]?.evidence).toMatch(/; NVD gives no CVSS score yet \(rated medium\)$/);
  });

  it('leaves a CVE the hand table reports on the same service to the table, enriched from the index', () => {
    const found = detectFindings(
      [host(svc({ product: 'OpenSSH', version: '9.2p1', cpes: ['cpe:/a:openbsd:openssh:9.2p1'] }))],
      ctx,
    );
    expect(found.map((f) => [f.rule_id, f.references?.cve])).toEqual([
      ['outdated-software:openssh-regresshion', ['CVE-2024-6387']],
      ['outdated-software:openssh-terrapin', ['CVE-2023-48795']],
      ['cve:CVE-2023-38408', ['CVE-2023-38408']],
    ]);
    const hand = enrichFindings(found, INDEX)[0];
    // The table's own CVSS stays; KEV and EPSS come from the index.
    expect(hand).toMatchObject({
      cvss: 8.1,
      kev: true,
      kev_date_added: '2025-01-10',
      epss: 0.42,
      epss_percentile: 0.97,
    });
  });

  it('matches nothing without an index', () => {
    const s = svc({ product: 'ISC BIND', version: '9.16.1', cpes: ['cpe:/a:isc:bind:9.16.1'] });
    expect(vulnFeed.evaluate(host(s), { scanTime: ctx.scanTime })).toEqual([]);
    expect(vulnFeed.evaluate(host(s), { scanTime: ctx.scanTime, vulnIndex: null })).toEqual([]);
  });
});

describe('enrichment of findings from any source', () => {
  const imported: ScanFinding[] = [
    {
      rule_id: 'nessus:1',
      title: 'Two CVEs',
      severity: 'high',
      references: { cve: ['CVE-2023-38408', 'cve-2024-6387'] },
    },
    { rule_id: 'old', title: 'Older single cve field', severity: 'low', cve: 'CVE-2016-0777', cvss: 4 },
    { rule_id: 'none', title: 'Unknown CVE', severity: 'low', references: { cve: ['CVE-1999-0001'] } },
    { rule_id: 'plain', title: 'No CVE', severity: 'low' },
  ];

  it('fills CVSS when absent, KEV when any CVE is known exploited, the highest EPSS', () => {
    expect(enrichFindings(imported, INDEX)).toEqual([
      { ...imported[0], cvss: 9.8, kev: true, kev_date_added: '2025-01-10', epss: 0.42, epss_percentile: 0.97 },
      { ...imported[1], kev: false },
      imported[2],
      imported[3],
    ]);
  });

  it('leaves findings unchanged without an index', () => {
    expect(enrichFindings(imported, null)).toEqual(imported);
  });
});

/** compareVersions as it was written before versions were split into keys: the reference. */
function referenceCompare(a: string, b: string): number {
  const order = (c: string | undefined) =>
    c === undefined || /[0-9]/.test(c)
      ? 0
      : c === '~'
        ? -1
        : /[A-Za-z]/.test(c)
          ? c.charCodeAt(0)
          : c.charCodeAt(0) + 256;
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    while ((i < a.length && !/[0-9]/.test(a[i] ?? '')) || (j < b.length && !/[0-9]/.test(b[j] ?? ''))) {
      const diff =
        order(i < a.length && !/[0-9]/.test(a[i] ?? '') ? a[i] : undefined) -
        order(j < b.length && !/[0-9]/.test(b[j] ?? '') ? b[j] : undefined);
      if (diff !== 0) return diff;
      i++;
      j++;
    }
    let an = '';
    let bn = '';
    while (i < a.length && /[0-9]/.test(a[i] ?? '')) an += a[i++];
    while (j < b.length && /[0-9]/.test(b[j] ?? '')) bn += b[j++];
    const na = BigInt(an === '' ? '0' : an);
    const nb = BigInt(bn === '' ? '0' : bn);
    if (na !== nb) return na < nb ? -1 : 1;
  }
  return 0;
}

describe('versions compared on keys', () => {
  it('orders every pair as the character-by-character comparison did', () => {
    // A seeded walk over short versions of the characters that matter: digits, zeros, letters, ~, . and -.
    let seed = 26;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const ALPHABET = '0012789.~-+apP';
    const version = () =>
      Array.from({ length: 1 + Math.floor(next() * 8) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
    const sign = (n: number) => Math.sign(n);
    for (let k = 0; k < 5000; k++) {
      const a = version();
      const b = next() < 0.2 ? a : version();
      expect(sign(compareVersions(a, b)), `${a} vs ${b}`).toBe(sign(referenceCompare(a, b)));
    }
    for (const [a, b] of [
      ['9.2p1', '9.10p1'],
      ['1.0~rc1', '1.0'],
      ['007', '7'],
      ['1.00', '1.0'],
      ['99999999999999999999', '100000000000000000000'],
    ] as const)
      expect(sign(compareVersions(a, b)), `${a} vs ${b}`).toBe(sign(referenceCompare(a, b)));
  });
});
