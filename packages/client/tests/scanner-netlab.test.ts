import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { detectFindings, type NmapProgress, type NmapRunResult, runNmap } from '../src/scanner/index.ts';
import { type HostRole, listNamespaces, type Netlab, namespacePids, startNetlab, sweepStale } from './netlab/index.ts';

/**
 * The real chain against the project's own test network: real Debian daemons in network
 * namespaces, nmap run inside the scanner namespace by runNmap, the streaming parser and the
 * detection rules. Needs root (setup-system.sh installs the daemons).
 */

/** Every planted weakness, named by host, detected service and rule; never by port. */
const PLANTED: { host: HostRole; service: string; rule: string; severity: string }[] = [
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

/** The planted ports plus nothing else, so the scan stays short. */
const PORTS = 'T:21,22,23,80,443,445,2222,5432,6379,11211,U:161';

let lab: Netlab;
let result: NmapRunResult;
let findings: ScanFinding[];
const progress: NmapProgress[] = [];

beforeAll(async () => {
  lab = await startNetlab();
  result = await runNmap({
    targets: Object.values(lab.hosts).map((h) => h.ip),
    profile: 'quick_recon',
    ports: PORTS,
    wrapper: lab.wrapper,
    scope: [lab.subnet],
    statsEverySeconds: 2,
    timeoutMs: 4 * 60_000,
    onProgress: (p) => progress.push(p),
  });
  findings = detectFindings(result.hosts, { scanTime: new Date(result.finishedAt) });
}, 6 * 60_000);

afterAll(() => lab?.stop());

const ipOf = (role: HostRole) => lab.hosts[role].ip;
const describeFindings = (list: readonly ScanFinding[]) =>
  list.map((f) => `${f.host}:${f.port} ${f.service} ${f.rule_id} ${f.severity}`).join('\n');

describe('the test network scanned by the real runner', () => {
  it('ran nmap inside the scanner namespace as root, with the exact command and timing recorded', () => {
    expect(result.command.slice(0, 5)).toEqual(['ip', 'netns', 'exec', lab.scannerNs, '/usr/bin/nmap']);
    expect(result.command.slice(5, 8)).toEqual(['-sS', '-sU', '-sV']);
    expect(result.command.slice(-7)).toEqual(['--', ...Object.values(lab.hosts).map((h) => h.ip)]);
    expect(result.mode).toBe('syn');
    expect(result.privileged).toBe(true);
    expect(result.exitCode).toBe(0);
    expect(result.complete).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.durationMs).toBeGreaterThan(0);
    expect(Date.parse(result.finishedAt)).toBeGreaterThanOrEqual(Date.parse(result.startedAt));
    expect(result.run.hosts).toEqual({ up: 6, down: 0, total: 6 });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p) => p.task !== '' && p.percent >= 0 && p.percent <= 100)).toBe(true);
  });

  it.each(PLANTED)('finds $rule on the $host host ($service)', ({ host, service, rule, severity }) => {
    const hit = findings.filter((f) => f.host === ipOf(host) && f.service === service && f.rule_id === rule);
    expect(hit, describeFindings(findings.filter((f) => f.host === ipOf(host)))).toHaveLength(1);
    expect(hit[0]?.severity).toBe(severity);
    expect(hit[0]?.evidence ?? '').not.toBe('');
  });

  it('finds nothing on the hardened host (current TLS, test CA certificate, security headers, SSH defaults)', () => {
    const hardened = result.hosts.find((h) => h.addresses.some((a) => a.addr === ipOf('hardened')));
    expect(hardened?.ports.filter((p) => p.state === 'open').map((p) => [p.protocol, p.portid])).toEqual([
      ['tcp', 22],
      ['tcp', 443],
    ]);
    const onHardened = findings.filter((f) => f.host === ipOf('hardened'));
    expect(onHardened, describeFindings(onHardened)).toEqual([]);
  });

  it('finds the old OpenSSH banner but clears the Debian-patched sshd on the same host', () => {
    const outdated = findings.filter((f) => f.host === ipOf('ssh') && f.rule_id?.startsWith('outdated-software:'));
    expect(new Set(outdated.map((f) => f.port))).toEqual(new Set([2222]));
  });
});

describe('runner limits on the test network', () => {
  it('as a normal user scans with connect scan and says so', async () => {
    const run = await runNmap({
      targets: ipOf('hardened'),
      profile: 'discovery',
      ports: 'T:22,443,U:161',
      privileged: false,
      wrapper: lab.wrapper,
      scope: [lab.subnet],
      timeoutMs: 60_000,
    });
    expect(run.mode).toBe('connect');
    expect(run.command).toContain('-sT');
    expect(run.command).not.toContain('-sS');
    expect(run.command[run.command.indexOf('-p') + 1]).toBe('22,443');
    expect(run.run.scaninfo.map((s) => s.type)).toEqual(['connect']);
    expect(run.hosts[0]?.ports.map((p) => p.portid)).toEqual([22, 443]);
  }, 90_000);

  it('kills nmap at the timeout and reports the run as incomplete', async () => {
    const run = await runNmap({
      targets: lab.subnet,
      profile: 'full_recon',
      wrapper: lab.wrapper,
      scope: [lab.subnet],
      timeoutMs: 2_000,
    });
    expect(run.timedOut).toBe(true);
    expect(run.complete).toBe(false);
    expect(run.signal ?? run.exitCode).not.toBe(0);
    expect(namespacePids(lab.scannerNs)).toEqual([]);
  }, 30_000);

  it('refuses a target outside the test network before anything runs', async () => {
    await expect(
      runNmap({ targets: '10.231.1.1', profile: 'quick_recon', wrapper: lab.wrapper, scope: [lab.subnet] }),
    ).rejects.toThrow('outside the allowed scope 10.231.0.0/24');
  });
});

/** Running, as opposed to gone or a zombie waiting to be reaped. */
const running = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Starts the network in another process (netlab/hold.ts) and resolves once it is up. */
async function holdNetlab() {
  const child = spawn(process.execPath, [new URL('./netlab/hold.ts', import.meta.url).pathname], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  const up = await new Promise<{ runId: string; namespaces: string[]; dir: string }>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    child.once('exit', (code) => reject(new Error(`hold.ts exited with ${code} before the network was up`)));
  });
  const pids = up.namespaces.flatMap((ns) => namespacePids(ns));
  return { child, exited, pids, ...up };
}

const left = (runId: string) => listNamespaces().filter((ns) => ns.startsWith(`svcnl-${runId}-`));

describe('cleanup when a run is interrupted', () => {
  it('SIGTERM: the run removes its own namespaces and processes before it dies', async () => {
    const held = await holdNetlab();
    expect(left(held.runId)).toHaveLength(7);
    held.child.kill('SIGTERM');
    await held.exited;
    expect(left(held.runId)).toEqual([]);
    expect(existsSync(held.dir)).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(held.pids.filter(running)).toEqual([]);
  }, 60_000);

  it('SIGKILL: the next run sweeps the namespaces and processes of the dead run', async () => {
    const held = await holdNetlab();
    held.child.kill('SIGKILL');
    await held.exited;
    const stale = left(held.runId);
    expect(stale).toHaveLength(7);
    expect(existsSync(held.dir)).toBe(true);
    expect(sweepStale()).toEqual(expect.arrayContaining(stale));
    expect(left(held.runId)).toEqual([]);
    expect(existsSync(held.dir)).toBe(false);
    await new Promise((r) => setTimeout(r, 200));
    expect(held.pids.filter(running)).toEqual([]);
  }, 60_000);
});

describe('teardown', () => {
  it('leaves no namespace and no process of the run', async () => {
    const pids = lab.namespaces.flatMap((ns) => namespacePids(ns));
    expect(pids.length).toBeGreaterThan(10);
    lab.stop();
    expect(existsSync(lab.dir)).toBe(false);
    expect(listNamespaces().filter((ns) => ns.startsWith(`svcnl-${lab.runId}-`))).toEqual([]);
    await new Promise((r) => setTimeout(r, 200));
    expect(pids.filter(running)).toEqual([]);
  });
});
