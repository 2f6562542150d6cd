import { coverageBlock, type SessionFile } from '@svc/protocol';
import type { LicenseState } from '@svc/client/kit';
import { orcSettingsFrom, parseExceptionsFile, runStages, type ScanFinding, type TrendPoint } from '@svc/client/engine';

/**
 * A realistic session for the report tests, produced by the pipeline's own stages: findings
 * like the nmap rules write them (evidence, advice, references), one of them hostile (its
 * evidence and title hold markup), a prior session for remediation tracking, an accepted and
 * an expired exception, and ORC 9.64 enabled.
 */

export const HOSTILE_EVIDENCE = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`;
export const HOSTILE_TITLE = 'Banner <b>bold</b> & "quoted"';

export const SESSION_ID = '20250301_140000';
const NOW = new Date('2025-03-01T14:10:00.000Z');

/** A business license validated online: the state the license module hands the stages. */
export const BUSINESS_LICENSE: LicenseState = {
  licensed: true,
  tier: 'business',
  source: 'env:SVC_LICENSE_KEY',
  basis: 'online',
  format_tier: 'business',
  valid: true,
  reason: 'ok',
  expires_at: null,
  client_id: 'acme',
  fingerprint: '0123456789abcdef',
  key_sha256: '0123456789abcdef',
  validated_at: '2025-03-01T14:00:00.000Z',
  unreachable: null,
};

export const FINDINGS: ScanFinding[] = [
  {
    rule_id: 'outdated-software',
    title: 'OpenSSH 8.9 vulnerable to regreSSHion (CVE-2024-6387)',
    severity: 'critical',
    host: '10.0.0.5',
    hostname: 'ssh01',
    port: 22,
    protocol: 'tcp',
    service: 'ssh',
    evidence: 'SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.1',
    description: 'A signal handler race in sshd allows unauthenticated remote code execution as root.',
    remediation: 'Upgrade OpenSSH to 9.8p1 or later, or set LoginGraceTime 0 until then.',
    references: { cve: ['CVE-2024-6387'], cwe: ['CWE-364'], urls: ['https://www.openssh.com/txt/release-9.8'] },
    cvss: 8.1,
  },
  {
    rule_id: 'default-credentials',
    title: 'Default admin password',
    severity: 'critical',
    host: '10.0.0.6',
    port: 80,
    protocol: 'tcp',
    service: 'http',
    evidence: 'HTTP 200 after POST /login admin:admin',
    description: 'The web console accepts the vendor default credentials.',
    remediation: 'Set a unique admin password and restrict the console to the management network.',
    references: { cwe: ['CWE-1392'] },
  },
  {
    rule_id: 'telnet-open',
    title: 'Telnet enabled',
    severity: 'high',
    host: '10.0.0.6',
    port: 23,
    protocol: 'tcp',
    service: 'telnet',
    evidence: 'Debian GNU/Linux 12\\r\\nplc01 login:',
    description: 'Telnet sends credentials in cleartext.',
    remediation: 'Disable telnet; use SSH.',
    references: { cwe: ['CWE-319'] },
  },
  {
    rule_id: 'tls-weak-cipher',
    title: 'TLS RC4 cipher suites supported',
    severity: 'medium',
    host: '10.0.0.5',
    port: 443,
    protocol: 'tcp',
    service: 'https',
    evidence: 'TLSv1.2: TLS_RSA_WITH_RC4_128_SHA',
    remediation: 'Disable RC4 cipher suites.',
  },
  {
    rule_id: 'tls-weak-cipher',
    title: 'SWEET32: 64-bit block cipher (3DES) supported',
    severity: 'medium',
    host: '10.0.0.7',
    port: 443,
    protocol: 'tcp',
    service: 'https',
    evidence: 'TLSv1.2: TLS_RSA_WITH_3DES_EDE_CBC_SHA',
    remediation: 'Disable 3DES cipher suites.',
  },
  {
    rule_id: 'tls-deprecated-protocol',
    title: 'TLS 1.0 enabled',
    severity: 'medium',
    host: '10.0.0.7',
    port: 443,
    protocol: 'tcp',
    service: 'https',
    evidence: 'TLSv1.0 offered',
    remediation: 'Allow TLS 1.2 and later only.',
  },
  {
    rule_id: 'http-banner',
    title: HOSTILE_TITLE,
    severity: 'low',
    host: '10.1.0.9',
    hostname: 'web<9>',
    port: 8080,
    protocol: 'tcp',
    service: 'http',
    evidence: HOSTILE_EVIDENCE,
    description: 'The server banner reveals its version.',
    remediation: 'Hide the version banner.',
  },
  { rule_id: 'http-title', title: 'Web page title', severity: 'info', host: '10.0.0.5', port: 80, protocol: 'tcp' },
];

export interface ReportSession {
  doc: SessionFile;
  trend: TrendPoint[];
}

export function reportSession(orcEnabled = true, sessionId = SESSION_ID): ReportSession {
  const { doc } = runStages({
    findings: FINDINGS,
    hosts: [
      { ip: '10.0.0.5', hostname: 'ssh01', os_guess: 'Linux 5.x', open_ports: [22, 80, 443] },
      { ip: '10.0.0.6', os_guess: 'Embedded', open_ports: [23, 80] },
      { ip: '10.0.0.7', open_ports: [443] },
      { ip: '10.1.0.9', hostname: 'web<9>', open_ports: [8080] },
    ],
    // 10.0.0.8 answered with no open port left: its RDP item is resolved.
    coverage: coverageBlock({
      hosts: ['10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8', '10.1.0.9'],
      ports: { tcp: [[1, 65535]], udp: [[161, 161]] },
      profile: 'standard',
      tools: ['nmap'],
      source: 'svc-scan',
    }),
    prior: {
      metadata: { session_id: '20250222_140000', target: '10.0.0.0/16' },
      remediation: [
        {
          title: 'Telnet enabled',
          severity: 'high',
          host: '10.0.0.6',
          status: 'in_progress',
          note: 'OPS-7 <replace PLC>',
          first_seen: '20250215_140000',
          status_changed: '2025-02-20T10:00:00.000Z',
        },
        { title: 'RDP exposed', severity: 'high', host: '10.0.0.8', status: 'new', first_seen: '20250222_140000' },
      ],
    },
    exceptions: parseExceptionsFile(
      JSON.stringify({
        exceptions: [
          {
            title: 'Default admin password',
            reason: 'Kiosk, replaced in April',
            approver: 'CISO',
            approved_at: '2025-02-01T09:00:00Z',
            expiry: '2025-04-30',
          },
          {
            title: 'Telnet enabled',
            reason: 'Old PLC <needs telnet>',
            approver: 'Plant manager',
            expiry: '2025-02-28',
          },
        ],
      }),
    ).rules,
    settings: {
      sessionId,
      target: '10.0.0.0/16',
      clientId: 'acme',
      client: 'ACME Corp',
      toolVersion: '4.2.3',
      scanProfile: 'standard',
      startedAt: new Date('2025-03-01T14:00:00.000Z'),
      schedule: null,
      orc: orcSettingsFrom(orcEnabled ? { CLIENT_TYPE: 'political_subdivision', ORC_ATTEST_TRAINING: 'true' } : {}),
    },
    license: { tier: 'business', state: BUSINESS_LICENSE },
    now: NOW,
  });
  const score = doc.summary?.risk_score ?? 0;
  const trend: TrendPoint[] = [
    {
      session_id: '20250215_140000',
      finished_at: '2025-02-15T14:10:00.000Z',
      risk_score: 81,
      risk_score_operational: null,
    },
    {
      session_id: '20250222_140000',
      finished_at: '2025-02-22T14:10:00.000Z',
      risk_score: 74,
      risk_score_operational: 70,
    },
    {
      session_id: sessionId,
      finished_at: NOW.toISOString(),
      risk_score: score,
      risk_score_operational: doc.summary?.risk_score_operational ?? null,
    },
  ];
  return { doc, trend };
}
