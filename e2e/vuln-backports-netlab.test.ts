import fs from 'node:fs/promises';
import path from 'node:path';
import type { Finding, SessionFile } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { http, withToken } from '@svc/test-support/http';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork, scannerTools } from '@svc/test-support/netlab/scanner-tools';
import { bannerServer } from '@svc/test-support/netlab/services';
import { epssCsv, feedFixture, importTestFeeds, nvdFixtureFeed } from '@svc/test-support/vuln-feeds';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * Distribution backports end to end (docs/vuln-matching.md "Distribution packages"):
 * the real NVD record of CVE-2023-38408 and a Debian security tracker file saying bookworm fixed
 * it in 1:9.2p1-2+deb12u1 are imported into a real portal; two OpenSSH banners are planted on the
 * test network's ssh host, a bookworm package with the fix (`Debian-2+deb12u3`) and the release's
 * first one without it (`Debian-2`); a real `svc scan` (nmap in the scanner namespace) fetches the
 * index with its key and uploads. The revision with the fix does not list the CVE; the one without
 * lists it as confirmed by the tracker, not as potential. Needs root; the namespaces go at the end.
 */

const FIXED = 2201;
const UNFIXED = 2202;

const fixture = usePortalWithKey({ tier: 'business' });
let lab: Netlab;
let home: string;
let ssh: string;
let doc: SessionFile;
let uploaded: { session_id: string };

const onPort = (port: number) =>
  (doc.findings ?? []).filter((f) => f.port === port && f.rule_id?.startsWith('cve:')).map((f) => f.rule_id);
const cveFinding = (port: number, id: string): Finding | undefined =>
  (doc.findings ?? []).find((f) => f.port === port && f.rule_id === `cve:${id}`);

beforeAll(async () => {
  await importTestFeeds(fixture.portal, {
    nvd: [await nvdFixtureFeed(['CVE-2023-38408'])],
    epss: epssCsv([{ cve: 'CVE-2023-38408', epss: 0.42, percentile: 0.97 }]),
    debian: await feedFixture('debian/openssh-tracker.json'),
  });
  lab = await startNetlab({ smb: false });
  ssh = lab.hosts.ssh.ip;
  assertInTestNetwork([ssh]);
  await lab.startService('ssh', {
    ...bannerServer(ssh, FIXED, 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3'),
    name: 'banner-deb12u3',
  });
  await lab.startService('ssh', {
    ...bannerServer(ssh, UNFIXED, 'SSH-2.0-OpenSSH_9.2p1 Debian-2'),
    name: 'banner-deb12',
  });
  home = await tempHome();
  await scannerTools(lab.wrapper, path.join(home, 'bin'), ['nmap']);
  const res = await runCli(
    SVC,
    ['scan', '--targets', ssh, '--ports', `T:${FIXED},${UNFIXED}`, '--no-tools', '--upload', '--json'],
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
  expect(res.code, res.stderr).toBe(0);
  expect(res.stderr).not.toMatch(/vulnerability index/);
  const out = JSON.parse(res.stdout) as { path: string; upload: { session_id: string } };
  uploaded = out.upload;
  doc = JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as SessionFile;
}, 8 * 60_000);

afterAll(async () => {
  lab?.stop();
  if (home) await fs.rm(home, { recursive: true, force: true });
});

describe("Debian OpenSSH packages judged by the Debian security tracker's fixed versions", () => {
  it('the revision with the fix (2+deb12u3) does not list CVE-2023-38408; the one without (2) does', () => {
    // CVE-2025-26465 is fixed in bookworm only by 2+deb12u5: both lack it (the tracker alone names it).
    expect(onPort(FIXED)).toEqual(['cve:CVE-2025-26465']);
    expect(onPort(UNFIXED)).toEqual(['cve:CVE-2023-38408', 'cve:CVE-2025-26465']);
  });

  it('lists it as confirmed by the distribution fixed version, with the fix to install', () => {
    expect(cveFinding(UNFIXED, 'CVE-2023-38408')).toMatchObject({
      title: 'OpenSSH 9.2p1 (Debian 2): CVE-2023-38408',
      severity: 'critical',
      cvss: 9.8,
      epss: 0.42,
      remediation:
        "Upgrade Debian's openssh packages to 1:9.2p1-2+deb12u1 or later (apt-get update && apt-get upgrade from bookworm-security).",
      match: {
        kind: 'distribution_package',
        confidence: 'confirmed',
        source: 'Debian security tracker',
        distribution: {
          name: 'debian',
          release: 'bookworm',
          package: 'openssh',
          version: '9.2p1-2',
          fixed_version: '1:9.2p1-2+deb12u1',
        },
      },
    });
    expect(cveFinding(UNFIXED, 'CVE-2023-38408')?.evidence).toContain(
      "confirmed: Debian bookworm's openssh fixed CVE-2023-38408 in 1:9.2p1-2+deb12u1; this package is 9.2p1-2, before the fix",
    );
  });

  it('no CVE finding of either banner is "potential"', () => {
    const cves = (doc.findings ?? []).filter((f) => f.references?.cve !== undefined);
    expect(cves.length).toBeGreaterThan(0);
    expect(cves.filter((f) => f.match?.confidence !== 'confirmed').map((f) => f.rule_id)).toEqual([]);
  });

  it('the portal holds the uploaded session with the confirmed finding', async () => {
    const res = await http(
      fixture.portal.url,
      'GET',
      `/api/sessions/${uploaded.session_id}/findings?client_id=${fixture.clientId}`,
      { headers: withToken(await fixture.portal.adminToken()) },
    );
    expect(res.status, res.text).toBe(200);
    const rows = res.body.findings as { cve_ids: string[]; port: number }[];
    expect(
      rows
        .filter((r) => r.cve_ids.includes('CVE-2023-38408'))
        .map((r) => r.port)
        .sort(),
    ).toEqual([UNFIXED]);
  });
});
