import fs from 'node:fs/promises';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { http, withToken } from '@svc/test-support/http';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork, scannerTools } from '@svc/test-support/netlab/scanner-tools';
import { epssCsv, importTestFeeds, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * Feeds to findings for real: small NVD, KEV and EPSS files in their published formats are
 * imported into a real portal; `svc scan` (a real process, nmap inside the test network's
 * scanner namespace) fetches the portal's index with its key, matches the planted outdated
 * services against it and uploads. The OpenSSH 7.4 banner on the ssh host and Debian's Redis
 * 7.0.15 on the data host are the planted outdated services. The feed data is the test's own,
 * shaped like NVD's records of these CVEs; the catalogue lists CVE-2023-38408 so that one planted
 * service has a known-exploited CVE. Needs root; nothing outside the test subnet and loopback.
 */

const NVD = nvdFeed([
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    description:
      'The PKCS#11 feature in ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3p2' }],
  },
  {
    id: 'CVE-2016-10009',
    cvss: 7.3,
    cvssVersion: '3.0',
    description: 'Untrusted search path vulnerability in ssh-agent.c in OpenSSH before 7.4.',
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endIncluding: '7.3' }],
  },
  {
    id: 'CVE-2024-31449',
    cvss: 7,
    description: 'Lua library commands may lead to stack overflow and potential RCE in Redis.',
    cpes: [{ criteria: 'cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*', startIncluding: '7.0.0', endExcluding: '7.2.6' }],
  },
  {
    id: 'CVE-2021-32675',
    cvss: 7.5,
    description: 'Redis before 6.2.6 allows a denial of service through crafted multibulk requests.',
    cpes: [{ criteria: 'cpe:2.3:a:redis:redis:*:*:*:*:*:*:*:*', endExcluding: '6.2.6' }],
  },
]);
const KEV = kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2025-01-10', dueDate: '2025-01-31' }]);
const EPSS = epssCsv([
  { cve: 'CVE-2023-38408', epss: 0.42, percentile: 0.97 },
  { cve: 'CVE-2024-31449', epss: 0.0105, percentile: 0.77 },
]);

const fixture = usePortalWithKey({ tier: 'business' });
let lab: Netlab;
let home: string;
let ssh: string;
let data: string;
let doc: SessionFile;
let uploaded: { session_id: string };
let stderr: string;

interface CveFinding {
  rule_id: string;
  host: string;
  port: number;
  severity: string;
  cvss?: number;
  kev?: boolean;
  kev_date_added?: string;
  epss?: number;
  epss_percentile?: number;
  references?: { cve?: string[] };
}

const cveFindings = (d: SessionFile) =>
  (d.findings as CveFinding[])
    .filter((f) => f.rule_id.startsWith('cve:'))
    .map((f) => `${f.host}:${f.port} ${f.rule_id}`);

beforeAll(async () => {
  await importTestFeeds(fixture.portal, { nvd: [NVD], kev: KEV, epss: EPSS });
  lab = await startNetlab({ smb: false });
  ssh = lab.hosts.ssh.ip;
  data = lab.hosts.data.ip;
  assertInTestNetwork([ssh, data]);
  home = await tempHome();
  await scannerTools(lab.wrapper, path.join(home, 'bin'), ['nmap']);
  const res = await runCli(
    SVC,
    ['scan', '--targets', `${ssh},${data}`, '--ports', 'T:22,2222,6379', '--no-tools', '--upload', '--json'],
    {
      home,
      env: {
        PATH: `${path.join(home, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}`,
        CONSULTATION_API_URL: fixture.uploadUrl,
        SVC_API_KEY: fixture.key,
      },
      timeoutMs: 5 * 60_000,
    },
  );
  stderr = res.stderr;
  expect(res.code, res.stderr).toBe(0);
  const out = JSON.parse(res.stdout) as { path: string; upload: { session_id: string } };
  uploaded = out.upload;
  doc = JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as SessionFile;
}, 8 * 60_000);

afterAll(async () => {
  lab?.stop();
  if (home) await fs.rm(home, { recursive: true, force: true });
});

describe('a scan of the test network matched against feeds imported into the portal', () => {
  it("lists the CVEs of the planted outdated services, and none outside a product's ranges", () => {
    expect(cveFindings(doc).sort()).toStrictEqual(
      [
        // OpenSSH 7.4 (the planted banner): before 9.3p2, not at or below 7.3.
        `${ssh}:2222 cve:CVE-2023-38408`,
        // Debian's OpenSSH 9.2p1: before 9.3p2 by its upstream version (a potential match).
        `${ssh}:22 cve:CVE-2023-38408`,
        // Redis 7.0.15 (nmap names it redislabs:redis, NVD redis:redis): within 7.0.0 to 7.2.6.
        `${data}:6379 cve:CVE-2024-31449`,
      ].sort(),
    );
  });

  it('carries CVSS, KEV and EPSS on each, from the feeds', () => {
    const at = (host: string, port: number, id: string) =>
      (doc.findings as CveFinding[]).find((f) => f.host === host && f.port === port && f.rule_id === `cve:${id}`);
    expect(at(ssh, 2222, 'CVE-2023-38408')).toMatchObject({
      severity: 'critical',
      cvss: 9.8,
      kev: true,
      kev_date_added: '2025-01-10',
      epss: 0.42,
      epss_percentile: 0.97,
      references: { cve: ['CVE-2023-38408'] },
    });
    expect(at(data, 6379, 'CVE-2024-31449')).toMatchObject({
      severity: 'high',
      cvss: 7,
      kev: false,
      epss: 0.0105,
      epss_percentile: 0.77,
    });
  });

  it('fetched the index with its key: no warning about the index', () => {
    expect(stderr).not.toMatch(/vulnerability index/);
  });

  it('the portal holds the session with the known-exploited findings, filterable by kev', async () => {
    const res = await http(
      fixture.portal.url,
      'GET',
      `/api/sessions/${uploaded.session_id}/findings?client_id=${fixture.clientId}&kev=true`,
      { headers: withToken(await fixture.portal.adminToken()) },
    );
    expect(res.status, res.text).toBe(200);
    const rows = res.body.findings as { cve_ids: string[]; host: string; port: number; kev: boolean }[];
    expect(rows.map((r) => `${r.host}:${r.port} ${r.cve_ids.join(',')} ${r.kev}`).sort()).toStrictEqual(
      [`${ssh}:2222 CVE-2023-38408 true`, `${ssh}:22 CVE-2023-38408 true`].sort(),
    );
  });
});
