import type { CoverageBuilder } from '../../pipeline/coverage-builder.ts';
import type { NmapHost, NmapRunInfo } from './types.ts';

/**
 * What an nmap run looked at, for the session's `coverage` block (docs/scanner/profiles.md,
 * "Coverage"): the hosts nmap reports up and the ports it says it scanned per transport.
 */

/**
 * The addresses of a host that answered and was scanned to the end. A host down, or one that
 * `--host-timeout` cut short (`timedout="true"`: some of its ports were never probed), adds
 * none: its earlier findings stay open, not checked, rather than resolved by a scan that did
 * not finish looking.
 */
export function answeredAddresses(host: NmapHost): string[] {
  if (host.status.state !== 'up' || host.timedOut === true) return [];
  return host.addresses.map((a) => a.addr);
}

/** Adds the ports of each `<scaninfo protocol services>`: exactly what nmap says it scanned. */
export function addScannedPorts(coverage: CoverageBuilder, info: NmapRunInfo): void {
  for (const s of info.scaninfo) coverage.addPortList(s.protocol, s.services);
}

/** Adds one host of the run as it streams (answeredAddresses). */
export function addAnsweredHost(coverage: CoverageBuilder, host: NmapHost): void {
  for (const a of answeredAddresses(host)) coverage.addHost(a);
}
