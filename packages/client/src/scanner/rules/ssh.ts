import type { NotCheckedPlace } from '@svc/protocol';
import type { ScanFinding } from '../../pipeline/types.ts';
import { SSH_HOST_KEYS_ID } from '../nse/ssh-host-keys.ts';
import type { NmapHost, NmapPort, ScriptNode } from '../parse/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { elemAt, elemValues, portScript, tableAt, tables } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * Weak SSH algorithms (ssh2-enum-algos), short host keys (the scanner's own svc-ssh-host-keys, or
 * nmap's ssh-hostkey in an nmap file made elsewhere) and protocol 1 (sshv1).
 * OpenSSH's current defaults (hmac-sha1 and umac-64 MACs among them) are not flagged.
 */

const WEAK_HOST_KEY = 'ssh-weak-host-key';

interface AlgoRule {
  list: string;
  test: (algo: string) => boolean;
  severity: 'medium' | 'low';
}

const ALGO_RULES: readonly AlgoRule[] = [
  { list: 'kex_algorithms', test: (a) => a === 'diffie-hellman-group1-sha1', severity: 'medium' },
  { list: 'kex_algorithms', test: (a) => /sha1/.test(a), severity: 'low' },
  { list: 'server_host_key_algorithms', test: (a) => a === 'ssh-dss', severity: 'medium' },
  { list: 'server_host_key_algorithms', test: (a) => a === 'ssh-rsa', severity: 'low' },
  { list: 'encryption_algorithms', test: (a) => /-cbc(@|$)|^arcfour|^none$/.test(a), severity: 'medium' },
  { list: 'mac_algorithms', test: (a) => /^hmac-md5|-96(@|$)|^none$/.test(a), severity: 'medium' },
];

function weakAlgorithms(host: NmapHost, port: NmapPort): ScanFinding[] {
  const algos = portScript(port, 'ssh2-enum-algos');
  if (algos === undefined) return [];
  const hits: string[] = [];
  let severity: 'medium' | 'low' = 'low';
  for (const list of ['kex_algorithms', 'server_host_key_algorithms', 'encryption_algorithms', 'mac_algorithms']) {
    const offered = elemValues(tableAt(algos.children, list)?.children ?? []);
    const weak = offered.filter((a) => ALGO_RULES.some((r) => r.list === list && r.test(a)));
    if (weak.some((a) => ALGO_RULES.some((r) => r.list === list && r.severity === 'medium' && r.test(a))))
      severity = 'medium';
    if (weak.length > 0) hits.push(`${list}: ${weak.join(', ')}`);
  }
  if (hits.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: 'ssh-weak-algorithms',
      title: 'SSH server offers weak algorithms',
      severity,
      category: 'weak_crypto',
      evidence: `ssh2-enum-algos: ${hits.join('; ')}`,
      description:
        'The SSH server still negotiates legacy algorithms: SHA-1 key exchange or signatures (RFC 9142 and OpenSSH ' +
        '8.8 retired them), CBC-mode or RC4 ciphers, MD5 or truncated MACs, or DSA host keys. A client that ' +
        'supports them can be steered onto them.',
      remediation:
        'Remove the legacy entries from KexAlgorithms, HostKeyAlgorithms, Ciphers and MACs in sshd_config ' +
        '(the OpenSSH defaults are fine) and restart sshd.',
      cwe: ['CWE-327'],
      urls: ['https://www.rfc-editor.org/rfc/rfc9142'],
    }),
  ];
}

interface HostKey {
  type: string;
  bits: number;
}

const keysIn = (nodes: readonly ScriptNode[]): HostKey[] =>
  tables(nodes)
    .filter((t) => t.key === undefined)
    .map((t) => ({ type: elemAt(t.children, 'type') ?? '?', bits: Number(elemAt(t.children, 'bits')) }));

/** The port's host keys and the script that measured them; undefined when none ran. */
function hostKeys(port: NmapPort): { script: string; keys: HostKey[] } | undefined {
  const own = portScript(port, SSH_HOST_KEYS_ID);
  if (own !== undefined) return { script: own.id, keys: keysIn(tableAt(own.children, 'keys')?.children ?? []) };
  const nmaps = portScript(port, 'ssh-hostkey');
  return nmaps === undefined ? undefined : { script: nmaps.id, keys: keysIn(nmaps.children) };
}

function weakHostKeys(host: NmapHost, port: NmapPort): ScanFinding[] {
  const measured = hostKeys(port);
  if (measured === undefined) return [];
  const weak = measured.keys.filter((k) => /rsa|dss/.test(k.type) && Number.isFinite(k.bits) && k.bits < 2048);
  if (weak.length === 0) return [];
  return [
    finding(host, port, {
      rule_id: WEAK_HOST_KEY,
      title: 'SSH host key under 2048 bits',
      severity: 'medium',
      category: 'weak_crypto',
      evidence: `${measured.script}: ${weak.map((k) => `${k.type} ${k.bits} bits`).join(', ')}`,
      description:
        'The server authenticates with an RSA or DSA host key under 2048 bits, which can be factored or forged.',
      remediation: 'Generate an Ed25519 (or RSA 3072+) host key, list it in HostKey, and remove the short keys.',
      cwe: ['CWE-326'],
    }),
  ];
}

/**
 * The keys svc-ssh-host-keys could not fetch, with its reason: their size is unknown, not fine,
 * so the port's weak host key check was not made (a finding of it there stays open).
 */
function unmeasuredKeys(host: NmapHost): NotCheckedPlace[] {
  const address = host.addresses[0]?.addr;
  if (address === undefined) return [];
  return openPorts(host).flatMap((port) => {
    const own = portScript(port, SSH_HOST_KEYS_ID);
    const reasons = elemValues(tableAt(own?.children ?? [], 'unmeasured')?.children ?? []);
    return reasons.map((r) => ({
      host: address,
      port: port.portid,
      protocol: 'tcp' as const,
      rules: [WEAK_HOST_KEY],
      reason: `SSH host key not measured (${r}); its size was not checked`,
    }));
  });
}

function protocol1(host: NmapHost, port: NmapPort): ScanFinding[] {
  const v1 = portScript(port, 'sshv1');
  if (v1 === undefined || !/supports SSHv1/i.test(v1.output)) return [];
  return [
    finding(host, port, {
      rule_id: 'ssh-protocol-1',
      title: 'SSH protocol version 1 supported',
      severity: 'high',
      category: 'weak_crypto',
      evidence: `${serviceEvidence(port)}; sshv1: ${v1.output.trim()}`,
      description:
        'The server accepts SSH protocol 1, which has known design flaws (CRC-32 integrity, session hijacking and ' +
        'key recovery attacks) and was removed from OpenSSH in 7.6.',
      remediation: 'Disable protocol 1 (Protocol 2 in sshd_config) or upgrade to a current SSH server.',
      cve: ['CVE-2001-0361', 'CVE-2001-1473'],
      cwe: ['CWE-327'],
    }),
  ];
}

export const ssh: RuleFamily = {
  id: 'ssh',
  scripts: ['ssh2-enum-algos', 'sshv1'],
  ownScripts: [SSH_HOST_KEYS_ID],
  evaluate(host) {
    return openPorts(host).flatMap((port) => [
      ...weakAlgorithms(host, port),
      ...weakHostKeys(host, port),
      ...protocol1(host, port),
    ]);
  },
  notChecked: unmeasuredKeys,
};
