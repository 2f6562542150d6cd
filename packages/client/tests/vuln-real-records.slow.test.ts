import fs from 'node:fs/promises';
import path from 'node:path';
import type { VulnIndex } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseForeignFile } from '../src/imports/detect.ts';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { runStages } from '../src/pipeline/run-stages.ts';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { loadVulnIndex } from '../src/cve-match/vuln-index-cache.ts';
import type { NmapHost, NmapService } from '../src/scanner/parse/types.ts';
import { detectFindings } from '../src/scanner/rules/index.ts';
import { cveRecord, matchVulnIndex, vulnLookup } from '../src/cve-match/vuln-index-match.ts';
import { tempHome } from '@svc/test-support/cli';
import { createLicense } from '@svc/test-support/factories';
import { nessusV2 } from '@svc/test-support/foreign-reports';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { epssCsv, feedFixture, importTestFeeds, nvdFixtureFeed } from '@svc/test-support/vuln-feeds';

/**
 * CPE versions and Debian revisions on real NVD records (test-support/fixtures/vuln-feeds/SOURCES.md) imported into a real
 * portal, the index fetched as svc fetches it: a CPE version "-" matches no version (no
 * CVE-1999-0236 on Apache httpd 2.2.8 or 2.2.22), release candidates stay apart from their
 * release (TensorFlow 2.10.0), and a CVE with no range still reaches the findings naming it
 * (CVE-1999-0524's EPSS on Nessus's ICMP timestamp finding).
 */

const RECORDS = ['CVE-1999-0236', 'CVE-1999-0524', 'CVE-2022-35934', 'CVE-2023-38408'];
const EPSS = epssCsv([
  { cve: 'CVE-1999-0524', epss: 0.00386, percentile: 0.73112 },
  { cve: 'CVE-1999-0236', epss: 0.0102, percentile: 0.76 },
]);

let portal: TestPortal;
let home: string;
let index: VulnIndex;

beforeAll(async () => {
  portal = await startTestPortal();
  home = await tempHome();
  await importTestFeeds(portal, {
    nvd: [await nvdFixtureFeed(RECORDS)],
    epss: EPSS,
    debian: await feedFixture('debian/openssh-tracker.json'),
  });
  const { key } = await createLicense(portal, { tier: 'business' });
  const loaded = await loadVulnIndex(
    { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 10 },
    { home },
  );
  if (loaded === null) throw new Error('no index');
  index = loaded;
});
afterAll(async () => {
  await portal?.close();
  if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  if (home) await fs.rm(home, { recursive: true, force: true });
});

const service = (product: string, version: string, cpe: string): NmapService => ({
  name: 'http',
  product,
  version,
  cpes: [cpe],
  method: 'probed',
  conf: 10,
});
const ids = (s: NmapService) => matchVulnIndex(s, vulnLookup(index)).map((m) => m.cve.id);

describe('real NVD records matched as NISTIR 7696 reads them', () => {
  it('holds every CVE of the feeds, the ones without a range too', () => {
    expect(index.format).toBe(2);
    // 38408, 48795 and 6387 and 2768, 26465 of the Debian tracker; 0236 and 0524 have no range left.
    expect(index.cves.map((c) => c.id)).toEqual([
      'CVE-1999-0236',
      'CVE-1999-0524',
      'CVE-2007-2768',
      'CVE-2022-35934',
      'CVE-2023-38408',
      'CVE-2023-48795',
      'CVE-2024-6387',
      'CVE-2025-26465',
    ]);
    expect(Object.keys(index.products).sort()).toEqual([
      'a:google:tensorflow',
      'a:openbsd:openssh',
      'o:fedoraproject:fedora',
    ]);
  });

  it('CVE-1999-0236 ("-": not applicable) is on no Apache httpd version, 2.2.8 and 2.2.22 included', () => {
    for (const version of ['2.2.8', '2.2.22', '2.4.62'])
      expect(ids(service('Apache httpd', version, `cpe:/a:apache:http_server:${version}`)), version).toEqual([]);
  });

  it('CVE-2022-35934 names TensorFlow release candidates of 2.10, not the 2.10.0 release', () => {
    const tf = (version: string, cpe = `cpe:/a:google:tensorflow:${version}`) =>
      ids(service('TensorFlow Serving', version, cpe));
    expect(tf('2.10.0')).toEqual([]);
    expect(tf('2.10.1')).toEqual([]);
    expect(tf('2.10.0-rc1')).toEqual(['CVE-2022-35934']);
    expect(tf('2.10.0rc3')).toEqual(['CVE-2022-35934']);
    // nmap's CPE 2.2 with the update in its own field.
    expect(ids({ name: 'http', cpes: ['cpe:/a:google:tensorflow:2.10:rc2'] })).toEqual(['CVE-2022-35934']);
    expect(tf('2.10.0-rc4')).toEqual([]);
    expect(tf('2.9.0')).toEqual(['CVE-2022-35934']);
    expect(tf('2.9.1')).toEqual([]);
    expect(tf('2.7.1')).toEqual(['CVE-2022-35934']);
  });

  it('CVE-2023-38408 ("*" up to 9.3, 9.3 "-" and 9.3p1): OpenSSH before 9.3p2', () => {
    const ssh = (version: string) => ids(service('OpenSSH', version, `cpe:/a:openbsd:openssh:${version}`));
    expect(['7.4', '9.2p1', '9.3', '9.3p1'].map(ssh)).toEqual([
      ['CVE-2023-38408'],
      ['CVE-2023-38408'],
      ['CVE-2023-38408'],
      ['CVE-2023-38408'],
    ]);
    expect(ssh('9.3p2')).toEqual([]);
  });
});

describe('a CVE without a range, named by an imported finding', () => {
  it("gets the index's EPSS: Nessus's ICMP timestamp finding (plugin 10114) and CVE-1999-0524", async () => {
    expect(cveRecord(vulnLookup(index), 'CVE-1999-0524')).toMatchObject({
      cvss: 4,
      cvss_version: '3.1',
      epss: 0.00386,
    });
    const file = path.join(home, 'icmp.nessus');
    await fs.writeFile(
      file,
      nessusV2({
        start: new Date('2026-01-13T10:00:00Z'),
        end: new Date('2026-01-13T10:20:00Z'),
        items: [
          {
            host: '192.0.2.20',
            port: 0,
            protocol: 'tcp',
            id: '10114',
            name: 'ICMP Timestamp Request Remote Date Disclosure',
            severity: 'info',
            cve: ['CVE-1999-0524'],
            description: 'The remote host answers to an ICMP timestamp request.',
            solution: 'Filter out the ICMP timestamp requests (13), and the outgoing ICMP timestamp replies (14).',
            output: 'The difference between the local and remote clocks is 1 second.',
          },
        ],
      }),
    );
    const scan = await parseForeignFile(file, {
      format: 'nessus',
      maxBytes: 1 << 20,
      now: new Date(),
      vulnIndex: index,
    });
    const scanTime = new Date('2026-01-13T10:20:00Z');
    // The pipeline's first stage (enrichFindings) looks every CVE a finding names up in the index.
    const { doc } = runStages({
      findings: scan.findings as ScanFinding[],
      vulnIndex: index,
      hosts: scan.hosts,
      prior: null,
      exceptions: [],
      settings: {
        sessionId: '20260113_102000',
        target: '192.0.2.20',
        toolVersion: 'test',
        startedAt: scanTime,
        schedule: null,
        orc: orcSettingsFrom({}),
      },
      license: { tier: 'business', state: null },
      now: scanTime,
    });
    const icmp = doc.findings?.find((f) => f.references?.cve?.includes('CVE-1999-0524'));
    expect(icmp).toMatchObject({ kev: false, epss: 0.00386, epss_percentile: 0.73112, cvss: 4 });
  });
});

describe('a Debian OpenSSH banner against the real CVE-2023-38408 record and the Debian tracker', () => {
  const host = (version: string): NmapHost => ({
    status: { state: 'up' },
    addresses: [{ addr: '192.0.2.22', addrtype: 'ipv4' }],
    hostnames: [],
    ports: [
      {
        protocol: 'tcp',
        portid: 22,
        state: 'open',
        service: service('OpenSSH', version, `cpe:/a:openbsd:openssh:${version.split(' ')[0]}`),
        scripts: [],
      },
    ],
    os: [],
    hostscripts: [],
  });
  const cves = (version: string) =>
    detectFindings([host(version)], { scanTime: new Date('2026-11-27T10:00:00Z'), vulnIndex: index })
      .filter((f) => f.rule_id?.startsWith('cve:'))
      .map((f) => `${f.rule_id} ${f.match?.confidence}`);

  it('a revision with the fix does not list it; one without lists it as confirmed', () => {
    expect(cves('9.2p1 Debian 2+deb12u3')).not.toContain('cve:CVE-2023-38408 confirmed');
    expect(cves('9.2p1 Debian 2+deb12u3').some((c) => c.startsWith('cve:CVE-2023-38408'))).toBe(false);
    expect(cves('9.2p1 Debian 2')).toContain('cve:CVE-2023-38408 confirmed');
    expect(cves('9.2p1')).toContain('cve:CVE-2023-38408 potential');
  });
});
