import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ScanFinding } from '../../pipeline/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import { toolFinding } from './finding.ts';
import { hostPort, located, tlsServices } from './services.ts';
import type { EnrichmentTool, SourcedFinding, ToolInvocation } from './types.ts';

/**
 * testssl.sh: the full TLS audit of each TLS service nmap found (protocols, cipher categories,
 * certificate, known TLS vulnerabilities), read from its flat JSON file. Offline: no DNS lookups
 * (`--nodns none`, the address is nmap's) and testssl.sh never phones out unless told to.
 */

const NAME = 'testssl.sh';
type Severity = NonNullable<ScanFinding['severity']>;

/** One entry of testssl.sh's flat JSON (`--jsonfile`). */
export interface TestsslRecord {
  id: string;
  ip?: string;
  port?: string;
  severity: string;
  finding: string;
  cve?: string;
  cwe?: string;
}

const SEVERITIES: Readonly<Record<string, Severity>> = {
  LOW: 'low',
  MEDIUM: 'medium',
  HIGH: 'high',
  CRITICAL: 'critical',
};

const PROTOCOLS: ReadonlyArray<readonly [id: string, name: string, severity: Severity]> = [
  ['SSLv2', 'SSLv2', 'critical'],
  ['SSLv3', 'SSLv3', 'high'],
  ['TLS1', 'TLSv1.0', 'medium'],
  ['TLS1_1', 'TLSv1.1', 'medium'],
];

/** Cipher categories that are broken; AVERAGE (CBC, SHA-1 MAC) is left to the BEAST and LUCKY13 checks. */
const WEAK_CIPHER_LISTS = [
  'cipherlist_NULL',
  'cipherlist_aNULL',
  'cipherlist_EXPORT',
  'cipherlist_LOW',
  'cipherlist_3DES_IDEA',
];

/**
 * Ids read by the specific mappings below, or left out on purpose: the scan addresses services by
 * IP, so a name mismatch (cert_trust) says nothing; a private CA's chain and certificates without
 * CRL/OCSP are normal inside a network; BEAST_CBC_TLS1 repeats BEAST; the notAfter entry repeats
 * the expiry status.
 */
const HANDLED = new Set([
  ...PROTOCOLS.map(([id]) => id),
  ...WEAK_CIPHER_LISTS,
  'cert_expirationStatus',
  'cert_notAfter',
  'cert_chain_of_trust',
  'cert_keySize',
  'cert_signatureAlgorithm',
  'LOGJAM-common_primes',
  'cert_trust',
  'cert_revocation',
  'BEAST_CBC_TLS1',
  'DNS_CAArecord',
]);

const offered = (r: TestsslRecord | undefined) => r !== undefined && /^offered/i.test(r.finding);
const judged = (r: TestsslRecord | undefined) => r !== undefined && SEVERITIES[r.severity] !== undefined;
const cvesOf = (r: TestsslRecord) => (r.cve ?? '').split(/\s+/).filter((c) => /^CVE-\d{4}-\d{4,}$/.test(c));
const cwesOf = (r: TestsslRecord) => (r.cwe ?? '').split(/\s+/).filter((c) => /^CWE-\d+$/.test(c));

function protocolResult(byId: Map<string, TestsslRecord>): RuleResult | undefined {
  const found = PROTOCOLS.filter(([id]) => offered(byId.get(id)));
  if (found.length === 0) return undefined;
  const order: Severity[] = ['info', 'low', 'medium', 'high', 'critical'];
  const severity = found.map(([, , s]) => s).reduce((a, b) => (order.indexOf(a) >= order.indexOf(b) ? a : b));
  const names = found.map(([, n]) => n).join(', ');
  return {
    rule_id: 'tls-deprecated-protocol',
    title: `Deprecated TLS/SSL protocol versions enabled (${names})`,
    severity,
    category: 'weak_crypto',
    evidence: found.map(([id]) => `${id} ${byId.get(id)?.finding}`).join('; '),
    description:
      'The server accepts protocol versions that are deprecated: SSL 2 and 3 are broken (DROWN, POODLE), and ' +
      'TLS 1.0 and 1.1 were deprecated by RFC 8996 (weak MAC and key derivation, BEAST). PCI DSS forbids them.',
    remediation: 'Allow only TLS 1.2 and TLS 1.3 in the server configuration.',
    cve: found.some(([id]) => id === 'SSLv3')
      ? ['CVE-2014-3566']
      : found.some(([id]) => id === 'SSLv2')
        ? ['CVE-2016-0800']
        : [],
    cwe: ['CWE-327'],
    urls: ['https://www.rfc-editor.org/rfc/rfc8996'],
  };
}

function cipherResult(byId: Map<string, TestsslRecord>): RuleResult | undefined {
  const found = WEAK_CIPHER_LISTS.filter((id) => offered(byId.get(id)));
  if (found.length === 0) return undefined;
  return {
    rule_id: 'tls-weak-cipher',
    title: 'Weak TLS cipher suites offered',
    severity: 'medium',
    category: 'weak_crypto',
    evidence: found.map((id) => `${id} ${byId.get(id)?.finding}`).join('; '),
    description:
      'The server offers cipher suites that are broken or weak (RC4, 3DES/SWEET32, export, anonymous or ' +
      'NULL suites), which a network attacker can exploit to decrypt or tamper with traffic.',
    remediation: 'Offer only AEAD suites (AES-GCM, ChaCha20-Poly1305) with ECDHE key exchange.',
    cve: found.includes('cipherlist_3DES_IDEA') ? ['CVE-2016-2183'] : [],
    cwe: ['CWE-327'],
  };
}

function certificateResults(byId: Map<string, TestsslRecord>): RuleResult[] {
  const out: RuleResult[] = [];
  const expiry = byId.get('cert_expirationStatus');
  if (expiry !== undefined && /^expired/i.test(expiry.finding)) {
    out.push({
      rule_id: 'certificate-expired',
      title: 'TLS certificate expired',
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `cert_expirationStatus ${expiry.finding}; cert_notAfter ${byId.get('cert_notAfter')?.finding ?? '?'}`,
      description:
        'The certificate expired before the scan. Clients either refuse the connection or train users to click ' +
        'through warnings, which makes interception easy.',
      remediation: 'Renew the certificate and automate renewal (e.g. ACME) with expiry monitoring.',
      cwe: ['CWE-298'],
    });
  } else if (expiry !== undefined && /^expires/i.test(expiry.finding)) {
    out.push({
      rule_id: 'certificate-expiring-soon',
      title: 'TLS certificate expires soon',
      severity: 'info',
      category: 'misconfiguration',
      evidence: `cert_expirationStatus ${expiry.finding}; cert_notAfter ${byId.get('cert_notAfter')?.finding ?? '?'}`,
      description: 'The certificate is still valid but expires within testssl.sh\u2019s warning period.',
      remediation: 'Renew the certificate before it expires; automate renewal with expiry monitoring.',
    });
  }
  const chain = byId.get('cert_chain_of_trust');
  if (chain !== undefined && /self signed/i.test(chain.finding)) {
    out.push({
      rule_id: 'self-signed-certificate',
      title: 'Self-signed TLS certificate',
      severity: 'medium',
      category: 'misconfiguration',
      evidence: `cert_chain_of_trust ${chain.finding}`,
      description:
        'The certificate is issued by its own subject, so no trusted authority vouches for it and clients cannot ' +
        'tell it from an attacker\u2019s certificate.',
      remediation: 'Use a certificate from a public CA or from the organisation\u2019s internal CA that clients trust.',
      cwe: ['CWE-295'],
    });
  }
  const key = byId.get('cert_keySize');
  const sig = byId.get('cert_signatureAlgorithm');
  const weak = [key, sig].filter((r): r is TestsslRecord => judged(r));
  if (weak.length > 0) {
    out.push({
      rule_id: 'certificate-weak-key',
      title: judged(key) ? `Weak certificate key (${key?.finding})` : `Weak certificate signature (${sig?.finding})`,
      severity: 'medium',
      category: 'weak_crypto',
      evidence: weak.map((r) => `${r.id} ${r.finding}`).join('; '),
      description:
        'The certificate uses a key under 2048 bits or an MD5/SHA-1 signature, which no longer protect against ' +
        'forgery (NIST SP 800-131A).',
      remediation: 'Reissue the certificate with an RSA key of at least 2048 bits (or ECDSA P-256) and SHA-256.',
      cwe: ['CWE-326', 'CWE-328'],
    });
  }
  return out;
}

function logjamResult(byId: Map<string, TestsslRecord>): RuleResult | undefined {
  const r = byId.get('LOGJAM-common_primes');
  if (!judged(r) || r === undefined) return undefined;
  return {
    rule_id: 'tls-weak-dh-params',
    title: 'Weak Diffie-Hellman parameters',
    severity: 'medium',
    category: 'weak_crypto',
    evidence: `${r.id} ${r.finding}`,
    description:
      'The server uses a Diffie-Hellman group that is too small or widely shared (a common prime), which makes ' +
      'a precomputation attack (Logjam) practical.',
    remediation: 'Use ECDHE, or DH groups of at least 2048 bits (RFC 7919 ffdhe2048 or larger).',
    cve: cvesOf(r),
    cwe: ['CWE-326'],
  };
}

/** Every other check testssl.sh judged LOW or worse, under its own id. */
function otherResult(r: TestsslRecord): RuleResult | undefined {
  const severity = SEVERITIES[r.severity];
  if (severity === undefined || HANDLED.has(r.id)) return undefined;
  const cves = cvesOf(r);
  const vulnerability = cves.length > 0;
  return {
    rule_id: `testssl:${r.id}`,
    title: vulnerability ? `TLS vulnerability ${r.id} (${cves.join(', ')})` : `TLS check ${r.id}: ${r.finding}`,
    severity,
    category: 'weak_crypto',
    evidence: `${r.id} ${r.finding}`,
    description: vulnerability
      ? `testssl.sh reports the server as affected by ${r.id}: ${r.finding}.`
      : `testssl.sh judged this TLS property ${r.severity}: ${r.finding}.`,
    remediation: vulnerability
      ? 'Update the TLS library and server, and follow the advisories referenced for this vulnerability.'
      : 'Review the TLS configuration against current guidance (e.g. Mozilla\u2019s intermediate profile).',
    cve: cves,
    cwe: cwesOf(r),
  };
}

/** Findings of one service from testssl.sh's records (pure: the unit tests feed it real captured files). */
export function testsslFindings(inv: ToolInvocation, records: readonly TestsslRecord[]): SourcedFinding[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const results = [
    protocolResult(byId),
    cipherResult(byId),
    ...certificateResults(byId),
    logjamResult(byId),
    ...records.map(otherResult),
  ].filter((r): r is RuleResult => r !== undefined);
  return results.map((r) => toolFinding(NAME, inv, r));
}

const jsonFileOf = (inv: ToolInvocation): string => {
  const at = inv.args.indexOf('--jsonfile');
  const file = at < 0 ? undefined : inv.args[at + 1];
  if (file === undefined) throw new Error('invocation without --jsonfile');
  return file;
};

export const testssl: EnrichmentTool = {
  kind: 'enrichment',
  name: NAME,
  binaries: ['testssl.sh', 'testssl'],
  debianPackage: 'testssl.sh',
  capability: 'full TLS audit of each TLS service: protocols, ciphers, certificate, known TLS vulnerabilities',
  // Thousands of handshakes per service; on a loaded host a full audit takes minutes.
  timeoutMs: 15 * 60_000,
  plan(hosts, ctx) {
    return tlsServices(hosts).map((t) => ({
      ...located(t),
      args: [
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
        path.join(ctx.workDir, `testssl-${t.ip.replaceAll(':', '_')}-${t.port}.json`),
        hostPort(t),
      ],
    }));
  },
  parse(inv) {
    let text: string;
    try {
      text = readFileSync(jsonFileOf(inv), 'utf8');
    } catch {
      throw new Error('testssl.sh wrote no JSON file');
    }
    return testsslFindings(inv, JSON.parse(text) as TestsslRecord[]);
  },
};
