import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Settings } from '../src/kit/config/settings.ts';
import { licenseState } from '../src/kit/license/service.ts';
import { findNmap } from '../src/kit/nmap-path.ts';
import { runScan, type ScanResult } from '../src/scanner/run/run-scan.ts';
import { EXTERNAL_TOOLS } from '../src/scanner/tools/index.ts';
import { testssl } from '../src/scanner/tools/testssl.ts';
import type { EnrichmentTool } from '../src/scanner/tools/types.ts';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';

/**
 * runScan in process with the test network's wrapper: nmap and every optional tool (testssl.sh,
 * sslscan, whatweb) run inside the scanner namespace against the web host (TLS 1.0, an expired
 * self-signed RSA-1024 certificate, nginx with a version banner) and the hardened host. Needs root
 * and the tools from setup-system.sh. Slow: testssl.sh makes thousands of handshakes.
 */

/** The checks the assertions read, not the whole audit: protocols, certificate, BEAST and LUCKY13. */
const LIGHT_TESTSSL_CHECKS = ['-p', '-S', '-A', '-L'];
const FULL_TESTSSL_CHECKS = ['-p', '-s', '-S', '-U'];

/** testssl.sh as the scan plans it, with LIGHT_TESTSSL_CHECKS in place of the full audit's flags. */
const lightTestssl: EnrichmentTool = {
  ...testssl,
  plan: (hosts, ctx) =>
    testssl.plan(hosts, ctx).map((inv) => {
      const at = inv.args.indexOf(FULL_TESTSSL_CHECKS[0]!);
      const args = [...inv.args];
      if (args.slice(at, at + FULL_TESTSSL_CHECKS.length).join(' ') !== FULL_TESTSSL_CHECKS.join(' '))
        throw new Error(`testssl.sh's checks changed: ${inv.args.join(' ')}`);
      args.splice(at, FULL_TESTSSL_CHECKS.length, ...LIGHT_TESTSSL_CHECKS);
      return { ...inv, args };
    }),
};

interface Finding {
  host: string;
  port?: number;
  service?: string;
  rule_id: string;
  severity: string;
  evidence: string;
  source?: string;
  sources?: string[];
}

let lab: Netlab;
let dir: string;
let scan: ScanResult;
let findings: Finding[];
let log: string;
const infos: string[] = [];

beforeAll(async () => {
  lab = await startNetlab({ smb: false });
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-scan-tools-netlab-'));
  const targets = [lab.hosts.web.ip, lab.hosts.hardened.ip];
  for (const t of targets)
    if (!t.startsWith('10.231.0.')) throw new Error(`refusing to scan ${t}: outside the test network`);
  const nmapPath = findNmap(process.env);
  if (nmapPath === undefined) throw new Error('nmap is not installed');
  const settings = new Settings({ env: {} });
  const now = () => new Date();
  const license = await licenseState({ settings, home: dir, now, warn: () => {}, timeoutS: 5 });
  scan = await runScan(
    {
      targets: targets.join(','),
      profile: 'quick_recon',
      ports: 'T:80,443',
      privileged: true,
      nmapPath,
      wrapper: lab.wrapper,
      root: path.join(dir, 'sessions'),
      exceptions: [],
      settings,
      license,
      tools: EXTERNAL_TOOLS.map((t) => (t.name === testssl.name ? lightTestssl : t)),
    },
    { now, info: (m) => infos.push(m), warn: (m) => infos.push(`warning: ${m}`) },
  );
  findings = scan.doc.findings as Finding[];
  log = await fs.readFile(path.join(scan.path, 'pipeline.log'), 'utf8');
}, 40 * 60_000);

afterAll(async () => {
  lab?.stop();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

const on = (role: 'web' | 'hardened') => findings.filter((f) => f.host === lab.hosts[role].ip);
const bySource = (source: string) => (f: Finding) => f.source === source || (f.sources ?? []).includes(source);

describe('optional tools in the test network', () => {
  it('runs without a tool warning', () => {
    expect(scan.warnings.filter((w) => /^(testssl\.sh|sslscan|whatweb) /.test(w))).toEqual([]);
    expect(infos.filter((m) => m.includes('not installed'))).toEqual([]);
  });

  it('adds testssl.sh findings on the weak TLS service, folded into nmap findings of the same weakness', () => {
    const tls = on('web').filter((f) => f.port === 443);
    const deprecated = tls.find((f) => f.rule_id === 'tls-deprecated-protocol');
    expect(deprecated?.sources).toEqual(['nmap', 'testssl.sh', 'sslscan']);
    expect(deprecated?.evidence).toContain('testssl.sh: TLS1 offered (deprecated); TLS1_1 offered (deprecated)');
    expect(deprecated?.evidence).toContain('sslscan: enabled TLSv1.0, TLSv1.1');
    for (const rule of ['certificate-expired', 'self-signed-certificate', 'certificate-weak-key'])
      expect(tls.find((f) => f.rule_id === rule)?.sources, rule).toContain('testssl.sh');
    // Only one finding per weakness on the port, whoever reported it.
    const keys = tls.map((f) => f.rule_id);
    expect(new Set(keys).size).toBe(keys.length);
    const own = tls.filter((f) => f.source === 'testssl.sh').map((f) => `${f.rule_id} ${f.severity}`);
    expect(own).toContain('testssl:LUCKY13 low');
    expect(own).toContain('testssl:BEAST low');
  });

  it('adds sslscan findings with sslscan named as a source', () => {
    const tls = on('web').filter((f) => f.port === 443 && bySource('sslscan')(f));
    expect(tls.map((f) => f.rule_id).sort()).toEqual(
      ['certificate-weak-key', 'tls-deprecated-protocol', 'tls-weak-key-exchange'].sort(),
    );
  });

  it('adds whatweb findings: the disclosed nginx version and the technologies', () => {
    const web = on('web').filter((f) => f.source === 'whatweb');
    const http = lab.hosts.web.ip;
    expect(web.map((f) => `${f.port} ${f.rule_id} ${f.severity}`).sort()).toEqual(
      ['80 http-version-disclosed low', '80 web-technologies info'].sort(),
    );
    expect(web.find((f) => f.rule_id === 'http-version-disclosed')?.evidence).toMatch(
      new RegExp(`^whatweb: http://${http.replaceAll('.', '\\.')}:80/ \\[200\\]: nginx \\d+\\.\\d+\\.\\d+$`),
    );
  });

  it('finds nothing weak on the hardened host', () => {
    const hardened = on('hardened');
    expect(hardened.filter((f) => f.severity !== 'info').map((f) => `${f.rule_id} ${f.source ?? 'nmap'}`)).toEqual([]);
    expect(hardened.some(bySource('whatweb'))).toBe(true);
  });

  it("logs each tool's exact command, timing and exit in pipeline.log", () => {
    const ip = lab.hosts.web.ip.replaceAll('.', '\\.');
    const lines = log.split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^\\S+Z stage tool testssl\\.sh command ip netns exec \\S+ /usr/bin/testssl --quiet .* -p -S -A -L --jsonfile /\\S+\\.json ${ip}:443$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\S+Z stage tool testssl\\.sh ${ip}:443 \\d+ ms, exit \\d+$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^\\S+Z stage tool sslscan command ip netns exec \\S+ /usr/bin/sslscan --xml=- --no-colour --timeout=10 ${ip}:443$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\S+Z stage tool sslscan ${ip}:443 \\d+ ms, exit 0$`)),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^\\S+Z stage tool whatweb http://${ip}:80/ \\d+ ms, exit 0$`)),
    );
  });
});
