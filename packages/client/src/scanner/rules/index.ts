import type { NotCheckedPlace } from '@svc/protocol';
import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost } from '../parse/types.ts';
import { certificates } from './certificates.ts';
import { cleartextRemote } from './cleartext-remote.ts';
import { databases } from './databases.ts';
import { ftp } from './ftp.ts';
import { scriptCves } from './script-cves.ts';
import { http } from './http.ts';
import { outdatedVersions } from './outdated-versions.ts';
import { smb } from './smb.ts';
import { snmp } from './snmp.ts';
import { ssh } from './ssh.ts';
import { tls } from './tls.ts';
import type { RuleContext, RuleFamily } from './types.ts';
import { vulnFeed } from './vuln-feed.ts';

export type { RuleContext, RuleFamily } from './types.ts';

/** The families that read named scripts; script-cves reads what they leave. */
const READING_FAMILIES: readonly RuleFamily[] = [
  cleartextRemote,
  ftp,
  databases,
  tls,
  certificates,
  http,
  ssh,
  snmp,
  smb,
  outdatedVersions,
  vulnFeed,
];

/**
 * Opt-in scripts the rules also read: brute/intrusive checks that try logins with small built-in
 * lists. A profile adds them only when it means to.
 */
export const OPTIONAL_SCRIPTS: readonly string[] = ['mysql-empty-password', 'pgsql-brute', 'snmp-brute'];

export const RULE_FAMILIES: readonly RuleFamily[] = [
  ...READING_FAMILIES,
  scriptCves(
    new Set([
      ...READING_FAMILIES.flatMap((f) => [...f.scripts, ...(f.ownScripts ?? [])]),
      ...OPTIONAL_SCRIPTS,
      // Read by the ssh family in nmap files made elsewhere (svc import nmap).
      'ssh-hostkey',
    ]),
  ),
];

/**
 * The NSE scripts the rules read, all shipped with Debian's nmap and working offline, none
 * intrusive except ssl-enum-ciphers (nmap files it under intrusive for its many handshakes).
 * A profile runs these with `-sV`; a missing script's output is "not observed", never "secure".
 */
export const REQUIRED_SCRIPTS: readonly string[] = [...new Set(RULE_FAMILIES.flatMap((f) => f.scripts))].sort();

/** The scanner's own NSE scripts the rules read (scanner/nse/index.ts writes them out for a run). */
export const OWN_RULE_SCRIPTS: readonly string[] = [
  ...new Set(RULE_FAMILIES.flatMap((f) => f.ownScripts ?? [])),
].sort();

/** The checks the scripts could not make on the hosts that are up: the session's coverage.not_checked. */
export function notCheckedOn(hosts: readonly NmapHost[]): NotCheckedPlace[] {
  return hosts
    .filter((h) => h.status.state === 'up')
    .flatMap((h) => RULE_FAMILIES.flatMap((family) => family.notChecked?.(h) ?? []));
}

/** A check not made as the run's warning says it (`10.0.0.5:22: SSH host key not measured …`). */
export function notCheckedLine(n: NotCheckedPlace): string {
  return `${n.host}${n.port === null ? '' : `:${n.port}`}: ${n.reason ?? 'not checked'}`;
}

/** Applies every rule family to every host that is up. */
export function detectFindings(hosts: readonly NmapHost[], ctx: RuleContext): ScanFinding[] {
  return hosts
    .filter((h) => h.status.state === 'up')
    .flatMap((h) => RULE_FAMILIES.flatMap((family) => family.evaluate(h, ctx)));
}
