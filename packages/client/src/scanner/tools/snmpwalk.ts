import type { ScanFinding } from '../../pipeline/types.ts';
import { primaryAddress } from '../parse/host-info.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import type { RuleResult } from '../rules/finding.ts';
import { elemAt, portScript, tables } from '../rules/script-tree.ts';
import { snmp } from '../rules/snmp.ts';
import { argAfter, listEvidence, toolFinding } from './finding.ts';
import type { EnrichmentTool, ToolContext, ToolInvocation, ToolOutput } from './types.ts';

/**
 * snmpwalk on each SNMP service that answered a default community (the snmp rule's finding):
 * reads what that community gives anyone who knows it. No MIB files are loaded (`-m ''`) and OIDs
 * stay numeric (`-On`), so the output does not depend on which MIBs the host has installed.
 */

interface Subtree {
  oid: string;
  what: string;
  rule: Omit<RuleResult, 'evidence'>;
}

const REMEDIATION =
  'Remove the default community from the agent (or limit its view to what monitoring needs), use SNMPv3 with ' +
  'authentication and privacy, and allow SNMP only from the management hosts.';

const SUBTREES: readonly Subtree[] = [
  {
    oid: '1.3.6.1.2.1.1',
    what: 'system',
    rule: {
      rule_id: 'snmp-exposes-system',
      title: 'SNMP default community exposes the system description',
      severity: 'low',
      category: 'default_credentials',
      description:
        'The default community reads the system group: the exact operating system and kernel, host name, ' +
        'contact and location, which help an attacker pick exploits and targets.',
      remediation: REMEDIATION,
      cwe: ['CWE-200'],
    },
  },
  {
    oid: '1.3.6.1.2.1.2.2.1.2',
    what: 'interfaces',
    rule: {
      rule_id: 'snmp-exposes-interfaces',
      title: 'SNMP default community exposes the network interfaces',
      severity: 'low',
      category: 'default_credentials',
      description: 'The default community lists the network interfaces, which maps the host into its networks.',
      remediation: REMEDIATION,
      cwe: ['CWE-200'],
    },
  },
  {
    // hrSWRunPath: the executables, without arguments (which may hold secrets); empty for kernel threads.
    oid: '1.3.6.1.2.1.25.4.2.1.4',
    what: 'running processes',
    rule: {
      rule_id: 'snmp-exposes-processes',
      title: 'SNMP default community exposes the running processes',
      severity: 'medium',
      category: 'default_credentials',
      description:
        'The default community lists every running program (HOST-RESOURCES-MIB hrSWRunPath): the services, ' +
        'agents and security tools on the host.',
      remediation: REMEDIATION,
      cwe: ['CWE-200'],
    },
  },
  {
    oid: '1.3.6.1.2.1.25.6.3.1.2',
    what: 'installed software',
    rule: {
      rule_id: 'snmp-exposes-software',
      title: 'SNMP default community exposes the installed software',
      severity: 'medium',
      category: 'default_credentials',
      description:
        'The default community lists the installed packages with their versions (HOST-RESOURCES-MIB ' +
        'hrSWInstalledName), an inventory of what is unpatched.',
      remediation: REMEDIATION,
      cwe: ['CWE-200'],
    },
  },
];

const SYSTEM_FIELDS: Record<string, string> = {
  '1': 'sysDescr',
  '4': 'sysContact',
  '5': 'sysName',
  '6': 'sysLocation',
};

/** A community as it may go into argv: printable, no spaces. */
const COMMUNITY = /^[\x21-\x7e]{1,64}$/;

/** The communities the snmp rule proved: "public" (nmap's default probes) and each snmp-brute found valid. */
function provenCommunities(host: NmapHost, port: NmapPort, ctx: ToolContext): string[] {
  const found = snmp
    .evaluate(host, { scanTime: ctx.scanTime })
    .find((f) => f.port === port.portid && f.protocol === port.protocol);
  if (found === undefined) return [];
  const communities = new Set<string>();
  if (/\bpublic\b/.test(found.evidence ?? '')) communities.add('public');
  const brute = portScript(port, 'snmp-brute');
  for (const t of brute === undefined ? [] : tables(brute.children)) {
    const password = elemAt(t.children, 'password');
    if (password !== undefined && /Valid credentials/i.test(elemAt(t.children, 'state') ?? '')) {
      communities.add(password);
    }
  }
  return [...communities].filter((c) => COMMUNITY.test(c));
}

function agent(address: string, port: NmapPort): string {
  const transport = port.protocol === 'tcp' ? 'tcp' : 'udp';
  return address.includes(':') ? `${transport}6:[${address}]:${port.portid}` : `${transport}:${address}:${port.portid}`;
}

/** `OID = value` lines (`-OQ`); a value that spans lines continues until the next OID. */
function parseWalk(stdout: string): { oid: string; value: string }[] {
  const rows: { oid: string; value: string }[] = [];
  for (const line of stdout.split('\n')) {
    const m = /^\.?((?:\d+\.)*\d+) = (.*)$/.exec(line);
    const last = rows.at(-1);
    if (m !== null) rows.push({ oid: m[1] as string, value: m[2] as string });
    else if (last !== undefined && line !== '') last.value += `\n${line}`;
  }
  // An agent without the subtree answers with one of these instead of a value.
  return rows.filter((r) => !/^(No Such (Object|Instance)|No more variables)/.test(r.value));
}

/** A string value without its quotes and escapes. */
function unquote(value: string): string {
  const m = /^"([\s\S]*)"$/.exec(value.trim());
  return (m === null ? value.trim() : (m[1] as string).replace(/\\(.)/g, '$1')).replace(/\s+/g, ' ').trim();
}

function evidenceFor(subtree: Subtree, rows: { oid: string; value: string }[]): string | undefined {
  if (subtree.what === 'system') {
    const fields = rows.flatMap((r) => {
      const field = SYSTEM_FIELDS[r.oid.slice(subtree.oid.length + 1).replace(/\.0$/, '')];
      const value = unquote(r.value);
      return field === undefined || value === '' ? [] : [`${field}: "${value}"`];
    });
    return fields.length === 0 ? undefined : fields.join('; ');
  }
  const values = [...new Set(rows.map((r) => unquote(r.value)).filter((v) => v !== ''))];
  return values.length === 0 ? undefined : `${values.length} ${subtree.what}: ${listEvidence(values)}`;
}

export const snmpwalk: EnrichmentTool = {
  kind: 'enrichment',
  name: 'snmpwalk',
  debianPackage: 'snmp',
  capability: 'SNMP enumeration: what a default community exposes (system, interfaces, processes, software)',
  timeoutMs: 60_000,
  plan(hosts, ctx) {
    const invocations: ToolInvocation[] = [];
    for (const host of hosts) {
      const address = primaryAddress(host);
      if (address === undefined) continue;
      for (const port of host.ports) {
        if (port.state !== 'open' || port.service?.name !== 'snmp') continue;
        for (const community of provenCommunities(host, port, ctx)) {
          for (const subtree of SUBTREES) {
            invocations.push({
              // -t/-r: two tries of 2 s per request; -Ln: no log output; -OQ: `OID = value`; -Oe/-Ot: raw numbers.
              args: ['-v2c', '-c', community, '-t', '2', '-r', '1', '-Ln', '-m', '', '-On', '-OQ', '-Oe', '-Ot'].concat(
                agent(address, port),
                subtree.oid,
              ),
              label: `${address}:${port.protocol}/${port.portid} ${subtree.what} (community ${community})`,
              host: address,
              port: port.portid,
              service: 'snmp',
            });
          }
        }
      }
    }
    return invocations;
  },
  parse(invocation: ToolInvocation, output: ToolOutput): ScanFinding[] {
    const oid = invocation.args.at(-1);
    const subtree = SUBTREES.find((s) => s.oid === oid);
    if (subtree === undefined || output.timedOut) return [];
    const evidence = evidenceFor(subtree, parseWalk(output.stdout));
    if (evidence === undefined) return [];
    const community = argAfter(invocation.args, '-c') ?? '';
    const protocol = invocation.args.at(-2)?.startsWith('tcp') === true ? 'tcp' : 'udp';
    return [
      toolFinding(
        'snmpwalk',
        invocation,
        {
          ...subtree.rule,
          evidence: `snmpwalk -v2c -c ${community} ${oid} (${subtree.what}): ${evidence}`,
        },
        { protocol: protocol, evidenceAsIs: true },
      ),
    ];
  },
};
