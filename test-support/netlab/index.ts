import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expiredWeakCert, validCert } from './certs.ts';
import { ip, NETLAB_PREFIX, removeNamespace, removeTree, sweepStale } from './namespaces.ts';
import * as svc from './services.ts';
import type { ServiceSpec } from './services.ts';

export { listNamespaces, namespacePids, sweepStale } from './namespaces.ts';

/** The test subnet: it exists only on the veth links between the harness's namespaces. */
export const NETLAB_SUBNET = '10.231.0.0/24';
const SCANNER_IP = '10.231.0.2';
/** The hub's own address when it routes (startNetlab's `gateway`): the scanner's default route. */
const GATEWAY_IP = '10.231.0.1';

export type HostRole = 'legacy' | 'data' | 'web' | 'ssh' | 'smb' | 'dns' | 'hardened';

export interface NetlabHost {
  role: HostRole;
  ns: string;
  ip: string;
  /** The daemons running there, by name. */
  services: string[];
}

export interface Netlab {
  runId: string;
  subnet: string;
  scannerNs: string;
  scannerIp: string;
  hosts: Record<HostRole, NetlabHost>;
  /** Fixed argv prefix that runs a command inside the scanner namespace. */
  wrapper: string[];
  namespaces: string[];
  /** The hub's address when started with `gateway`, else undefined. */
  gatewayIp?: string | undefined;
  /** Temp directory with every generated config, key and log of this run. */
  dir: string;
  /** Starts one more daemon on a host (a weakness planted between two scans); resolves once it listens. */
  startService(role: HostRole, spec: ServiceSpec): Promise<void>;
  /** Kills a host's daemon by name (a weakness fixed between two scans); resolves once its port is closed. */
  stopService(role: HostRole, name: string): Promise<void>;
  /** Kills every process in the namespaces, deletes them and the temp directory. Idempotent. */
  stop(): void;
}

const HOSTS: Record<HostRole, string> = {
  legacy: '10.231.0.10',
  data: '10.231.0.11',
  web: '10.231.0.12',
  ssh: '10.231.0.13',
  smb: '10.231.0.14',
  dns: '10.231.0.15',
  hardened: '10.231.0.20',
};

let runCounter = 0;

function listening(ns: string, ready: ServiceSpec['ready']): boolean {
  const out = execFileSync('ip', ['netns', 'exec', ns, 'ss', '-Hn', ready.proto === 'tcp' ? '-lt' : '-lu'], {
    encoding: 'utf8',
  });
  return out.split('\n').some((l) => l.split(/\s+/)[3]?.endsWith(`:${ready.port}`));
}

async function waitReady(ns: string, spec: ServiceSpec, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${spec.name} in ${ns} exited with ${child.exitCode}; see ${log}`);
    if (listening(ns, spec.ready)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${spec.name} in ${ns} not listening on ${spec.ready.proto}/${spec.ready.port}; see ${log}`);
}

function addNamespace(name: string, namespaces: string[]): void {
  ip(['netns', 'add', name]);
  namespaces.push(name);
  ip(['-n', name, 'link', 'set', 'lo', 'up']);
}

export interface NetlabOptions {
  /** The SMB host (default on). */
  smb?: boolean;
  /** The DNS host running BIND with the zone `netlab.test` (default off). */
  dns?: boolean;
  /**
   * The hub routes (default off): its bridge gets 10.231.0.1, forwards between hosts, and is the
   * scanner's default route. masscan sends every probe to its router's MAC, so it needs one; the
   * hub has no other link, so nothing routed can leave the test network.
   */
  gateway?: boolean;
}

/**
 * Builds the test network and starts its services: a hub namespace holding a bridge, one
 * namespace per host linked to it by a veth pair, and a scanner namespace. No link reaches the
 * root namespace, so nothing run inside can send a packet out. Sweeps namespaces left by dead
 * runs first, and removes its own on stop, on process exit and on SIGINT/SIGTERM.
 */
export async function startNetlab(opts: NetlabOptions = {}): Promise<Netlab> {
  if (process.getuid?.() !== 0) {
    throw new Error('the scanner test network needs root (ip netns); run the tests as root, as CI does');
  }
  sweepStale();
  runCounter += 1;
  const runId = `${process.pid}x${runCounter}`;
  const prefix = `${NETLAB_PREFIX}${runId}-`;
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // Daemons that drop to nobody or postgres read their files from here.
  chmodSync(dir, 0o755);
  const namespaces: string[] = [];
  const children: ChildProcess[] = [];
  /** The running daemons by `<namespace>/<name>`, for stopService. */
  const running = new Map<string, { spec: ServiceSpec; child: ChildProcess }>();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off('exit', stop);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    for (const c of children) {
      try {
        if (c.pid !== undefined && c.exitCode === null) process.kill(-c.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    for (const ns of [...namespaces].reverse()) removeNamespace(ns);
    removeTree(dir);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    stop();
    process.kill(process.pid, signal);
  };
  process.once('exit', stop);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const start = async (ns: string, spec: ServiceSpec) => {
    const log = join(dir, `${spec.name}.log`);
    const fd = openSync(log, 'a');
    const argv = ['netns', 'exec', ns, ...(spec.user ? ['runuser', '-u', spec.user, '--'] : []), ...spec.argv];
    const child = spawn('ip', argv, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...spec.env },
    });
    children.push(child);
    running.set(`${ns}/${spec.name}`, { spec, child });
    await waitReady(ns, spec, child, log);
  };

  const stopOne = async (ns: string, name: string) => {
    const entry = running.get(`${ns}/${name}`);
    if (entry === undefined) throw new Error(`no service ${name} runs in ${ns}`);
    running.delete(`${ns}/${name}`);
    const { spec, child } = entry;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    await exited;
    const deadline = Date.now() + 10_000;
    while (listening(ns, spec.ready)) {
      if (Date.now() > deadline) throw new Error(`${name} in ${ns} still listening on ${spec.ready.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  try {
    const hub = `${prefix}hub`;
    addNamespace(hub, namespaces);
    ip(['-n', hub, 'link', 'add', 'br0', 'type', 'bridge']);
    ip(['-n', hub, 'link', 'set', 'br0', 'up']);
    const attach = (ns: string, addr: string) => {
      addNamespace(ns, namespaces);
      const port = `v${addr.split('.').at(-1)}`;
      ip(['-n', hub, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ip(['-n', hub, 'link', 'set', port, 'master', 'br0', 'up']);
      ip(['-n', ns, 'addr', 'add', `${addr}/24`, 'dev', 'eth0']);
      ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
    };
    const scannerNs = `${prefix}scanner`;
    attach(scannerNs, SCANNER_IP);
    const roles = (Object.keys(HOSTS) as HostRole[]).filter(
      (r) => (r !== 'smb' || opts.smb !== false) && (r !== 'dns' || opts.dns === true),
    );
    const hosts = {} as Record<HostRole, NetlabHost>;
    for (const role of roles) {
      const ns = `${prefix}${role}`;
      attach(ns, HOSTS[role]);
      hosts[role] = { role, ns, ip: HOSTS[role], services: [] };
    }
    if (opts.gateway === true) {
      ip(['-n', hub, 'addr', 'add', `${GATEWAY_IP}/24`, 'dev', 'br0']);
      for (const key of [
        'net.ipv4.ip_forward=1',
        'net.ipv4.conf.all.send_redirects=0',
        'net.ipv4.conf.br0.send_redirects=0',
      ]) {
        execFileSync('ip', ['netns', 'exec', hub, 'sysctl', '-qw', key]);
      }
      ip(['-n', scannerNs, 'route', 'add', 'default', 'via', GATEWAY_IP]);
    }
    const certDir = join(dir, 'certs');
    execFileSync('mkdir', ['-p', certDir]);
    const expired = expiredWeakCert(certDir);
    const valid = validCert(certDir, 'hardened.netlab.test');

    const plan: [HostRole, ServiceSpec][] = [
      ['legacy', svc.telnetd(dir, HOSTS.legacy)],
      ['legacy', svc.vsftpd(dir, HOSTS.legacy)],
      ['legacy', svc.snmpd(dir, HOSTS.legacy)],
      ['data', svc.redis(dir, HOSTS.data)],
      ['data', svc.memcached(HOSTS.data)],
      ['data', svc.postgres(dir)],
      ['web', svc.nginxListing(dir, HOSTS.web)],
      ['web', svc.weakTls(HOSTS.web, expired)],
      ['ssh', svc.sshd(dir, HOSTS.ssh, true)],
      ['ssh', svc.bannerServer(HOSTS.ssh, 2222, 'SSH-2.0-OpenSSH_7.4')],
      ['hardened', svc.nginxHardened(dir, HOSTS.hardened, valid)],
      ['hardened', svc.sshd(dir, HOSTS.hardened, false)],
    ];
    if (hosts.smb) plan.push(['smb', svc.smbd(dir, HOSTS.smb)]);
    if (hosts.dns) {
      const records = Object.fromEntries(roles.map((r) => [r, HOSTS[r]]));
      plan.push(['dns', svc.named(dir, HOSTS.dns, records)]);
    }
    await Promise.all(
      plan.map(async ([role, spec]) => {
        await start(hosts[role].ns, spec);
        hosts[role].services.push(spec.name);
      }),
    );
    return {
      runId,
      subnet: NETLAB_SUBNET,
      scannerNs,
      scannerIp: SCANNER_IP,
      hosts,
      wrapper: ['ip', 'netns', 'exec', scannerNs],
      gatewayIp: opts.gateway === true ? GATEWAY_IP : undefined,
      namespaces: [...namespaces],
      dir,
      startService: async (role, spec) => {
        const host = hosts[role];
        if (host === undefined) throw new Error(`no ${role} host in this run`);
        if (running.has(`${host.ns}/${spec.name}`)) throw new Error(`${spec.name} already runs on ${role}`);
        await start(host.ns, spec);
        host.services.push(spec.name);
      },
      stopService: async (role, name) => {
        const host = hosts[role];
        if (host === undefined) throw new Error(`no ${role} host in this run`);
        await stopOne(host.ns, name);
        host.services = host.services.filter((s) => s !== name);
      },
      stop,
    };
  } catch (err) {
    stop();
    throw err;
  }
}
