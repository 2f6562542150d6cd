import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort, ScriptNode } from '../parse/types.ts';
import { finding, openPorts } from './finding.ts';
import { elemAt, portScript, tableAt } from './script-tree.ts';
import type { RuleContext, RuleFamily } from './types.ts';

/**
 * Certificate checks from ssl-cert's tables: expired or not yet valid (judged against the scan's
 * time), self-signed (issuer equals subject) and weak (RSA/DSA under 2048 bits, MD5/SHA-1 signature).
 */

/** ssl-cert writes ISO times without a zone, in UTC. */
function utc(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

function dn(nodes: readonly ScriptNode[] | undefined): string {
  return (nodes ?? [])
    .flatMap((n) => (n.kind === 'elem' ? [`${n.key ?? ''}=${n.value}`] : []))
    .sort()
    .join(', ');
}

function certFindings(host: NmapHost, port: NmapPort, ctx: RuleContext): ScanFinding[] {
  const cert = portScript(port, 'ssl-cert');
  if (cert === undefined) return [];
  const c = cert.children;
  const subject = dn(tableAt(c, 'subject')?.children);
  const issuer = dn(tableAt(c, 'issuer')?.children);
  const notBefore = elemAt(c, 'validity', 'notBefore');
  const notAfter = elemAt(c, 'validity', 'notAfter');
  const summary = `ssl-cert: subject ${subject || '?'}; issuer ${issuer || '?'}; valid ${notBefore ?? '?'} to ${notAfter ?? '?'}`;
  const out: ScanFinding[] = [];
  const after = utc(notAfter);
  const before = utc(notBefore);
  const at = ctx.scanTime.toISOString();
  if (after !== undefined && after.getTime() < ctx.scanTime.getTime()) {
    out.push(
      finding(host, port, {
        rule_id: 'certificate-expired',
        title: 'TLS certificate expired',
        severity: 'medium',
        category: 'weak_crypto',
        evidence: `${summary}; scanned ${at}`,
        description:
          'The certificate expired before the scan. Clients either refuse the connection or train users to click ' +
          'through warnings, which makes interception easy.',
        remediation: 'Renew the certificate and automate renewal (e.g. ACME) with expiry monitoring.',
        cwe: ['CWE-298'],
      }),
    );
  }
  if (before !== undefined && before.getTime() > ctx.scanTime.getTime()) {
    out.push(
      finding(host, port, {
        rule_id: 'certificate-not-yet-valid',
        title: 'TLS certificate not yet valid',
        severity: 'medium',
        category: 'weak_crypto',
        evidence: `${summary}; scanned ${at}`,
        description: 'The certificate is not valid until after the scan time: clients reject it (or a clock is wrong).',
        remediation: 'Install a certificate valid now and check the clocks of the server and the issuing CA.',
        cwe: ['CWE-298'],
      }),
    );
  }
  if (subject !== '' && subject === issuer) {
    out.push(
      finding(host, port, {
        rule_id: 'self-signed-certificate',
        title: 'Self-signed TLS certificate',
        severity: 'medium',
        category: 'misconfiguration',
        evidence: summary,
        description:
          'The certificate is issued by its own subject, so no trusted authority vouches for it and clients cannot ' +
          'tell it from an attacker\u2019s certificate.',
        remediation:
          'Use a certificate from a public CA or from the organisation\u2019s internal CA that clients trust.',
        cwe: ['CWE-295'],
      }),
    );
  }
  const type = elemAt(c, 'pubkey', 'type')?.toLowerCase();
  const bits = Number(elemAt(c, 'pubkey', 'bits'));
  const sig = elemAt(c, 'sig_algo') ?? '';
  const smallKey = (type === 'rsa' || type === 'dsa' || type === 'dh') && Number.isFinite(bits) && bits < 2048;
  const weakSig = /md5|sha1With|sha1$/i.test(sig);
  if (smallKey || weakSig) {
    out.push(
      finding(host, port, {
        rule_id: 'certificate-weak-key',
        title: smallKey
          ? `Weak certificate key (${type?.toUpperCase()} ${bits} bits)`
          : `Weak certificate signature (${sig})`,
        severity: 'medium',
        category: 'weak_crypto',
        evidence: `ssl-cert: public key ${type ?? '?'} ${Number.isFinite(bits) ? bits : '?'} bits; signature ${sig || '?'}`,
        description:
          'The certificate uses a key under 2048 bits or an MD5/SHA-1 signature, which no longer protect against ' +
          'forgery (NIST SP 800-131A).',
        remediation: 'Reissue the certificate with an RSA key of at least 2048 bits (or ECDSA P-256) and SHA-256.',
        cwe: ['CWE-326', 'CWE-328'],
      }),
    );
  }
  return out;
}

export const certificates: RuleFamily = {
  id: 'certificates',
  scripts: ['ssl-cert'],
  evaluate(host, ctx) {
    return openPorts(host).flatMap((port) => certFindings(host, port, ctx));
  },
};
