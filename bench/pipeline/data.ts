import type { Severity } from '@svc/protocol';
import type { LicenseState } from '@svc/client/kit';
import type { ExceptionRule, HostInfo, ScanFinding, StagesInput, TrendPoint } from '@svc/client/engine';
import { normalizeFindings, orcSettingsFrom, Random, runStages } from '@svc/client/engine';

/**
 * Deterministic, realistic scanner input for the pipeline benchmark (and the tests that pin
 * the stages' output at size): findings of the detection rules' kinds (rule ids of
 * compliance-map.ts, a few categories given explicitly, CVE-only and informational ones),
 * with evidence, advice and references, on hosts spread over a few /24 subnets; a prior
 * session of the same target (run through the same stages) sharing about half the findings,
 * with some items in progress or deferred; a few dozen exception rules, some expired; and a
 * trend of prior scores. The same seed gives the same bytes on every machine.
 */

export interface PipelineData {
  input: StagesInput;
  trend: TrendPoint[];
}

export interface DataOptions {
  findings: number;
  hosts: number;
  seed: number;
  /** Share of this scan's findings the prior session had too (persistent). */
  persistent?: number;
  exceptions?: number;
  trendPoints?: number;
}

export const TARGET = '10.20.0.0/16';
export const SESSION_ID = '20260302_020000';
const PRIOR_SESSION_ID = '20260223_020000';
const STARTED = new Date('2026-03-02T02:00:00.000Z');
export const NOW = new Date('2026-03-02T02:41:17.000Z');

export const LICENSE: LicenseState = {
  licensed: true,
  tier: 'business',
  source: 'env:SVC_LICENSE_KEY',
  basis: 'online',
  format_tier: 'business',
  valid: true,
  reason: 'ok',
  expires_at: '2027-01-01T00:00:00.000Z',
  client_id: 'county-of-example',
  fingerprint: '3f9a0c1be2d47a58',
  key_sha256: '3f9a0c1be2d47a58',
  validated_at: '2026-03-02T01:59:58.000Z',
  unreachable: null,
};

interface Rule {
  rule_id: string;
  severities: readonly Severity[];
  ports: readonly [number, string][];
  title: (r: Random) => string;
  evidence: (r: Random, port: number) => string;
  description: string;
  remediation: string;
  cve?: readonly string[];
  cwe?: readonly string[];
  /** Set on the finding itself (detection rules whose id the table does not know). */
  category?: string;
}

const pick = <T>(r: Random, xs: readonly T[]): T => r.pick(xs);
const ver = (r: Random, major: number) => `${major}.${r.int(0, 9)}.${r.int(0, 30)}`;

const RULES: readonly Rule[] = [
  {
    rule_id: 'telnet-open',
    severities: ['high'],
    ports: [[23, 'telnet']],
    title: () => 'Telnet service enabled',
    evidence: (r) => `${pick(r, ['Debian GNU/Linux 12', 'Cisco IOS 15.2', 'BusyBox v1.31'])}\\r\\nlogin:`,
    description: 'Telnet sends credentials and session data in cleartext.',
    remediation: 'Disable telnet and manage the device over SSH.',
    cwe: ['CWE-319'],
  },
  {
    rule_id: 'ftp-cleartext',
    severities: ['medium'],
    ports: [[21, 'ftp']],
    title: () => 'FTP without TLS',
    evidence: (r) => `220 ${pick(r, ['ProFTPD 1.3.5', 'vsFTPd 3.0.3', 'Microsoft FTP Service'])} ready`,
    description: 'FTP without AUTH TLS exposes credentials in transit.',
    remediation: 'Require FTPS or replace FTP with SFTP.',
    cwe: ['CWE-319'],
  },
  {
    rule_id: 'http-basic-auth-cleartext',
    severities: ['medium', 'high'],
    ports: [
      [80, 'http'],
      [8080, 'http-proxy'],
    ],
    title: () => 'HTTP Basic authentication over cleartext',
    evidence: (r) => `WWW-Authenticate: Basic realm="${pick(r, ['Router', 'NAS', 'Printer', 'Camera'])}"`,
    description: 'Basic credentials are base64, readable by anyone on the path.',
    remediation: 'Serve the login over HTTPS only and redirect HTTP.',
    cwe: ['CWE-523'],
  },
  {
    rule_id: 'tls-deprecated-protocol',
    severities: ['medium'],
    ports: [
      [443, 'https'],
      [8443, 'https-alt'],
      [993, 'imaps'],
    ],
    title: (r) => `${pick(r, ['TLS 1.0', 'TLS 1.1', 'SSLv3'])} enabled`,
    evidence: (r) => `${pick(r, ['TLSv1.0', 'TLSv1.1', 'SSLv3'])} offered; ${r.int(4, 28)} cipher suites`,
    description: 'Deprecated protocol versions have known attacks (BEAST, POODLE).',
    remediation: 'Allow TLS 1.2 and later only.',
    cwe: ['CWE-327'],
  },
  {
    rule_id: 'tls-weak-cipher',
    severities: ['low', 'medium'],
    ports: [
      [443, 'https'],
      [8443, 'https-alt'],
      [3389, 'ms-wbt-server'],
    ],
    title: (r) => pick(r, ['TLS RC4 cipher suites supported', 'SWEET32: 64-bit block cipher (3DES) supported']),
    evidence: (r) => `TLSv1.2: ${pick(r, ['TLS_RSA_WITH_RC4_128_SHA', 'TLS_RSA_WITH_3DES_EDE_CBC_SHA'])}`,
    description: 'Weak ciphers allow recovery of plaintext from long-lived sessions.',
    remediation: 'Disable RC4 and 3DES cipher suites.',
    cwe: ['CWE-326'],
  },
  {
    rule_id: 'ssh-weak-algorithms',
    severities: ['low'],
    ports: [[22, 'ssh']],
    title: () => 'SSH weak key exchange or MAC algorithms',
    evidence: (r) => `kex: ${pick(r, ['diffie-hellman-group1-sha1', 'diffie-hellman-group14-sha1'])}; mac: hmac-md5`,
    description: 'SHA-1 key exchange and MD5 MACs are deprecated.',
    remediation: 'Restrict KexAlgorithms and MACs to current algorithms.',
    cwe: ['CWE-327'],
  },
  {
    rule_id: 'default-credentials',
    severities: ['critical'],
    ports: [
      [80, 'http'],
      [8080, 'http-proxy'],
      [22, 'ssh'],
    ],
    title: (r) => `Default ${pick(r, ['admin', 'root', 'operator'])} password accepted`,
    evidence: (r) => `login ${pick(r, ['admin:admin', 'root:root', 'admin:password', 'operator:1234'])} succeeded`,
    description: 'The device accepts the vendor default credentials.',
    remediation: 'Set a unique password and restrict management to the admin network.',
    cwe: ['CWE-1392'],
  },
  {
    rule_id: 'snmp-default-community',
    severities: ['high'],
    ports: [[161, 'snmp']],
    title: () => 'SNMP default community string',
    evidence: (r) =>
      `community "public": sysDescr=${pick(r, ['HP ETHERNET MULTI-ENVIRONMENT', 'Linux 4.19', 'RouterOS'])}`,
    description: 'Anyone can read (or write) the device configuration over SNMP.',
    remediation: 'Change the community strings or move to SNMPv3 with authentication.',
    cwe: ['CWE-1392'],
  },
  {
    rule_id: 'ftp-anonymous',
    severities: ['medium'],
    ports: [[21, 'ftp']],
    title: () => 'Anonymous FTP login allowed',
    evidence: (r) => `230 Login successful; ${r.int(1, 400)} files in /`,
    description: 'Anonymous users can read the FTP share.',
    remediation: 'Disable anonymous login.',
    cwe: ['CWE-284'],
  },
  {
    rule_id: 'outdated-software',
    severities: ['critical', 'high', 'medium'],
    ports: [
      [22, 'ssh'],
      [80, 'http'],
      [443, 'https'],
      [3306, 'mysql'],
    ],
    title: (r) => `${pick(r, ['OpenSSH', 'Apache httpd', 'nginx', 'MySQL'])} ${ver(r, r.int(2, 9))} is out of date`,
    evidence: (r) =>
      `Server: ${pick(r, ['Apache/2.4.49 (Unix)', 'nginx/1.18.0', 'SSH-2.0-OpenSSH_8.9p1', '5.7.33-log'])}`,
    description: 'The version has published vulnerabilities.',
    remediation: 'Upgrade to the vendor-supported release.',
    cve: ['CVE-2024-6387', 'CVE-2021-41773', 'CVE-2021-23017', 'CVE-2023-38408'],
    cwe: ['CWE-1104'],
  },
  {
    rule_id: 'smbv1-enabled',
    severities: ['high'],
    ports: [[445, 'microsoft-ds']],
    title: () => 'SMBv1 enabled',
    evidence: () => 'Dialect NT LM 0.12 negotiated',
    description: 'SMBv1 is exploited by EternalBlue and its successors.',
    remediation: 'Disable SMBv1 on the host.',
    cve: ['CVE-2017-0144'],
  },
  {
    rule_id: 'rdp-exposed',
    severities: ['high', 'medium'],
    ports: [[3389, 'ms-wbt-server']],
    title: () => 'Remote Desktop exposed',
    evidence: (r) =>
      `RDP ${pick(r, ['NLA required', 'NLA not required'])}; CN=${pick(r, ['WS', 'SRV', 'DC'])}-${r.int(1, 99)}`,
    description: 'RDP is a frequent ransomware entry point.',
    remediation: 'Put RDP behind a VPN or gateway and require NLA.',
  },
  {
    rule_id: 'database-exposed',
    severities: ['high', 'critical'],
    ports: [
      [3306, 'mysql'],
      [5432, 'postgresql'],
      [1433, 'ms-sql-s'],
      [27017, 'mongodb'],
    ],
    title: (r) => `${pick(r, ['MySQL', 'PostgreSQL', 'SQL Server', 'MongoDB'])} reachable from the scan network`,
    evidence: (r) => `handshake: protocol ${r.int(9, 12)}, version ${ver(r, r.int(5, 16))}`,
    description: 'A database listening on every interface widens the attack surface.',
    remediation: 'Bind the database to the application network only and firewall the port.',
  },
  {
    rule_id: 'smb-exposed',
    severities: ['medium'],
    ports: [[445, 'microsoft-ds']],
    title: () => 'SMB file sharing exposed',
    evidence: (r) => `shares: ${pick(r, ['ADMIN$, C$, IPC$', 'Public, Scans', 'IPC$'])}`,
    description: 'File shares reachable from user networks spread ransomware.',
    remediation: 'Restrict SMB to the hosts that need it.',
  },
  {
    rule_id: 'directory-listing',
    severities: ['low', 'medium'],
    ports: [
      [80, 'http'],
      [8080, 'http-proxy'],
    ],
    title: () => 'Web directory listing enabled',
    evidence: (r) => `GET /${pick(r, ['backup', 'uploads', 'files', 'logs'])}/ -> Index of /`,
    description: 'Directory listings reveal files not meant to be linked.',
    remediation: 'Turn off automatic indexes (Options -Indexes, autoindex off).',
    cwe: ['CWE-548'],
  },
  {
    rule_id: 'self-signed-certificate',
    severities: ['low'],
    ports: [
      [443, 'https'],
      [8443, 'https-alt'],
    ],
    title: () => 'Self-signed TLS certificate',
    evidence: (r) =>
      `subject=CN=${pick(r, ['localhost', 'device', 'printer'])}; issuer=same; expires 20${r.int(26, 35)}`,
    description: 'Clients cannot authenticate the server.',
    remediation: 'Install a certificate from the organisation CA.',
    cwe: ['CWE-295'],
  },
  {
    rule_id: 'backup-share-exposed',
    severities: ['high'],
    ports: [
      [445, 'microsoft-ds'],
      [2049, 'nfs'],
    ],
    title: () => 'Backup share writable from the network',
    evidence: (r) => `${pick(r, ['\\\\nas\\backups', '/export/backup'])}: write access for Everyone`,
    description: 'Ransomware encrypts backups it can reach.',
    remediation: 'Make backups immutable or offline; restrict the share.',
  },
  {
    rule_id: 'vnc-no-auth',
    severities: ['critical'],
    ports: [[5900, 'vnc']],
    title: () => 'VNC without authentication',
    evidence: () => 'RFB 003.008; security type None',
    description: 'Anyone can take over the console.',
    remediation: 'Require authentication and tunnel VNC over SSH.',
    category: 'default_credentials',
  },
  {
    rule_id: 'upnp-exposed',
    severities: ['low'],
    ports: [[1900, 'upnp']],
    title: () => 'UPnP SSDP responder exposed',
    evidence: (r) => `SERVER: ${pick(r, ['Linux/3.14 UPnP/1.0', 'miniupnpd/2.1'])}`,
    description: 'SSDP is abused for reflection attacks and reveals devices.',
    remediation: 'Disable UPnP on the device.',
    category: 'exposed_service',
  },
  {
    rule_id: 'cve-check',
    severities: ['critical', 'high'],
    ports: [
      [443, 'https'],
      [8443, 'https-alt'],
    ],
    title: (r) => `Fortinet FortiOS SSL-VPN ${pick(r, ['heap overflow', 'path traversal'])}`,
    evidence: (r) => `FortiOS ${ver(r, 7)} banner`,
    description: 'A known exploited vulnerability in the SSL-VPN.',
    remediation: 'Apply the vendor fix.',
    cve: ['CVE-2023-27997', 'CVE-2018-13379'],
  },
  {
    rule_id: 'http-title',
    severities: ['info'],
    ports: [
      [80, 'http'],
      [443, 'https'],
    ],
    title: () => 'Web page title',
    evidence: (r) => `<title>${pick(r, ['Login', 'Dashboard', 'Welcome to nginx!', 'IIS Windows Server'])}</title>`,
    description: 'The title of the default page.',
    remediation: 'None needed.',
  },
  {
    rule_id: 'service-banner',
    severities: ['info'],
    ports: [
      [22, 'ssh'],
      [25, 'smtp'],
      [110, 'pop3'],
    ],
    title: () => 'Service banner',
    evidence: (r) => `220 ${pick(r, ['mail.example.org ESMTP Postfix', 'SSH-2.0-dropbear_2019.78'])}`,
    description: 'What the service announces.',
    remediation: 'Hide version details where possible.',
  },
];

const SUBNETS = ['10.20.1', '10.20.2', '10.20.3', '10.20.10', '192.168.50'];
const OS = ['Linux 5.x', 'Windows Server 2019', 'Windows 10', 'Cisco IOS', 'FreeBSD 13', 'Embedded'];
const ROLES = ['srv', 'ws', 'nas', 'prn', 'cam', 'sw', 'db', 'web'];

function makeHosts(r: Random, n: number): HostInfo[] {
  const per = Math.ceil(n / SUBNETS.length);
  if (per > 254) throw new Error(`${n} hosts do not fit ${SUBNETS.length} /24 subnets`);
  const hosts: HostInfo[] = [];
  for (let i = 0; i < n; i++) {
    const ip = `${SUBNETS[i % SUBNETS.length]}.${1 + Math.floor(i / SUBNETS.length)}`;
    const named = r.chance(0.6);
    hosts.push({
      ip,
      ...(named ? { hostname: `${pick(r, ROLES)}-${String(i).padStart(4, '0')}.corp.example` } : {}),
      ...(r.chance(0.7) ? { os_guess: pick(r, OS) } : {}),
      // Some hosts come with discovery's open ports; the rest count their findings' ports.
      ...(r.chance(0.5)
        ? { open_ports: [...new Set(Array.from({ length: r.int(1, 8) }, () => r.int(1, 10000)))] }
        : {}),
    });
  }
  return hosts;
}

function makeFinding(r: Random, host: HostInfo): { finding: ScanFinding; key: string } {
  const rule = pick(r, RULES);
  const [port, service] = pick(r, rule.ports);
  const severity = pick(r, rule.severities);
  const cve = rule.cve ? [pick(r, rule.cve)] : undefined;
  const finding: ScanFinding = {
    rule_id: rule.rule_id,
    title: rule.title(r),
    severity,
    host: host.ip,
    ...(host.hostname === undefined ? {} : { hostname: host.hostname }),
    port,
    protocol: port === 161 || port === 1900 ? 'udp' : 'tcp',
    service,
    evidence: rule.evidence(r, port),
    description: rule.description,
    remediation: rule.remediation,
    ...(cve || rule.cwe
      ? { references: { ...(cve ? { cve } : {}), ...(rule.cwe ? { cwe: [...rule.cwe] } : {}) } }
      : {}),
    ...(severity === 'info' ? {} : { cvss: Math.round(r.next() * 100) / 10 }),
    ...(rule.category === undefined ? {} : { category: rule.category }),
  };
  return { finding, key: `${rule.rule_id}|${host.ip}|${port}` };
}

/** `n` findings with distinct (rule, host, port), each host at least once when n allows. */
function makeFindings(r: Random, hosts: readonly HostInfo[], n: number, taken: Set<string>): ScanFinding[] {
  const out: ScanFinding[] = [];
  let attempts = 0;
  while (out.length < n) {
    if (++attempts > n * 50) throw new Error(`could not place ${n} distinct findings on ${hosts.length} hosts`);
    const host = out.length < hosts.length ? hosts[out.length]! : pick(r, hosts);
    const { finding, key } = makeFinding(r, host);
    if (taken.has(key)) continue;
    taken.add(key);
    out.push(finding);
  }
  return out;
}

function makeExceptions(r: Random, findings: readonly ScanFinding[], n: number): ExceptionRule[] {
  const normalized = normalizeFindings(findings).filter((f) => f.severity !== 'info');
  const rules: ExceptionRule[] = [];
  const reasons = [
    'Compensating firewall rule',
    'Vendor fix scheduled',
    'Legacy system, isolated VLAN',
    'Accepted by board',
  ];
  for (let i = 0; i < n; i++) {
    const f = pick(r, normalized);
    const byTitle = i % 4 === 3;
    // About one in five has expired before the scan's day; some never expire.
    const expiry = i % 5 === 0 ? '2026-02-15' : i % 3 === 0 ? null : `2026-${String(r.int(4, 12)).padStart(2, '0')}-28`;
    rules.push({
      fingerprint: byTitle ? null : (f.fingerprint ?? null),
      title: byTitle ? (f.title ?? null) : null,
      // A title rule without a host excepts that weakness on every host: rare on purpose.
      host: byTitle && i !== 3 ? (f.host ?? null) : null,
      reason: pick(r, reasons),
      approver: pick(r, ['CISO', 'IT director', 'County administrator']),
      approved_at: `2026-01-${String(r.int(10, 28)).padStart(2, '0')}T09:00:00Z`,
      expiry,
    });
  }
  return rules;
}

const ORC_ENV = {
  ORC_964_ENABLED: 'true',
  ORC_SUBDIVISION_CLASS: 'county_city',
  ORC_ATTEST_TRAINING: 'true',
  ORC_ATTEST_NOTICE_7DAY: 'true',
  ORC_ATTEST_NOTICE_30DAY: 'false',
};

/** The whole input of one benchmark run: the stages' input, the prior session and the trend. */
export function pipelineData(opts: DataOptions): PipelineData {
  const r = new Random(opts.seed);
  const hosts = makeHosts(r, opts.hosts);
  const taken = new Set<string>();
  const findings = makeFindings(r, hosts, opts.findings, taken);
  const persistentCount = Math.round(findings.length * (opts.persistent ?? 0.5));
  const shared = r.shuffle(findings).slice(0, persistentCount);
  // The prior scan also saw weaknesses fixed since (remediation_resolved) and a few now gone hosts.
  const gone = makeFindings(r, hosts, Math.round(findings.length * 0.15), taken);
  const priorFindings = r.shuffle([...shared, ...gone]);
  const orc = orcSettingsFrom(ORC_ENV);
  const { doc: prior } = runStages({
    findings: priorFindings,
    hosts,
    prior: null,
    exceptions: [],
    settings: {
      sessionId: PRIOR_SESSION_ID,
      target: TARGET,
      clientId: 'county-of-example',
      client: 'County of Example',
      toolVersion: '4.2.3',
      scanProfile: 'standard',
      startedAt: new Date('2026-02-23T02:00:00.000Z'),
      schedule: { cron: '0 2 * * 1', scheduledBy: 'daemon' },
      orc,
    },
    license: { tier: 'business', state: LICENSE },
    now: new Date('2026-02-23T02:39:02.000Z'),
  });
  // Human decisions on the prior items, which tracking carries over.
  for (const item of prior.remediation ?? []) {
    const roll = r.next();
    if (roll < 0.08) Object.assign(item, { status: 'in_progress', note: `Ticket OPS-${r.int(100, 9999)}` });
    else if (roll < 0.12) Object.assign(item, { status: 'deferred', note: 'Budget next fiscal year' });
  }
  const trendPoints = opts.trendPoints ?? 10;
  const trend: TrendPoint[] = Array.from({ length: trendPoints - 1 }, (_, i) => {
    const day = new Date(STARTED.getTime() - (trendPoints - 1 - i) * 7 * 86_400_000);
    const score = Math.min(100, 60 + r.int(0, 35));
    return {
      session_id: `${day.toISOString().slice(0, 10).replace(/-/g, '')}_020000`,
      finished_at: new Date(day.getTime() + 2_400_000).toISOString(),
      risk_score: score,
      risk_score_operational: i < 3 ? null : Math.max(0, score - r.int(0, 12)),
    };
  });
  return {
    input: {
      findings,
      hosts,
      prior,
      exceptions: makeExceptions(r, findings, opts.exceptions ?? 40),
      settings: {
        sessionId: SESSION_ID,
        target: TARGET,
        clientId: 'county-of-example',
        client: 'County of Example',
        toolVersion: '4.2.3',
        scanProfile: 'standard',
        startedAt: STARTED,
        schedule: { cron: '0 2 * * 1', scheduledBy: 'daemon' },
        orc,
      },
      license: { tier: 'business', state: LICENSE },
      now: NOW,
    },
    trend,
  };
}
