import { findingFingerprint } from '@svc/protocol/node';

/**
 * A session file with `findings` findings, one of each kind per host (so `findings / 7`
 * hosts and no fingerprint twice), each finding with its
 * remediation entry (by fingerprint), evidence, description and references about as long as
 * the scanner writes them (10,000 findings ≈ 12 MB, as in the field). Deterministic, so tests
 * compute their expected answers from the same document. Used by the findings browser tests
 * and bench/findings.ts.
 */

interface Kind {
  rule_id: string;
  title: string;
  severity: 'critical' | 'high' | 'medium' | 'low' | 'info';
  port: number;
  protocol: string;
  service: string;
  cvss?: number;
  cve: string[];
}

export const KINDS: readonly Kind[] = [
  {
    rule_id: 'svc.tls.v1_0',
    title: 'TLS 1.0 enabled',
    severity: 'high',
    port: 443,
    protocol: 'tcp',
    service: 'https',
    cvss: 7.4,
    cve: ['CVE-2011-3389'],
  },
  {
    rule_id: 'svc.telnet',
    title: 'Telnet service exposed',
    severity: 'critical',
    port: 23,
    protocol: 'tcp',
    service: 'telnet',
    cvss: 9.8,
    cve: [],
  },
  {
    rule_id: 'svc.ssh.kex',
    title: 'SSH weak key exchange',
    severity: 'medium',
    port: 22,
    protocol: 'tcp',
    service: 'ssh',
    cvss: 5.9,
    cve: ['CVE-2023-48795'],
  },
  {
    rule_id: 'svc.http.headers',
    title: 'Missing security headers',
    severity: 'low',
    port: 80,
    protocol: 'tcp',
    service: 'http',
    cvss: 3.1,
    cve: [],
  },
  {
    rule_id: 'svc.smb.v1',
    title: 'SMBv1 enabled',
    severity: 'critical',
    port: 445,
    protocol: 'tcp',
    service: 'microsoft-ds',
    cvss: 8.1,
    cve: ['CVE-2017-0144', 'CVE-2017-0145'],
  },
  {
    rule_id: 'svc.snmp.public',
    title: 'SNMP public community',
    severity: 'high',
    port: 161,
    protocol: 'udp',
    service: 'snmp',
    cvss: 7.5,
    cve: ['CVE-1999-0517'],
  },
  {
    rule_id: 'svc.dns.version',
    title: 'DNS version disclosed',
    severity: 'info',
    port: 53,
    protocol: 'udp',
    service: 'domain',
    cve: [],
  },
];

const TEXT =
  'The service answered the probe in a way that shows the weakness. An attacker on the same network can use it to read or change traffic, or to move on to other hosts. ';

export function hostOf(h: number): { host: string; hostname: string } {
  return {
    host: `10.${Math.floor(h / 65_536) % 256}.${Math.floor(h / 256) % 256}.${h % 256}`,
    hostname: `host-${String(h).padStart(4, '0')}.acme.test`,
  };
}

export function largeSessionDoc(sessionId: string, clientId: string, findings: number) {
  const hosts = Math.max(1, Math.ceil(findings / KINDS.length));
  const list = [];
  const remediation = [];
  for (let i = 0; i < findings; i++) {
    const kind = KINDS[i % KINDS.length] as Kind;
    const { host, hostname } = hostOf(Math.floor(i / KINDS.length));
    const fingerprint = findingFingerprint({ rule_id: kind.rule_id, host, port: kind.port, protocol: kind.protocol });
    list.push({
      id: `f-${i}`,
      fingerprint,
      rule_id: kind.rule_id,
      title: kind.title,
      severity: kind.severity,
      host,
      hostname,
      port: kind.port,
      protocol: kind.protocol,
      service: kind.service,
      ...(kind.cvss === undefined ? {} : { cvss: kind.cvss }),
      evidence: `${kind.service} on ${host}:${kind.port} answered: banner ${kind.rule_id} v${i % 13}.${i % 7}. ${TEXT.repeat(2)}`,
      description: `${kind.title}. ${TEXT.repeat(2)}`,
      remediation: `Disable or upgrade ${kind.service} on ${host}. ${TEXT}`,
      references: { cve: kind.cve, cwe: ['CWE-327'], urls: [`https://advisories.example.test/${kind.rule_id}`] },
    });
    remediation.push({
      title: kind.title,
      severity: kind.severity,
      host,
      fingerprint,
      finding_id: `f-${i}`,
      status: i % 2 === 0 ? 'new' : 'persistent',
      status_changed: '2025-01-01T00:00:00.000Z',
      note: '',
      first_seen: `2025010${1 + (i % 9)}_000000`,
      prior_status: i % 2 === 0 ? null : 'new',
      exception_status: null,
    });
  }
  return {
    metadata: {
      session_id: sessionId,
      client_id: clientId,
      client: 'Acme',
      target: '10.0.0.0/16',
      tool_version: '4.2.0',
    },
    summary: {
      risk_score: 88,
      risk_grade: 'F',
      risk_score_operational: 88,
      risk_grade_operational: 'F',
      total_findings: findings,
      total_hosts: hosts,
    },
    findings: list,
    remediation,
    remediation_resolved: [],
    topology: {
      nodes: Array.from({ length: Math.min(hosts, 50) }, (_, h) => ({
        id: hostOf(h).host,
        label: hostOf(h).hostname,
        type: 'host',
      })),
      links: [],
    },
  };
}

/**
 * A session file of `findings` lean findings: each with its identity only (id, fingerprint,
 * rule, title, severity, host, port, protocol, service) and no remediation entries, about 230
 * bytes a finding as compact JSON. The shape of the outside review's 100,000-finding upload
 * (22 MB, under the 25 MB limit).
 */
export function leanSessionDoc(sessionId: string, clientId: string, findings: number) {
  const { findings: _, remediation: __, ...rest } = largeSessionDoc(sessionId, clientId, 0);
  const list = [];
  for (let i = 0; i < findings; i++) {
    const { rule_id, title, severity, port, protocol, service } = KINDS[i % KINDS.length] as Kind;
    const { host } = hostOf(Math.floor(i / KINDS.length));
    const fingerprint = findingFingerprint({ rule_id, host, port, protocol });
    list.push({ id: `f-${i}`, fingerprint, rule_id, title, severity, host, port, protocol, service });
  }
  const hosts = Math.max(1, Math.ceil(findings / KINDS.length));
  return {
    ...rest,
    summary: { ...rest.summary, total_findings: findings, total_hosts: hosts },
    findings: list,
    remediation: [],
  };
}

/** Upload a session file through the real upload API with a license key; answers the session id. */
export async function uploadDoc(url: string, key: string, doc: unknown): Promise<string> {
  const form = new FormData();
  form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
  const res = await fetch(`${url}/api/upload`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { session_id: string }).session_id;
}
