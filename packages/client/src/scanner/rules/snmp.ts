import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort } from '../parse/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { elemAt, portScript, quote, tables } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * SNMP answering a default community. snmp-sysdescr (and the other default snmp-* scripts) ask
 * with "public", so any output proves it; -sV's SNMPv1 probe also uses "public" and reports it in
 * extrainfo; snmp-brute (opt-in) names each community that worked. snmp-info is SNMPv3 engine
 * discovery without a community and proves nothing here.
 */

const COMMUNITY_SCRIPTS = ['snmp-sysdescr', 'snmp-interfaces', 'snmp-netstat', 'snmp-processes'];

function communityFinding(host: NmapHost, port: NmapPort): ScanFinding[] {
  const evidence: string[] = [];
  let severity: 'medium' | 'high' = 'medium';
  const s = port.service;
  if (s?.name === 'snmp' && /\bpublic\b/.test(s.extrainfo ?? '')) evidence.push(serviceEvidence(port));
  for (const id of COMMUNITY_SCRIPTS) {
    const script = portScript(port, id);
    if (script !== undefined && script.output.trim() !== '') evidence.push(`${quote(script, 3)} (community public)`);
  }
  const brute = portScript(port, 'snmp-brute');
  for (const t of brute === undefined ? [] : tables(brute.children)) {
    const password = elemAt(t.children, 'password');
    if (password === undefined || !/Valid credentials/i.test(elemAt(t.children, 'state') ?? '')) continue;
    evidence.push(`snmp-brute: community "${password}" valid`);
    if (password !== 'public') severity = 'high';
  }
  if (evidence.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: 'snmp-default-community',
      title: 'SNMP answers a default community string',
      severity,
      category: 'default_credentials',
      evidence: evidence.join('; '),
      description:
        'The SNMP agent answers a well-known community string, which SNMP v1/v2c sends in clear text as its only ' +
        'password: anyone can read the device configuration, interfaces, routes and processes' +
        (severity === 'high' ? ', and a community other than "public" (often read-write) was accepted.' : '.'),
      remediation:
        'Remove the default communities; use SNMPv3 with authentication and privacy, and allow SNMP only from ' +
        'the management hosts.',
      cve: ['CVE-1999-0517'],
      cwe: ['CWE-1392'],
    }),
  ];
}

export const snmp: RuleFamily = {
  id: 'snmp',
  // The other community scripts are read when a profile runs them; snmp-sysdescr is the one it needs.
  scripts: ['snmp-sysdescr'],
  evaluate(host) {
    return openPorts(host).flatMap((port) => communityFinding(host, port));
  },
};
