import type { Ajv as Ajv2, Options } from 'ajv';
import sarifSchema from '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json' with { type: 'json' };
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { findingFingerprint } from '@svc/protocol/node';

/** A small session in the session file's shape: a tracked finding, an accepted risk, a host-level finding, one without a host. */
export const SSH_FP = findingFingerprint({ rule_id: 'ssh-weak-kex', host: '10.0.0.5', port: 22, protocol: 'tcp' });
export const TELNET_FP = findingFingerprint({ rule_id: 'telnet-open', host: '10.0.0.7', port: 23, protocol: 'tcp' });

export function smallSession(sessionId = '20260301_120000'): Record<string, unknown> {
  return {
    metadata: {
      session_id: sessionId,
      client_id: 'acme',
      target: '10.0.0.0/24',
      tool_version: '4.2.3',
      finished_at: '2026-03-01T12:30:00Z',
    },
    findings: [
      {
        id: 'f-001',
        fingerprint: SSH_FP,
        rule_id: 'ssh-weak-kex',
        title: 'Weak SSH key exchange, "diffie-hellman-group1"',
        severity: 'high',
        host: '10.0.0.5',
        hostname: 'gw.example',
        port: 22,
        protocol: 'tcp',
        service: 'ssh',
        evidence: 'kex: diffie-hellman-group1-sha1',
        description: 'The server offers a key exchange,\nbroken since 2015.',
        remediation: 'Disable group1 key exchange.',
        references: { cve: ['CVE-2015-4000'], cwe: ['CWE-327'], urls: ['https://weakdh.org/'] },
        cvss: 7.4,
        kev: true,
        kev_date_added: '2024-05-01',
        epss: 0.9123,
        epss_percentile: 0.99,
      },
      {
        id: 'f-002',
        rule_id: 'telnet-open',
        title: 'Telnet service',
        severity: 'medium',
        host: '10.0.0.7',
        port: 23,
        protocol: 'tcp',
        service: 'telnet',
        remediation: '=cmd|" /C calc"!A0',
      },
      { id: 'f-003', rule_id: 'icmp-timestamp', title: 'ICMP timestamp reply', severity: 'low', host: '10.0.0.9' },
      { id: 'f-004', title: 'Scan incomplete', severity: 'info' },
    ],
    remediation: [
      { fingerprint: SSH_FP, title: 'Weak SSH key exchange', status: 'in_progress', first_seen: '20260201_120000' },
      {
        fingerprint: TELNET_FP,
        title: 'Telnet service',
        status: 'persistent',
        first_seen: '20260101_120000',
        exception_status: 'accepted',
        exception_reason: 'Legacy PLC, isolated VLAN',
        exception_approver: 'ciso@example.com',
        exception_expiry: '2099-12-31',
      },
    ],
  };
}

/** CommonJS default exports arrive wrapped under ESM (as packages/portal/src/http/validation.ts notes). */
const unwrap = <T>(m: unknown): T => ((m as { default?: T }).default ?? m) as T;

/**
 * The SARIF 2.1.0 JSON schema as published on the npm registry (@microsoft/jest-sarif ships
 * sarif-2.1.0-rtm.5.json, the final 2.1.0 schema, draft-04), compiled with formats checked.
 * unicodeRegExp is off: one pattern of the published schema (language tags) is not valid in unicode mode.
 */
export function sarifValidator(): (log: unknown) => string[] {
  const Ajv = unwrap<new (o: Options) => Ajv2>(Ajv04);
  const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: false });
  unwrap<(a: Ajv2) => Ajv2>(addFormats)(ajv);
  const validate = ajv.compile(sarifSchema as object);
  return (log) => (validate(log) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

/**
 * Findings that name several CVEs and CWEs: OpenSSH 7.4 as nmap's `vulners`
 * and a Nessus plugin report it, the CVEs in `references.cve` and the older single `cve`, with
 * a lower-case and a repeated id, and CWE ids some of which no CWE list holds (dropped). The
 * same rule on a second host names another CWE set.
 */
/** What the first finding's CVEs and CWEs read as: upper case, once each, in file order, valid ids only. */
export const F1_CVES = ['CVE-2016-10009', 'CVE-2016-10010', 'CVE-2016-10012', 'CVE-2016-10708'];
export const F1_CWES = ['CWE-284', 'CWE-264', 'CWE-79'];
export function multiReferenceSession(): Record<string, unknown> {
  return {
    metadata: { session_id: '20260301_120000', target: '10.0.0.0/24', finished_at: '2026-03-01T12:30:00Z' },
    findings: [
      {
        id: 'f-001',
        rule_id: 'nessus-99359',
        title: 'OpenSSH < 7.5',
        severity: 'high',
        host: '10.0.0.5',
        port: 22,
        protocol: 'tcp',
        references: {
          cve: ['CVE-2016-10009', 'CVE-2016-10010', 'cve-2016-10012', 'CVE-2016-10009', 'not-a-cve'],
          cwe: ['CWE-284', 'CWE-264', 'cwe-079', 'CWE-0', 'CWE-123456789', 'CWE-284'],
          urls: [],
        },
        cve: 'CVE-2016-10708',
        cvss: 7.8,
      },
      {
        id: 'f-002',
        rule_id: 'nessus-99359',
        title: 'OpenSSH < 7.5',
        severity: 'high',
        host: '10.0.0.6',
        port: 2222,
        protocol: 'tcp',
        references: { cve: ['CVE-2017-15906'], cwe: ['CWE-200'] },
      },
      { id: 'f-003', rule_id: 'ssh-banner', title: 'SSH banner', severity: 'info', host: '10.0.0.5', port: 22 },
    ],
  };
}
