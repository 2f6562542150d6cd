import { OWN_RULE_SCRIPTS, REQUIRED_SCRIPTS } from './rules/index.ts';

/**
 * A scan profile: a fixed nmap option list. Nothing in it comes from the user; only targets
 * (validated) and, for a narrower scan, a validated port list are added when it runs.
 */
export interface NmapProfile {
  name: string;
  description: string;
  /** Scan types and detection options as root: the SYN scan, UDP and the OS guess live here. */
  scan: readonly string[];
  /** `-p` value; `U:` entries need root (UDP scan). */
  ports: string;
  /** The `--script` expression. */
  scripts: string;
  /** The scanner's own NSE scripts (scanner/nse/) run beside it, by id. */
  ownScripts?: readonly string[];
  /** Timing, retries and limits. */
  limits: readonly string[];
}

/** TCP ports the services the rules know listen on, with 6379, 11211 and 27017 (outside nmap's top 1000). */
export const QUICK_PORTS =
  'T:21-23,25,80,111,139,443,445,512-514,873,990,1433,2049,3306,3389,5432,5900,6379,8080,8443,9200,11211,27017,U:161';

const RULE_SCRIPTS = REQUIRED_SCRIPTS.join(',');

export const PROFILES = {
  quick_recon: {
    name: 'quick_recon',
    description: 'Known service ports only, light version detection, the scripts the detection rules read',
    // No `--open`: nmap then leaves out every host without an open port, so a host whose last
    // open port was closed would never count as looked at (docs/scanner/profiles.md, "Coverage").
    scan: ['-sS', '-sU', '-sV', '--version-light', '-n'],
    ports: QUICK_PORTS,
    scripts: RULE_SCRIPTS,
    ownScripts: OWN_RULE_SCRIPTS,
    limits: ['-T4', '--max-retries', '2', '--host-timeout', '15m', '--script-timeout', '2m'],
  },
  full_recon: {
    name: 'full_recon',
    description:
      "All TCP ports and SNMP, full version detection, OS guess, nmap's default scripts plus the rules' scripts",
    scan: ['-sS', '-sU', '-sV', '-O', '--reason'],
    ports: 'T:1-65535,U:161',
    scripts: `(default and not external) or ${REQUIRED_SCRIPTS.join(' or ')}`,
    ownScripts: OWN_RULE_SCRIPTS,
    limits: ['-T4', '--max-retries', '2', '--host-timeout', '60m', '--script-timeout', '5m'],
  },
  discovery: {
    name: 'discovery',
    description: 'Which hosts are up and which known service ports are open: no version detection, no scripts',
    scan: ['-sS', '-n'],
    ports: QUICK_PORTS.replace(/,U:161$/, ''),
    scripts: '',
    limits: ['-T4', '--max-retries', '1', '--host-timeout', '10m'],
  },
} as const satisfies Record<string, NmapProfile>;

export type ProfileName = keyof typeof PROFILES;

export function isProfileName(name: string): name is ProfileName {
  return Object.hasOwn(PROFILES, name);
}
