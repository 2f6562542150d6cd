import type { ScanFinding } from '../../pipeline/types.ts';
import { primaryAddress } from '../parse/host-info.ts';
import type { NmapPort } from '../parse/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import { listEvidence, toolFinding } from './finding.ts';
import type { EnrichmentTool, ToolInvocation, ToolOutput } from './types.ts';

/**
 * smbclient on each SMB service: lists the shares without credentials (`-N`), and lists the top
 * directory of each disk share the listing names (read only: `ls` is the one command it sends).
 */

const SMB_SERVICES = new Set(['microsoft-ds', 'netbios-ssn', 'smb']);
/** Protocol ceiling, per-request timeout (s). */
const COMMON = ['-m', 'SMB3', '-t', '10'];
/** A share name that may go into `//host/share`: no path separators, controls or a leading dash. */
const SHARE_NAME = /^[^-\\/\x00-\x1f"*:<>?|][^\\/\x00-\x1f"*:<>?|]{0,79}$/;
const MAX_SHARES = 20;

interface Share {
  type: string;
  name: string;
  comment: string;
}

/** `-g` output: `Type|Name|Comment`, one share a line; anything else is a status message. */
function parseShares(stdout: string): Share[] {
  return stdout.split('\n').flatMap((line) => {
    const m = /^(Disk|IPC|Printer|Device)\|([^|]*)\|(.*)$/.exec(line.trim());
    return m === null ? [] : [{ type: m[1] as string, name: m[2] as string, comment: m[3] as string }];
  });
}

/** The entries of an `ls` listing, without `.` and `..`; undefined when the share could not be read. */
function parseListing(output: ToolOutput): string[] | undefined {
  if (output.exitCode !== 0 || /NT_STATUS_/.test(output.stdout + output.stderr)) return undefined;
  if (!/blocks of size \d+/.test(output.stdout)) return undefined;
  return output.stdout.split('\n').flatMap((line) => {
    const m = /^ {2}(.+?)\s+([A-Z]*)\s+\d+\s+\w{3} \w{3} +\d+ [\d:]+ \d{4}$/.exec(line);
    return m === null || m[1] === '.' || m[1] === '..' ? [] : [m[2]?.includes('D') ? `${m[1]}/` : (m[1] as string)];
  });
}

function smbPort(ports: readonly NmapPort[]): NmapPort | undefined {
  const smb = ports.filter(
    (p) => p.state === 'open' && p.protocol === 'tcp' && SMB_SERVICES.has(p.service?.name ?? ''),
  );
  // Direct SMB (no NetBIOS session) when nmap found both.
  return smb.find((p) => p.service?.name === 'microsoft-ds' || p.portid === 445) ?? smb[0];
}

const target = (address: string) => (address.includes(':') ? `[${address}]` : address);

const shareListing: Omit<RuleResult, 'evidence'> = {
  rule_id: 'smb-anonymous-share-list',
  title: 'SMB shares can be listed without credentials',
  severity: 'medium',
  category: 'misconfiguration',
  cwe: ['CWE-200'],
  description:
    'The SMB server lists its shares to an anonymous or guest session: anyone on the network learns the share ' +
    'names and comments, the starting point for reading them.',
  remediation:
    'Set "restrict anonymous = 2" and "map to guest = never" (Samba) or RestrictAnonymous and ' +
    'RestrictNullSessAccess (Windows), and require authentication for share enumeration.',
};

export const smbclient: EnrichmentTool = {
  kind: 'enrichment',
  name: 'smbclient',
  debianPackage: 'smbclient',
  capability: 'SMB enumeration: shares listed and readable without credentials',
  timeoutMs: 30_000,
  plan(hosts) {
    return hosts.flatMap((host) => {
      const address = primaryAddress(host);
      const port = smbPort(host.ports);
      if (address === undefined || port === undefined) return [];
      return [
        {
          args: ['-N', '-g', '-L', `//${target(address)}`, '-p', String(port.portid), ...COMMON],
          label: `${address}:${port.portid} share list`,
          host: address,
          port: port.portid,
          service: port.service?.name,
        },
      ];
    });
  },
  followUp(invocation, output) {
    if (!invocation.args.includes('-L')) return [];
    const server = invocation.args[invocation.args.indexOf('-L') + 1] as string;
    const port = String(invocation.port);
    return parseShares(output.stdout)
      .filter((s) => s.type === 'Disk' && SHARE_NAME.test(s.name))
      .slice(0, MAX_SHARES)
      .map((s) => ({
        args: ['-N', `${server}/${s.name}`, '-p', port, ...COMMON, '-c', 'ls'],
        label: `${invocation.host}:${port} share ${s.name}`,
        host: invocation.host,
        port: invocation.port,
        service: invocation.service,
      }));
  },
  parse(invocation: ToolInvocation, output: ToolOutput): ScanFinding[] {
    if (output.timedOut) return [];
    if (invocation.args.includes('-L')) {
      const shares = parseShares(output.stdout);
      if (shares.length === 0) return [];
      const names = shares.map((s) => `${s.name} (${s.type}${s.comment === '' ? '' : `: ${s.comment}`})`);
      return [
        toolFinding(
          'smbclient',
          invocation,
          {
            ...shareListing,
            evidence: `smbclient -N -L listed ${shares.length} shares: ${listEvidence(names)}`,
          },
          { protocol: 'tcp', evidenceAsIs: true },
        ),
      ];
    }
    const share = invocation.args[1]?.split('/').at(-1) ?? '';
    const entries = parseListing(output);
    if (entries === undefined) return [];
    return [
      toolFinding(
        'smbclient',
        invocation,
        {
          rule_id: `smb-anonymous-share-readable:${share}`,
          title: `SMB share "${share}" is readable without credentials`,
          severity: 'high',
          category: 'misconfiguration',
          evidence:
            `smbclient -N ${invocation.args[1]} -c ls listed ${entries.length} entries` +
            (entries.length === 0 ? ' (empty top directory)' : `: ${listEvidence(entries)}`),
          description:
            'An anonymous or guest session can open the share and list its files: anything stored there can be ' +
            'read by anyone on the network.',
          remediation:
            'Set "guest ok = no" on the share (Samba) or remove Everyone/ANONYMOUS LOGON from its permissions ' +
            '(Windows), and grant access to named accounts only.',
          cwe: ['CWE-284'],
        },
        { protocol: 'tcp', evidenceAsIs: true },
      ),
    ];
  },
};
