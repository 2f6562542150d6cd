import dns from 'node:dns';
import { type CoverageBlock, hostKindOf } from '@svc/protocol';
import { CoverageBuilder } from '../pipeline/coverage-builder.ts';
import { ImportError } from './guard.ts';

/**
 * `svc import --targets`: what a Nuclei run was pointed at (`nuclei -u`/`-l`), which its output
 * never states. Each target is a URL (`https://shop.example:8443/app`), `host:port`, `[v6]:port`
 * or a bare host (an address or a host name). The import covers them (docs/cli/import.md,
 * "Coverage"), so a clean run, whose output is an empty file, resolves what it looked at.
 */
export interface ImportTarget {
  /** As written, for the session's target name. */
  text: string;
  host: string;
  /** The port a URL or `host:port` names (80/443 for http/https URLs); absent for a bare host. */
  port?: number | undefined;
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { http: 80, https: 443 };

function target(text: string): ImportTarget {
  const bad = (why: string) => new ImportError(`--targets: "${text}" ${why}`, 'usage');
  if (/\/\d{1,3}$/.test(text) && !text.includes('://'))
    throw bad('is a network range: name each host (Nuclei expands ranges; its results name the hosts)');
  let host: string;
  let port: number | undefined;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme !== undefined || /^\[.*\]:\d+$/.test(text) || /^[^:]+:\d+$/.test(text)) {
    let url: URL;
    try {
      url = new URL(scheme === undefined ? `tcp://${text}` : text);
    } catch {
      throw bad('is not a URL, host:port or host');
    }
    host = url.hostname.replace(/^\[|\]$/g, '');
    port = url.port === '' ? (scheme === undefined ? undefined : DEFAULT_PORTS[scheme]) : Number(url.port);
  } else host = text;
  if (hostKindOf(host) === undefined) throw bad('names no host (an IP address or an RFC 1123 host name)');
  return { text, host, ...(port === undefined ? {} : { port }) };
}

/** `--targets a,b,c`, each checked; refused (exit 2) when one names no host. */
export function parseTargets(list: string): ImportTarget[] {
  const items = list
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  if (items.length === 0) throw new ImportError('--targets: give at least one URL, host:port or host', 'usage');
  return items.map(target);
}

/** The distinct hosts the targets name, in order. */
export const targetHosts = (targets: readonly ImportTarget[]): string[] => [...new Set(targets.map((t) => t.host))];

export type Lookup = (name: string) => Promise<string[]>;

/** A host name's addresses now, as Nuclei resolved it when it ran; none when it does not resolve in 5 s. */
export const dnsLookup: Lookup = async (name) => {
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), 5000).unref());
  const found = dns.promises
    .lookup(name, { all: true })
    .then((as) => as.map((a) => a.address))
    .catch(() => []);
  return Promise.race([found, timeout]);
};

/**
 * The file's coverage plus the targets: each target's host, and the addresses a host name
 * resolves to (a result records the address Nuclei connected to, `ip`); the port a target names,
 * or every TCP and UDP port of a bare host. A block lists hosts and ports, not pairs, so one
 * bare host among the targets makes every port of every target covered.
 */
export async function coverageWithTargets(
  file: CoverageBlock,
  targets: readonly ImportTarget[],
  lookup: Lookup,
  warn: (m: string) => void,
): Promise<CoverageBlock> {
  const out = new CoverageBuilder();
  for (const h of file.hosts) out.addHost(h);
  for (const [p, list] of Object.entries(file.ports)) if (typeof list === 'string') out.addPortList(p, list);
  for (const host of targetHosts(targets)) {
    out.addHost(host);
    if (hostKindOf(host) !== 'hostname') continue;
    const addresses = await lookup(host);
    if (addresses.length === 0)
      warn(`--targets: ${host} does not resolve here; it covers the findings recorded on that name only`);
    for (const a of addresses) out.addHost(a);
  }
  for (const t of targets) {
    if (t.port !== undefined) out.addPort('tcp', t.port);
    else out.addPortList('tcp', '1-65535').addPortList('udp', '1-65535');
  }
  return out.block({ profile: file.profile, tools: file.tools, source: file.source ?? 'import:nuclei' });
}
