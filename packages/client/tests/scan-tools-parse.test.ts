import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sslscan, sslscanFindings } from '../src/scanner/tools/sslscan.ts';
import { type TestsslRecord, testssl, testsslFindings } from '../src/scanner/tools/testssl.ts';
import { whatweb, type WhatwebTarget, whatwebFindings } from '../src/scanner/tools/whatweb.ts';
import type { ToolContext, ToolInvocation } from '../src/scanner/tools/types.ts';
import type { NmapHost } from '../src/scanner/parse/types.ts';

/**
 * The tool parsers on real output captured from testssl.sh 3.0.8, sslscan 2.0.7 and whatweb 0.5.5
 * against the test network: the web host (openssl s_server with TLS 1.0-1.2 and an expired
 * self-signed RSA-1024 certificate; nginx 1.22.1 with a directory listing on port 80) and the
 * hardened host (nginx, TLS 1.2/1.3, a certificate from the test CA).
 */

const fixture = (name: string) => readFileSync(new URL(`./fixtures/tools/${name}`, import.meta.url), 'utf8');
const inv = (host: string, port: number, service: string): ToolInvocation => ({
  args: [],
  label: `${host}:${port}`,
  host,
  port,
  service,
});
const WEB = inv('10.231.0.12', 443, 'https');
const HARDENED = inv('10.231.0.20', 443, 'https');
const brief = (fs: { rule_id?: string; severity?: string }[]) => fs.map((f) => `${f.rule_id} ${f.severity}`);

describe('testssl.sh JSON', () => {
  const weak = testsslFindings(WEB, JSON.parse(fixture('testssl-weak.json')) as TestsslRecord[]);

  it("maps the weak host's checks to the rule ids nmap's rules use, and the rest under testssl ids", () => {
    expect(brief(weak)).toEqual([
      'tls-deprecated-protocol medium',
      'certificate-expired medium',
      'self-signed-certificate medium',
      'certificate-weak-key medium',
      'tls-weak-dh-params medium',
      'testssl:cipherlist_AVERAGE low',
      'testssl:cert_serialNumberLen low',
      'testssl:cert_subjectAltName high',
      'testssl:BEAST low',
      'testssl:LUCKY13 low',
    ]);
  });

  it('names testssl.sh as the source, with its evidence, place and references', () => {
    const deprecated = weak[0];
    expect(deprecated).toMatchObject({
      source: 'testssl.sh',
      host: '10.231.0.12',
      port: 443,
      protocol: 'tcp',
      service: 'https',
      category: 'weak_crypto',
      evidence: 'testssl.sh: TLS1 offered (deprecated); TLS1_1 offered (deprecated)',
      references: { cwe: ['CWE-327'], urls: ['https://www.rfc-editor.org/rfc/rfc8996'] },
    });
    expect(weak.find((f) => f.rule_id === 'certificate-expired')?.evidence).toBe(
      'testssl.sh: cert_expirationStatus expired; cert_notAfter 2021-01-01 00:00',
    );
    expect(weak.find((f) => f.rule_id === 'certificate-weak-key')?.evidence).toBe(
      'testssl.sh: cert_keySize RSA 1024 bits',
    );
    const lucky = weak.find((f) => f.rule_id === 'testssl:LUCKY13');
    expect(lucky?.title).toBe('TLS vulnerability LUCKY13 (CVE-2013-0169)');
    expect(lucky?.references).toEqual({ cve: ['CVE-2013-0169'], cwe: ['CWE-310'] });
  });

  it('finds nothing weak on the hardened host: the private CA, IP scan and expiry warning are not weaknesses', () => {
    const hardened = testsslFindings(HARDENED, JSON.parse(fixture('testssl-hardened.json')) as TestsslRecord[]);
    expect(brief(hardened)).toEqual(['certificate-expiring-soon info']);
  });

  it('runs offline with fixed arguments and a JSON file in the work directory', () => {
    const [plan] = testssl.plan([tlsHost('10.231.0.12', 443)], ctx);
    expect(plan?.args).toEqual([
      '--quiet',
      '--color',
      '0',
      '--warnings',
      'off',
      '--nodns',
      'none',
      '--connect-timeout',
      '10',
      '--openssl-timeout',
      '10',
      '-p',
      '-s',
      '-S',
      '-U',
      '--jsonfile',
      '/work/dir/testssl-10.231.0.12-443.json',
      '10.231.0.12:443',
    ]);
    expect(plan?.label).toBe('10.231.0.12:443');
  });
});

describe('sslscan XML', () => {
  it('reports deprecated protocols, 1024-bit DH key exchange and the RSA-1024 certificate of the weak host', () => {
    const weak = sslscanFindings(WEB, fixture('sslscan-weak.xml'));
    expect(brief(weak)).toEqual([
      'tls-deprecated-protocol medium',
      'tls-weak-key-exchange medium',
      'certificate-weak-key medium',
    ]);
    expect(weak.map((f) => f.evidence)).toEqual([
      'sslscan: enabled TLSv1.0, TLSv1.1',
      'sslscan: accepted TLSv1.2 DHE-RSA-AES256-GCM-SHA384 (dh 1024); TLSv1.2 DHE-RSA-CHACHA20-POLY1305 (dh 1024); ' +
        'TLSv1.2 DHE-RSA-AES128-GCM-SHA256 (dh 1024); TLSv1.2 DHE-RSA-AES256-SHA256 (dh 1024); ' +
        'TLSv1.2 DHE-RSA-AES128-SHA256 (dh 1024); TLSv1.2 DHE-RSA-AES256-SHA (dh 1024) and 5 more',
      'sslscan: certificate key RSA 1024 bits',
    ]);
    expect(weak.every((f) => f.source === 'sslscan')).toBe(true);
  });

  it('finds nothing on the hardened host', () => {
    expect(sslscanFindings(HARDENED, fixture('sslscan-hardened.xml'))).toEqual([]);
  });

  it('refuses output that is not an sslscan document', () => {
    expect(() => sslscanFindings(WEB, '<html></html>')).toThrow('no <ssltest> in the output');
  });

  it('writes XML to stdout with fixed arguments', () => {
    const [plan] = sslscan.plan([tlsHost('10.231.0.12', 443)], ctx);
    expect(plan?.args).toEqual(['--xml=-', '--no-colour', '--timeout=10', '10.231.0.12:443']);
  });
});

describe('whatweb JSON', () => {
  const HTTP = inv('10.231.0.12', 80, 'http');

  it("reports nginx's disclosed version (low) and the technologies (info)", () => {
    const found = whatwebFindings(HTTP, JSON.parse(fixture('whatweb-listing-http.json')) as WhatwebTarget[]);
    expect(brief(found)).toEqual(['http-version-disclosed low', 'web-technologies info']);
    expect(found.map((f) => f.evidence)).toEqual([
      'whatweb: http://10.231.0.12:80/ [200]: nginx 1.22.1',
      'whatweb: http://10.231.0.12:80/ [200]: HTTPServer[nginx/1.22.1], Index-Of, nginx[1.22.1], Title[Index of /]',
    ]);
  });

  it('reports only technologies where no version is disclosed, and nothing where nothing is recognised', () => {
    const hardened = whatwebFindings(HARDENED, JSON.parse(fixture('whatweb-hardened-https.json')) as WhatwebTarget[]);
    expect(brief(hardened)).toEqual(['web-technologies info']);
    const bare = whatwebFindings(WEB, JSON.parse(fixture('whatweb-weak-https.json')) as WhatwebTarget[]);
    expect(bare).toEqual([]);
  });

  it("flags a version in the project's known-vulnerable table", () => {
    const old: WhatwebTarget = {
      target: 'http://10.0.0.9:80/',
      http_status: 200,
      plugins: { nginx: { version: ['1.18.0'] } },
    };
    expect(brief(whatwebFindings(HTTP, [old]))).toEqual([
      'http-version-disclosed low',
      'outdated-software:nginx-resolver-off-by-one high',
      'web-technologies info',
    ]);
  });

  it('asks at aggression level 1 without following redirects', () => {
    const [plan] = whatweb.plan([httpHost('10.231.0.12', 80)], ctx);
    expect(plan?.label).toBe('http://10.231.0.12:80/');
    expect(plan?.args).toEqual([
      '--color=never',
      '--no-errors',
      '--quiet',
      '--aggression=1',
      '--follow-redirect=never',
      '--open-timeout=10',
      '--read-timeout=20',
      '--log-json=/work/dir/whatweb-10.231.0.12-80.json',
      'http://10.231.0.12:80/',
    ]);
  });
});

const ctx: ToolContext = {
  scanTime: new Date('2026-11-25T00:00:00Z'),
  workDir: '/work/dir',
  privileged: true,
  domains: [],
};

function host(ip: string, port: number, name: string, tunnel?: string): NmapHost {
  return {
    status: { state: 'up' },
    addresses: [{ addr: ip, addrtype: 'ipv4' }],
    hostnames: [],
    ports: [
      {
        protocol: 'tcp',
        portid: port,
        state: 'open',
        service: { name, cpes: [], ...(tunnel === undefined ? {} : { tunnel }) },
        scripts: [],
      },
    ],
    os: [],
    hostscripts: [],
  } as NmapHost;
}
const tlsHost = (ip: string, port: number) => host(ip, port, 'http', 'ssl');
const httpHost = (ip: string, port: number) => host(ip, port, 'http');

describe('which services each tool looks at', () => {
  it('TLS tools take TLS services, whatweb takes HTTP with and without TLS; closed ports and other services none', () => {
    const hosts = [tlsHost('10.0.0.1', 8443), httpHost('10.0.0.2', 8080), host('10.0.0.3', 22, 'ssh')];
    expect(testssl.plan(hosts, ctx).map((p) => p.label)).toEqual(['10.0.0.1:8443']);
    expect(sslscan.plan(hosts, ctx).map((p) => p.label)).toEqual(['10.0.0.1:8443']);
    expect(whatweb.plan(hosts, ctx).map((p) => p.label)).toEqual(['https://10.0.0.1:8443/', 'http://10.0.0.2:8080/']);
    const v6 = host('fd00::5', 443, 'https');
    expect(testssl.plan([v6], ctx).map((p) => p.args.at(-1))).toEqual(['[fd00::5]:443']);
    const down = { ...tlsHost('10.0.0.4', 443), status: { state: 'down' } };
    expect(testssl.plan([down], ctx)).toEqual([]);
  });

  it('a TLS name nmap only took from its port table (no probe answered) is not audited', () => {
    // A listener on 990 that never spoke TLS: nmap says "ftps" by the port number alone; a full
    // testssl.sh audit of it would run for minutes against a service that has no TLS.
    const guessed = host('10.0.0.5', 990, 'ftps');
    const [port] = guessed.ports;
    if (port?.service !== undefined) port.service.method = 'table';
    expect(testssl.plan([guessed], ctx)).toEqual([]);
    expect(sslscan.plan([guessed], ctx)).toEqual([]);
    const probed = host('10.0.0.6', 990, 'ftps');
    if (probed.ports[0]?.service !== undefined) probed.ports[0].service.method = 'probed';
    expect(testssl.plan([probed], ctx).map((p) => p.label)).toEqual(['10.0.0.6:990']);
  });
});
