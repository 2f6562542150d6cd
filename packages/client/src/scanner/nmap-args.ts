import { isScanPortList, PORT_LIST_RULE } from '@svc/protocol';
import type { NmapProfile } from './nmap-profiles.ts';
import { ownScriptPath } from './nse/index.ts';
import { isV6, type ValidTarget } from './nmap-targets.ts';

export interface ArgsOptions {
  /** Root: SYN scan, UDP and OS guess. Otherwise a connect scan without UDP or OS guess. */
  privileged: boolean;
  /** A validated port list replacing the profile's (see validatePorts). */
  ports?: string | undefined;
  /** Seconds between progress reports. */
  statsEverySeconds?: number | undefined;
  /** Where the profile's own NSE scripts were written (nse/index.ts writeOwnScripts); required when it has any. */
  scriptDir?: string | undefined;
}

/** The scan options nmap refuses without root (docs/scanner/profiles.md). */
const ROOT_ONLY = new Set(['-sS', '-sU', '-O']);

/**
 * Accepts nmap's `-p` syntax limited to numbers, ranges and `T:`/`U:` prefixes: the protocol's
 * one rule (scan-ports.ts), which the portal applies to run_scan's `ports` and svcd again.
 */
export function validatePorts(ports: string): string {
  if (!isScanPortList(ports)) throw new Error(`invalid port list ${JSON.stringify(ports)}: must be ${PORT_LIST_RULE}`);
  return ports;
}

/** Drops UDP entries for a scan that cannot do UDP; keeps the `T:` prefix meaningful without `-sU`. */
function tcpOnly(ports: string): string {
  let udp = false;
  const kept: string[] = [];
  for (const item of ports.split(',')) {
    if (item.startsWith('U:')) udp = true;
    else if (item.startsWith('T:')) udp = false;
    if (!udp) kept.push(item.replace(/^T:/, ''));
  }
  return kept.join(',');
}

/** The `--script` value: the profile's expression, then each own script's file; empty when it runs none. */
function scriptArg(profile: NmapProfile, scriptDir: string | undefined): string {
  const own = profile.ownScripts ?? [];
  if (own.length === 0) return profile.scripts;
  if (scriptDir === undefined)
    throw new Error(`profile ${profile.name} runs the scanner's own NSE scripts: pass scriptDir`);
  return [profile.scripts, ...own.map((id) => ownScriptPath(scriptDir, id))].filter((s) => s !== '').join(',');
}

/**
 * The full nmap argument list: the profile's fixed options adapted to the privilege level,
 * progress every few seconds, XML on stdout, and the targets after `--` so none can be read
 * as an option. No `--noninteractive`: nmap 7.93 then writes no `<taskprogress>` at all, and
 * stdin is /dev/null anyway.
 */
export function buildNmapArgs(profile: NmapProfile, targets: readonly ValidTarget[], opts: ArgsOptions): string[] {
  const scan = opts.privileged
    ? [...profile.scan]
    : ['-sT', '--unprivileged', ...profile.scan.filter((a) => !ROOT_ONLY.has(a))];
  const udp = opts.privileged && scan.includes('-sU');
  const requested = opts.ports === undefined ? profile.ports : validatePorts(opts.ports);
  const ports = udp ? requested : tcpOnly(requested);
  if (ports === '') throw new Error('no TCP port left to scan without root (UDP needs root)');
  const scripts = scriptArg(profile, opts.scriptDir);
  const stats = opts.statsEverySeconds ?? 10;
  if (!Number.isInteger(stats) || stats < 1) throw new Error('statsEverySeconds must be a positive integer');
  return [
    ...scan,
    ...(targets.some(isV6) ? ['-6'] : []),
    '-p',
    ports,
    ...(scripts === '' ? [] : ['--script', scripts]),
    ...profile.limits,
    '--stats-every',
    `${stats}s`,
    '-oX',
    '-',
    '--',
    ...targets.map((t) => t.value),
  ];
}
