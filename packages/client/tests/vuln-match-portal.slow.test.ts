import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { runStages } from '../src/pipeline/run-stages.ts';
import { loadVulnIndex } from '../src/cve-match/vuln-index-cache.ts';
import { scanTimeOf } from '../src/scanner/parse/index.ts';
import { detectFindings } from '../src/scanner/rules/index.ts';
import { tempHome } from '@svc/test-support/cli';
import { createLicense } from '@svc/test-support/factories';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { epssCsv, importTestFeeds, kevCatalog, nvdFeed } from '@svc/test-support/vuln-feeds';
import { fixture, hostOf, REAL } from './scanner-fixtures.ts';

/**
 * From feeds to findings (docs/vuln-matching.md): small NVD, KEV and EPSS feeds in their real
 * formats imported into a real portal, the index fetched as svc fetches it, and the real nmap
 * output of the lab's old OpenSSH (7.4) matched against it through the detection rules and the
 * pipeline's stages.
 */

const NVD = nvdFeed([
  {
    id: 'CVE-2023-38408',
    cvss: 9.8,
    description: 'ssh-agent in OpenSSH before 9.3p2 has an insufficiently trustworthy search path.',
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endExcluding: '9.3p2' }],
  },
  {
    // The hand table reports it too (openssh-user-enumeration): not twice.
    id: 'CVE-2018-15473',
    cvss: 5.3,
    description: 'OpenSSH through 7.7 is prone to a user enumeration vulnerability.',
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', endIncluding: '7.7' }],
  },
  {
    id: 'CVE-2024-6387',
    cvss: 8.1,
    description: 'A signal handler race condition was found in sshd.',
    cpes: [{ criteria: 'cpe:2.3:a:openbsd:openssh:*:*:*:*:*:*:*:*', startIncluding: '8.5p1', endExcluding: '9.8p1' }],
  },
]);
const KEV = kevCatalog([{ cve: 'CVE-2023-38408', dateAdded: '2025-01-10', dueDate: '2025-01-31' }]);
const EPSS = epssCsv([
  { cve: 'CVE-2023-38408', epss: 0.42, percentile: 0.97 },
  { cve: 'CVE-2018-15473', epss: 0.2, percentile: 0.96 },
]);

describe('a scan matched against feeds imported into the portal', () => {
  let portal: TestPortal;
  let home: string;

  beforeAll(async () => {
    portal = await startTestPortal();
    home = await tempHome();
    await importTestFeeds(portal, { nvd: [NVD], kev: KEV, epss: EPSS });
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
    if (home) await fs.rm(home, { recursive: true, force: true });
  });

  it('lists the CVEs of the old OpenSSH with CVSS, KEV and EPSS, each once', async () => {
    const { key } = await createLicense(portal, { tier: 'business' });
    const target = { uploadUrl: `${portal.url}/api/upload`, apiKey: key, jwt: null, timeoutS: 10 };
    const index = await loadVulnIndex(target, { home });
    expect(index?.cves.map((c) => c.id).sort()).toEqual(['CVE-2018-15473', 'CVE-2023-38408', 'CVE-2024-6387']);

    const run = fixture(REAL);
    const scanTime = scanTimeOf(run.info) ?? new Date();
    const findings = detectFindings([hostOf(run, '127.0.0.1')], { scanTime, vulnIndex: index });
    const onSsh = findings.filter((f) => f.port === 2222).map((f) => [f.rule_id, f.references?.cve]);
    expect(onSsh).toEqual([
      ['outdated-software:openssh-terrapin', ['CVE-2023-48795']],
      ['outdated-software:openssh-supplemental-groups', ['CVE-2021-41617']],
      ['outdated-software:openssh-user-enumeration', ['CVE-2018-15473']],
      ['cve:CVE-2023-38408', ['CVE-2023-38408']],
    ]);

    const { doc } = runStages({
      findings,
      vulnIndex: index,
      hosts: [{ ip: '127.0.0.1' }],
      prior: null,
      exceptions: [],
      settings: {
        sessionId: '20261127_100000',
        target: '127.0.0.1',
        toolVersion: 'test',
        startedAt: scanTime,
        schedule: null,
        orc: orcSettingsFrom({}),
      },
      license: { tier: 'business', state: null },
      now: scanTime,
    });
    const byRule = new Map((doc.findings ?? []).map((f) => [f.rule_id, f]));
    expect(byRule.get('cve:CVE-2023-38408')).toMatchObject({
      title: 'OpenSSH 7.4: CVE-2023-38408 (potential)',
      severity: 'critical',
      cvss: 9.8,
      kev: true,
      kev_date_added: '2025-01-10',
      epss: 0.42,
      epss_percentile: 0.97,
      category: 'vulnerable_software',
    });
    expect(byRule.get('outdated-software:openssh-user-enumeration')).toMatchObject({
      cvss: 5.3,
      kev: false,
      epss: 0.2,
      epss_percentile: 0.96,
    });
    // The remediation entry carries them, so the portal's rescoring after an exception counts them too.
    expect(doc.remediation?.find((e) => e.title?.includes('CVE-2023-38408'))).toMatchObject({ kev: true, epss: 0.42 });
  });
});
