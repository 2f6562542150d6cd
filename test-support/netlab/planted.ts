import { detectFindings, type NmapProgress, type NmapRunResult, runNmap, type ScanFinding } from '@svc/client/engine';
import type { HostRole, Netlab } from './index.ts';

/**
 * What the test network is expected to yield: one definition for scanner-netlab.slow.test.ts and the
 * detection table generator (detection-table.ts).
 */

export interface PlantedWeakness {
  host: HostRole;
  /** The service nmap detects, never the port. */
  service: string;
  rule: string;
  severity: string;
}

/** Every planted weakness, named by host, detected service and rule; never by port. */
export const PLANTED: readonly PlantedWeakness[] = [
  { host: 'legacy', service: 'telnet', rule: 'telnet-open', severity: 'high' },
  { host: 'legacy', service: 'ftp', rule: 'ftp-anonymous', severity: 'medium' },
  { host: 'legacy', service: 'ftp', rule: 'ftp-cleartext', severity: 'medium' },
  { host: 'legacy', service: 'snmp', rule: 'snmp-default-community', severity: 'medium' },
  { host: 'data', service: 'postgresql', rule: 'database-exposed', severity: 'medium' },
  { host: 'data', service: 'redis', rule: 'database-exposed', severity: 'medium' },
  { host: 'data', service: 'redis', rule: 'redis-unauthenticated', severity: 'high' },
  { host: 'data', service: 'memcached', rule: 'database-exposed', severity: 'medium' },
  { host: 'data', service: 'memcached', rule: 'memcached-unauthenticated', severity: 'medium' },
  { host: 'web', service: 'http', rule: 'directory-listing', severity: 'medium' },
  { host: 'web', service: 'http', rule: 'http-no-tls', severity: 'low' },
  { host: 'web', service: 'http', rule: 'http-missing-csp', severity: 'low' },
  { host: 'web', service: 'http', rule: 'http-missing-frame-options', severity: 'low' },
  { host: 'web', service: 'http', rule: 'http-missing-content-type-options', severity: 'low' },
  { host: 'web', service: 'https', rule: 'tls-deprecated-protocol', severity: 'medium' },
  { host: 'web', service: 'https', rule: 'tls-weak-key-exchange', severity: 'medium' },
  { host: 'web', service: 'https', rule: 'certificate-expired', severity: 'medium' },
  { host: 'web', service: 'https', rule: 'self-signed-certificate', severity: 'medium' },
  { host: 'web', service: 'https', rule: 'certificate-weak-key', severity: 'medium' },
  { host: 'ssh', service: 'ssh', rule: 'ssh-weak-algorithms', severity: 'medium' },
  { host: 'ssh', service: 'ssh', rule: 'ssh-weak-host-key', severity: 'medium' },
  { host: 'ssh', service: 'ssh', rule: 'outdated-software:openssh-supplemental-groups', severity: 'high' },
  { host: 'smb', service: 'netbios-ssn', rule: 'smb-signing-not-required', severity: 'medium' },
  { host: 'smb', service: 'netbios-ssn', rule: 'smbv1-enabled', severity: 'medium' },
];

/** The host that must yield no finding at all: every finding there is a false positive. */
export const HARDENED: HostRole = 'hardened';

/**
 * Real findings on weak hosts that nobody planted, with why they are expected. `rule` is a rule id,
 * or a prefix when it ends with ":" or "-".
 */
export const NOT_PLANTED: readonly { host: HostRole; service: string; rule: string; note: string }[] = [
  {
    host: 'data',
    service: 'redis',
    rule: 'outdated-software:',
    note: "Debian's Redis matches the version table as potential: the banner cannot show Debian's backported fix",
  },
  {
    host: 'web',
    service: 'https',
    rule: 'http-missing-',
    note: 'the weak TLS server (openssl s_server -www) answers HTTP/1.0 with no security header at all',
  },
  {
    host: 'web',
    service: 'https',
    rule: 'tls-weak-dh-params',
    note: 'ssl-dh-params on the same 1024-bit DH group that tls-weak-key-exchange reports',
  },
  {
    host: 'ssh',
    service: 'ssh',
    rule: 'outdated-software:openssh-',
    note: 'the OpenSSH 7.4 banner also matches the other table entries fixed after 7.4',
  },
];

/** Whether a finding on a weak host is one of NOT_PLANTED; returns its note. */
export function notPlantedNote(role: HostRole, service: string | undefined, rule: string | undefined): string | null {
  const hit = NOT_PLANTED.find(
    (n) =>
      n.host === role &&
      n.service === service &&
      (rule === n.rule || (/[:-]$/.test(n.rule) && rule?.startsWith(n.rule) === true)),
  );
  return hit?.note ?? null;
}

/** The planted ports plus nothing else, so the scan stays short. */
export const PLANTED_PORTS = 'T:21,22,23,80,443,445,2222,5432,6379,11211,U:161';

/** The scan both the test and the table generator run: quick_recon inside the scanner namespace. */
export async function scanPlanted(
  lab: Netlab,
  onProgress?: (p: NmapProgress) => void,
): Promise<{ result: NmapRunResult; findings: ScanFinding[] }> {
  const result = await runNmap({
    targets: Object.values(lab.hosts).map((h) => h.ip),
    profile: 'quick_recon',
    ports: PLANTED_PORTS,
    wrapper: lab.wrapper,
    scope: [lab.subnet],
    statsEverySeconds: 2,
    timeoutMs: 4 * 60_000,
    onProgress,
  });
  return { result, findings: detectFindings(result.hosts, { scanTime: new Date(result.finishedAt) }) };
}
