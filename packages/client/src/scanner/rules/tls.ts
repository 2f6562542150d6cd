import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort, ScriptNode } from '../parse/types.ts';
import { finding, maxSeverity, openPorts, serviceEvidence } from './finding.ts';
import { elemAt, portScript, tableAt, tables } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * Weak TLS: deprecated protocol versions, and weak ciphers or key exchange. nmap's grades ignore
 * the protocol version and score RSA/DH-1024 an A, so the rules read the tables themselves.
 */

type Severity = NonNullable<ScanFinding['severity']>;

const DEPRECATED: ReadonlyArray<readonly [string, Severity]> = [
  ['SSLv2', 'critical'],
  ['SSLv3', 'high'],
  ['TLSv1.0', 'medium'],
  ['TLSv1.1', 'medium'],
];

/** ssl-enum-ciphers warnings that name a weak cipher or signature (nselib/tls.lua and the script). */
const WEAK_WARNINGS: readonly RegExp[] = [
  /64-bit block cipher 3DES vulnerable to SWEET32/i,
  /Broken cipher RC4/i,
  /Anonymous key exchange/i,
  /Export key exchange/i,
  /Weak certificate signature: SHA1/i,
  /Insecure certificate signature/i,
];

const WEAK_GRADES = new Set(['C', 'D', 'E', 'F']);

interface CipherRow {
  protocol: string;
  name: string;
  kex: string | undefined;
  strength: string | undefined;
}

function cipherRows(children: readonly ScriptNode[]): CipherRow[] {
  return tables(children).flatMap((proto) =>
    tables(tableAt(proto.children, 'ciphers')?.children ?? []).map((c) => ({
      protocol: proto.key ?? '',
      name: elemAt(c.children, 'name') ?? '',
      kex: elemAt(c.children, 'kex_info'),
      strength: elemAt(c.children, 'strength'),
    })),
  );
}

function warnings(children: readonly ScriptNode[]): string[] {
  return tables(children).flatMap((proto) =>
    (tableAt(proto.children, 'warnings')?.children ?? []).flatMap((n) => (n.kind === 'elem' ? [n.value] : [])),
  );
}

/** Bits of an RSA or DH key exchange (`rsa 1024`, `dh 1024`); elliptic curves are not sized here. */
function kexBits(kex: string | undefined): number | undefined {
  const m = /^(rsa|dh)\s+(\d+)$/i.exec(kex?.trim() ?? '');
  return m?.[2] === undefined ? undefined : Number(m[2]);
}

function protocolFindings(host: NmapHost, port: NmapPort): ScanFinding[] {
  const enumCiphers = portScript(port, 'ssl-enum-ciphers');
  const found = DEPRECATED.filter(([p]) => enumCiphers !== undefined && tableAt(enumCiphers.children, p) !== undefined);
  if (portScript(port, 'sslv2')?.output.match(/SSLv2 supported/i) && !found.some(([p]) => p === 'SSLv2'))
    found.unshift(['SSLv2', 'critical']);
  if (found.length === 0) return [];
  const severity = found.map(([, s]) => s).reduce(maxSeverity);
  const names = found.map(([p]) => p).join(', ');
  return [
    finding(host, port, {
      rule_id: 'tls-deprecated-protocol',
      title: `Deprecated TLS/SSL protocol versions enabled (${names})`,
      severity,
      category: 'weak_crypto',
      evidence: `${serviceEvidence(port)}; ssl-enum-ciphers offers ${names}`,
      description:
        'The server accepts protocol versions that are deprecated: SSL 2 and 3 are broken (DROWN, POODLE), and ' +
        'TLS 1.0 and 1.1 were deprecated by RFC 8996 (weak MAC and key derivation, BEAST). PCI DSS forbids them.',
      remediation: 'Allow only TLS 1.2 and TLS 1.3 in the server configuration.',
      cve: found.some(([p]) => p === 'SSLv3')
        ? ['CVE-2014-3566']
        : found.some(([p]) => p === 'SSLv2')
          ? ['CVE-2016-0800']
          : [],
      cwe: ['CWE-327'],
      urls: ['https://www.rfc-editor.org/rfc/rfc8996'],
    }),
  ];
}

function cipherFindings(host: NmapHost, port: NmapPort): ScanFinding[] {
  const out: ScanFinding[] = [];
  const enumCiphers = portScript(port, 'ssl-enum-ciphers');
  if (enumCiphers !== undefined) {
    const rows = cipherRows(enumCiphers.children);
    const weakWarnings = [...new Set(warnings(enumCiphers.children))].filter((w) =>
      WEAK_WARNINGS.some((r) => r.test(w)),
    );
    const weakGrades = rows.filter((r) => r.strength !== undefined && WEAK_GRADES.has(r.strength));
    if (weakWarnings.length > 0 || weakGrades.length > 0) {
      const listed = [...new Set(weakGrades.map((r) => `${r.name} (${r.strength})`))].slice(0, 8);
      out.push(
        finding(host, port, {
          rule_id: 'tls-weak-cipher',
          title: 'Weak TLS cipher suites offered',
          severity: 'medium',
          category: 'weak_crypto',
          evidence: `ssl-enum-ciphers: ${[...weakWarnings, ...listed].join('; ')}; least strength ${elemAt(enumCiphers.children, 'least strength') ?? '?'}`,
          description:
            'The server offers cipher suites that are broken or weak (RC4, 3DES/SWEET32, export, anonymous or ' +
            'NULL suites, or SHA-1 signatures), which a network attacker can exploit to decrypt or tamper with traffic.',
          remediation: 'Offer only AEAD suites (AES-GCM, ChaCha20-Poly1305) with ECDHE key exchange.',
          cve: weakWarnings.some((w) => /SWEET32/i.test(w)) ? ['CVE-2016-2183'] : [],
          cwe: ['CWE-327'],
        }),
      );
    }
    const smallKex = rows.filter((r) => (kexBits(r.kex) ?? Number.POSITIVE_INFINITY) < 2048);
    if (smallKex.length > 0) {
      const kinds = [...new Set(smallKex.map((r) => r.kex ?? ''))].join(', ');
      out.push(
        finding(host, port, {
          rule_id: 'tls-weak-key-exchange',
          title: `TLS key exchange under 2048 bits (${kinds})`,
          severity: 'medium',
          category: 'weak_crypto',
          evidence: `ssl-enum-ciphers: ${[...new Set(smallKex.map((r) => `${r.protocol} ${r.name} (${r.kex})`))].slice(0, 6).join('; ')}`,
          description:
            'Some cipher suites use an RSA or Diffie-Hellman key exchange under 2048 bits, which well-funded ' +
            'attackers can break (Logjam); nmap still grades these suites A.',
          remediation: 'Use ECDHE key exchange and RSA or DH keys of at least 2048 bits.',
          cve: smallKex.some((r) => /^dh/i.test(r.kex ?? '')) ? ['CVE-2015-4000'] : [],
          cwe: ['CWE-326'],
        }),
      );
    }
  }
  return out;
}

function dhParamsFinding(host: NmapHost, port: NmapPort): ScanFinding[] {
  const dh = portScript(port, 'ssl-dh-params');
  if (dh === undefined) return [];
  const vulnerable = tables(dh.children).filter((t) => elemAt(t.children, 'state')?.startsWith('VULNERABLE'));
  if (vulnerable.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: 'tls-weak-dh-params',
      title: 'Weak Diffie-Hellman parameters',
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `ssl-dh-params: ${vulnerable.map((t) => elemAt(t.children, 'title') ?? t.key ?? '').join('; ')}`,
      description:
        'The server uses Diffie-Hellman groups that ssl-dh-params reports as vulnerable (too small or widely shared).',
      remediation: 'Use ECDHE, or DH groups of at least 2048 bits (RFC 7919 ffdhe2048 or larger).',
      cve: ['CVE-2015-4000'],
      cwe: ['CWE-326'],
    }),
  ];
}

export const tls: RuleFamily = {
  id: 'tls',
  scripts: ['ssl-enum-ciphers', 'ssl-dh-params', 'sslv2'],
  evaluate(host) {
    return openPorts(host).flatMap((port) => [
      ...protocolFindings(host, port),
      ...cipherFindings(host, port),
      ...dhParamsFinding(host, port),
    ]);
  },
};
