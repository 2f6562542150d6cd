import { finding, openPorts, serviceEvidence } from './finding.ts';
import type { RuleFamily } from './types.ts';

/** Telnet and the BSD r-services send credentials and sessions in clear text. */

const RSH_NAMES = new Set(['login', 'exec', 'shell', 'rsh', 'rlogin', 'rexec']);

export const cleartextRemote: RuleFamily = {
  id: 'cleartext-remote-access',
  scripts: ['telnet-encryption'],
  evaluate(host) {
    return openPorts(host).flatMap((port) => {
      const s = port.service;
      if (s === undefined || s.tunnel === 'ssl') return [];
      if (s.name === 'telnet') {
        const enc = port.scripts.find((x) => x.id === 'telnet-encryption');
        return [
          finding(host, port, {
            rule_id: 'telnet-open',
            title: 'Telnet remote login in clear text',
            severity: 'high',
            category: 'cleartext_protocol',
            evidence: `${serviceEvidence(port)}${enc === undefined ? '' : `; telnet-encryption: ${enc.output.trim()}`}`,
            description:
              'A Telnet server accepts logins. Telnet sends user names, passwords and the whole session unencrypted, ' +
              'so anyone on the network path can read or hijack them. Optional Telnet encryption is negotiated, ' +
              'not enforced, and clients rarely use it.',
            remediation: 'Disable the Telnet service and use SSH for remote administration.',
            cwe: ['CWE-319'],
          }),
        ];
      }
      if (RSH_NAMES.has(s.name)) {
        return [
          finding(host, port, {
            rule_id: 'rsh-open',
            title: `BSD r-service (${s.name}) in clear text`,
            severity: 'high',
            category: 'cleartext_protocol',
            evidence: serviceEvidence(port),
            description:
              'A BSD r-service (rlogin, rsh or rexec) accepts connections. These send credentials and sessions ' +
              'unencrypted and rely on host-based trust that is easy to spoof.' +
              (s.method === 'table' ? ' nmap named the service from the port number only (lower confidence).' : ''),
            remediation: 'Disable rlogin, rsh and rexec (remove rsh-server) and use SSH instead.',
            cwe: ['CWE-319', 'CWE-287'],
          }),
        ];
      }
      return [];
    });
  },
};
