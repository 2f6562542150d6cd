import type { ScanFinding } from '../../pipeline/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { portScript, quote } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/** Anonymous FTP (writable is worse) and FTP whose control channel offers no TLS. */

const isFtp = (name: string | undefined) => name === 'ftp';

export const ftp: RuleFamily = {
  id: 'ftp',
  scripts: ['ftp-anon', 'ssl-cert'],
  evaluate(host) {
    return openPorts(host).flatMap((port) => {
      if (!isFtp(port.service?.name)) return [];
      const out: ScanFinding[] = [];
      const anon = portScript(port, 'ftp-anon');
      if (anon !== undefined && /Anonymous FTP login allowed/i.test(anon.output)) {
        const writable = anon.output.includes('[NSE: writeable]');
        out.push(
          finding(host, port, {
            rule_id: 'ftp-anonymous',
            title: writable ? 'Anonymous FTP login with a writable directory' : 'Anonymous FTP login allowed',
            severity: writable ? 'high' : 'medium',
            category: 'default_credentials',
            evidence: quote(anon),
            description:
              'The FTP server accepts the anonymous user, so anyone who reaches it can list and download its files' +
              (writable
                ? ', and at least one directory is writable: anyone can upload files (malware staging, storage abuse).'
                : '.'),
            remediation:
              'Disable anonymous login (vsftpd: anonymous_enable=NO) unless the server is meant to publish files; ' +
              'never allow anonymous uploads.',
            cwe: writable ? ['CWE-284', 'CWE-434'] : ['CWE-284'],
          }),
        );
      }
      // ssl-cert speaks AUTH TLS on FTP: no certificate seen means the server offered no TLS (if the script ran).
      const tls = port.service?.tunnel === 'ssl' || portScript(port, 'ssl-cert') !== undefined;
      if (!tls) {
        out.push(
          finding(host, port, {
            rule_id: 'ftp-cleartext',
            title: 'FTP without TLS',
            severity: 'medium',
            category: 'cleartext_protocol',
            evidence: `${serviceEvidence(port)}; no TLS certificate observed (ssl-cert gave no output)`,
            description:
              'The FTP server did not offer TLS (AUTH TLS), so user names, passwords and files cross the network ' +
              'unencrypted.',
            remediation: 'Require FTPS (vsftpd: ssl_enable=YES, force_local_logins_ssl=YES) or replace FTP with SFTP.',
            cwe: ['CWE-319'],
          }),
        );
      }
      return out;
    });
  },
};
