import { sslscan } from '../scanner/tools/sslscan.ts';
import { testssl } from '../scanner/tools/testssl.ts';
import { whatweb } from '../scanner/tools/whatweb.ts';
import type { Installable, PackageNames } from './installable.ts';
import { findProgram } from '../kit/process/find-program.ts';

/**
 * The programs the scanner pipeline runs on a customer host, in three tiers:
 *
 * - required: nothing works without it. Only nmap (host discovery, port and service scan,
 *   the NSE scripts the pipeline's findings come from). Missing → dependency_check.sh exits 1
 *   and pi_validate.sh's "core dependencies" check fails.
 * - core: used by the standard pipeline and the agent; a host without one still scans but
 *   loses that stage. Missing → a warning naming the lost capability, never a failure.
 *   `pi_validate.sh --fix` installs required and core tools.
 * - optional: extra scanners `svc scan` uses when installed (scanner/tools); each missing one is
 *   reported as a skipped capability. They are
 *   not installed by --fix (several are large, not packaged everywhere, or non-free); the
 *   reports print the command that would install each.
 *
 * Package names differ per package manager; null means the manager's standard repositories
 * have no package for it (the reports then point at `homepage`).
 */
export type Tier = 'required' | 'core' | 'optional';

export interface ToolSpec extends Installable {
  tier: Tier;
  /** Command names on the PATH, any of which provides the tool (first found wins). */
  commands: string[];
  /** What the pipeline can do with it, i.e. what is skipped without it. */
  capability: string;
}

const same = (name: string): PackageNames => ({ apt: name, dnf: name, yum: name, apk: name, brew: name });

export const TOOLS: readonly ToolSpec[] = [
  {
    id: 'nmap',
    tier: 'required',
    commands: ['nmap'],
    capability: 'host discovery, port and service scanning',
    packages: same('nmap'),
    homepage: 'https://nmap.org/download',
  },

  {
    id: 'curl',
    tier: 'core',
    commands: ['curl'],
    capability: 'web service probing: HTTP status, headers, redirects',
    packages: same('curl'),
  },
  {
    id: 'openssl',
    tier: 'core',
    commands: ['openssl'],
    capability: 'TLS certificate checks: expiry, issuer, key size',
    packages: same('openssl'),
  },
  {
    id: 'jq',
    tier: 'core',
    commands: ['jq'],
    capability: 'agent command handling and session JSON post-processing in shell hooks',
    packages: same('jq'),
  },
  {
    id: 'git',
    tier: 'core',
    commands: ['git'],
    capability: 'agent self-update: the update command needs a git checkout',
    packages: same('git'),
  },

  {
    id: 'testssl.sh',
    tier: 'optional',
    commands: ['testssl.sh', 'testssl'],
    capability: testssl.capability,
    packages: { apt: 'testssl.sh', dnf: 'testssl', yum: 'testssl', apk: null, brew: 'testssl' },
    homepage: 'https://testssl.sh',
  },
  {
    id: 'sslscan',
    tier: 'optional',
    commands: ['sslscan'],
    capability: sslscan.capability,
    packages: same('sslscan'),
    homepage: 'https://github.com/rbsec/sslscan',
  },
  {
    id: 'whatweb',
    tier: 'optional',
    commands: ['whatweb'],
    capability: whatweb.capability,
    packages: { apt: 'whatweb', dnf: null, yum: null, apk: null, brew: 'whatweb' },
    homepage: 'https://github.com/urbanadventurer/WhatWeb',
  },
  {
    id: 'masscan',
    tier: 'optional',
    commands: ['masscan'],
    capability: 'fast port discovery on large ranges',
    packages: { apt: 'masscan', dnf: 'masscan', yum: 'masscan', apk: null, brew: 'masscan' },
    homepage: 'https://github.com/robertdavidgraham/masscan',
  },
  {
    id: 'dig',
    tier: 'optional',
    commands: ['dig'],
    capability: 'DNS record checks: zone transfer, SPF, DMARC',
    packages: { apt: 'dnsutils', dnf: 'bind-utils', yum: 'bind-utils', apk: 'bind-tools', brew: 'bind' },
  },
  {
    id: 'snmpwalk',
    tier: 'optional',
    commands: ['snmpwalk'],
    capability: 'SNMP enumeration',
    packages: { apt: 'snmp', dnf: 'net-snmp-utils', yum: 'net-snmp-utils', apk: 'net-snmp-tools', brew: 'net-snmp' },
  },
  {
    id: 'smbclient',
    tier: 'optional',
    commands: ['smbclient'],
    capability: 'SMB share enumeration',
    packages: { apt: 'smbclient', dnf: 'samba-client', yum: 'samba-client', apk: 'samba-client', brew: 'samba' },
  },
];

/** bash ≥ 4 runs the scanner's shell hooks; macOS ships 3.2, hence a package for it too. */
export const BASH: Installable = { id: 'bash', packages: same('bash') };

/**
 * crontab, for cron-scheduled scans. Alpine's crontab comes with busybox and macOS has cron
 * built in, so there is nothing to install there. Never installed by --fix: scans can also be
 * scheduled by the svcd daemon, and installing cron starts a system service.
 */
export const CRON: Installable = {
  id: 'crontab',
  packages: { apt: 'cron', dnf: 'cronie', yum: 'cronie', apk: null, brew: null },
};

export function toolsOfTier(tier: Tier): ToolSpec[] {
  return TOOLS.filter((t) => t.tier === tier);
}

export interface ToolStatus {
  spec: ToolSpec;
  /** Absolute path of the command found, null when missing. */
  path: string | null;
}

/** Looks every tool up on the PATH of `env` (no program is run). */
export function detectTools(env: NodeJS.ProcessEnv, tools: readonly ToolSpec[] = TOOLS): ToolStatus[] {
  return tools.map((spec) => {
    for (const command of spec.commands) {
      const found = findProgram(command, env);
      if (found !== null) return { spec, path: found };
    }
    return { spec, path: null };
  });
}

export function missingOf(statuses: ToolStatus[], tier?: Tier): ToolSpec[] {
  return statuses.filter((s) => s.path === null && (tier === undefined || s.spec.tier === tier)).map((s) => s.spec);
}
