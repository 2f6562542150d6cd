import fs from 'node:fs/promises';
import os from 'node:os';
import type { HeartbeatSystemInfo } from '@svc/protocol';
import { CLIENT_VERSION, findNmap, runWithDeadline } from '@svc/client/kit';

const MB = 1024 * 1024;

/** `nmap --version`'s first line's version, or null when nmap is absent or silent. */
async function nmapVersion(env: NodeJS.ProcessEnv): Promise<string | null> {
  const nmap = findNmap(env);
  if (nmap === undefined) return null;
  const r = await runWithDeadline([nmap, '--version'], { env, timeoutMs: 5000 });
  if (r.error !== null || r.timedOut || r.exitCode !== 0) return null;
  return /Nmap version (\S+)/.exec(r.stdout)?.[1] ?? null;
}

/** PRETTY_NAME of /etc/os-release (the distribution), else the kernel's name. */
async function osName(): Promise<string> {
  try {
    const text = await fs.readFile('/etc/os-release', 'utf8');
    const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(text);
    if (m?.[1]) return m[1];
  } catch {
    // Not Linux, or a minimal image: the kernel's name will do.
  }
  return os.type();
}

async function diskFreeMb(dir: string): Promise<number | null> {
  try {
    const s = await fs.statfs(dir);
    return Math.round((s.bavail * s.bsize) / MB);
  } catch {
    return null;
  }
}

/** Non-loopback, non-link-local addresses, IPv4 first: how the console tells hosts apart. */
export function hostAddresses(interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): string[] {
  const all = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal && !(i.family === 'IPv6' && i.address.toLowerCase().startsWith('fe80:')));
  const v4 = all.filter((i) => i.family === 'IPv4').map((i) => i.address);
  const v6 = all.filter((i) => i.family === 'IPv6').map((i) => i.address);
  return [...new Set([...v4, ...v6])].slice(0, 16);
}

/**
 * Host telemetry for the heartbeat. nmap's version is asked once per process: it does not
 * change under a running daemon, and `update` re-executes it anyway.
 */
export function systemInfoSource(env: NodeJS.ProcessEnv, dataDir: string): () => Promise<HeartbeatSystemInfo> {
  let nmap: Promise<string | null> | undefined;
  return async () => {
    nmap ??= nmapVersion(env);
    const [nmapV, disk, osText] = await Promise.all([nmap, diskFreeMb(dataDir), osName()]);
    return {
      hostname: os.hostname(),
      ip_addresses: hostAddresses(),
      os: osText,
      platform: process.platform,
      kernel: os.release(),
      cpu_count: os.availableParallelism(),
      memory_total_mb: Math.round(os.totalmem() / MB),
      memory_available_mb: Math.round(os.freemem() / MB),
      ...(disk === null ? {} : { disk_free_mb: disk }),
      ...(nmapV === null ? {} : { nmap_version: nmapV }),
      agent_version: CLIENT_VERSION,
      node_version: process.versions.node,
    };
  };
}
