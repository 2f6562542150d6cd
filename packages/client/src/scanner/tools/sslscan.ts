import { SaxesParser } from 'saxes';
import type { RuleResult } from '../rules/finding.ts';
import { toolFinding } from './finding.ts';
import { hostPort, located, tlsServices } from './services.ts';
import type { EnrichmentTool, SourcedFinding, ToolInvocation } from './types.ts';

/**
 * sslscan: protocols, weak cipher suites and the certificate's key of each TLS service, from its
 * XML on stdout. A few seconds per service, so it runs next to testssl.sh; its findings use the same
 * rule ids as nmap's and testssl.sh's and fold into theirs, naming sslscan as a further source.
 */

const NAME = 'sslscan';

interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  text: string;
  /** The enclosing element's name. */
  parent: string | undefined;
}

/** Every element of the document with its attributes and text (sslscan's output is small). */
function elements(xml: string): XmlElement[] {
  const parser = new SaxesParser({ xmlns: false });
  const out: XmlElement[] = [];
  const stack: XmlElement[] = [];
  parser.on('opentag', (tag) => {
    const el: XmlElement = {
      name: tag.name,
      attributes: tag.attributes as Record<string, string>,
      text: '',
      parent: stack.at(-1)?.name,
    };
    out.push(el);
    stack.push(el);
  });
  const addText = (t: string) => {
    const top = stack.at(-1);
    if (top !== undefined) top.text += t;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => stack.pop());
  parser.write(xml).close();
  return out;
}

const DEPRECATED: ReadonlyArray<
  readonly [type: string, version: string, name: string, severity: RuleResult['severity']]
> = [
  ['ssl', '2', 'SSLv2', 'critical'],
  ['ssl', '3', 'SSLv3', 'high'],
  ['tls', '1.0', 'TLSv1.0', 'medium'],
  ['tls', '1.1', 'TLSv1.1', 'medium'],
];

/** sslscan's own judgement of a suite, plus the names that are broken whatever it says. */
const WEAK_STRENGTH = new Set(['null', 'anonymous', 'weak', 'medium']);
const WEAK_NAME = /(^|-)(RC4|DES|3DES|EXP|NULL|anon|MD5)(-|$)|DES-CBC3/i;

/** Findings of one service from sslscan's XML (pure: the unit tests feed it real captured output). */
export function sslscanFindings(inv: ToolInvocation, xml: string): SourcedFinding[] {
  const els = elements(xml);
  if (!els.some((e) => e.name === 'ssltest')) throw new Error('no <ssltest> in the output');
  const results: RuleResult[] = [];
  const enabled = DEPRECATED.filter(([type, version]) =>
    els.some(
      (e) =>
        e.name === 'protocol' &&
        e.attributes['type'] === type &&
        e.attributes['version'] === version &&
        e.attributes['enabled'] === '1',
    ),
  );
  if (enabled.length > 0) {
    const order = ['info', 'low', 'medium', 'high', 'critical'];
    const names = enabled.map(([, , n]) => n).join(', ');
    results.push({
      rule_id: 'tls-deprecated-protocol',
      title: `Deprecated TLS/SSL protocol versions enabled (${names})`,
      severity: enabled.map(([, , , s]) => s).reduce((a, b) => (order.indexOf(a) >= order.indexOf(b) ? a : b)),
      category: 'weak_crypto',
      evidence: `enabled ${names}`,
      description:
        'The server accepts protocol versions that are deprecated: SSL 2 and 3 are broken (DROWN, POODLE), and ' +
        'TLS 1.0 and 1.1 were deprecated by RFC 8996 (weak MAC and key derivation, BEAST). PCI DSS forbids them.',
      remediation: 'Allow only TLS 1.2 and TLS 1.3 in the server configuration.',
      cve: enabled.some(([, , n]) => n === 'SSLv3')
        ? ['CVE-2014-3566']
        : enabled.some(([, , n]) => n === 'SSLv2')
          ? ['CVE-2016-0800']
          : [],
      cwe: ['CWE-327'],
      urls: ['https://www.rfc-editor.org/rfc/rfc8996'],
    });
  }
  const weak = els.filter(
    (e) =>
      e.name === 'cipher' &&
      (WEAK_STRENGTH.has(e.attributes['strength'] ?? '') || WEAK_NAME.test(e.attributes['cipher'] ?? '')),
  );
  if (weak.length > 0) {
    const listed = [...new Set(weak.map((e) => `${e.attributes['cipher']} (${e.attributes['strength']})`))];
    results.push({
      rule_id: 'tls-weak-cipher',
      title: 'Weak TLS cipher suites offered',
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `accepted ${listed.slice(0, 8).join(', ')}${listed.length > 8 ? ` and ${listed.length - 8} more` : ''}`,
      description:
        'The server offers cipher suites that are broken or weak (RC4, 3DES/SWEET32, export, anonymous or ' +
        'NULL suites), which a network attacker can exploit to decrypt or tamper with traffic.',
      remediation: 'Offer only AEAD suites (AES-GCM, ChaCha20-Poly1305) with ECDHE key exchange.',
      cve: weak.some((e) => /DES-CBC3|3DES/i.test(e.attributes['cipher'] ?? '')) ? ['CVE-2016-2183'] : [],
      cwe: ['CWE-327'],
    });
  }
  const smallDh = els.filter((e) => e.name === 'cipher' && Number(e.attributes['dhebits'] ?? Number.NaN) < 2048);
  if (smallDh.length > 0) {
    const listed = [
      ...new Set(
        smallDh.map((e) => `${e.attributes['sslversion']} ${e.attributes['cipher']} (dh ${e.attributes['dhebits']})`),
      ),
    ];
    results.push({
      rule_id: 'tls-weak-key-exchange',
      title: `TLS key exchange under 2048 bits (dh ${smallDh[0]?.attributes['dhebits']})`,
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `accepted ${listed.slice(0, 6).join('; ')}${listed.length > 6 ? ` and ${listed.length - 6} more` : ''}`,
      description:
        'Some cipher suites use a Diffie-Hellman key exchange under 2048 bits, which well-funded attackers can ' +
        'break (Logjam).',
      remediation: 'Use ECDHE key exchange and DH groups of at least 2048 bits.',
      cve: ['CVE-2015-4000'],
      cwe: ['CWE-326'],
    });
  }
  // The leaf certificate: the first <pk> inside a <certificate>.
  const pk = els.find((e) => e.name === 'pk' && e.parent === 'certificate');
  const type = pk?.attributes['type']?.toLowerCase();
  const bits = Number(pk?.attributes['bits']);
  if ((type === 'rsa' || type === 'dsa') && Number.isFinite(bits) && bits < 2048) {
    results.push({
      rule_id: 'certificate-weak-key',
      title: `Weak certificate key (${type.toUpperCase()} ${bits} bits)`,
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `certificate key ${type.toUpperCase()} ${bits} bits`,
      description:
        'The certificate uses a key under 2048 bits or an MD5/SHA-1 signature, which no longer protect against ' +
        'forgery (NIST SP 800-131A).',
      remediation: 'Reissue the certificate with an RSA key of at least 2048 bits (or ECDSA P-256) and SHA-256.',
      cwe: ['CWE-326', 'CWE-328'],
    });
  }
  return results.map((r) => toolFinding(NAME, inv, r));
}

export const sslscan: EnrichmentTool = {
  kind: 'enrichment',
  name: NAME,
  debianPackage: 'sslscan',
  capability: 'quick TLS check of each TLS service: protocol versions, weak cipher suites, certificate key size',
  timeoutMs: 3 * 60_000,
  plan(hosts) {
    return tlsServices(hosts).map((t) => ({
      ...located(t),
      args: ['--xml=-', '--no-colour', '--timeout=10', hostPort(t)],
    }));
  },
  parse(inv, output) {
    return sslscanFindings(inv, output.stdout);
  },
};
