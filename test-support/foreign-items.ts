import type { ForeignItem } from './foreign-reports.ts';

/** The scan the import tests write in each format: two hosts, three weaknesses and one note. */
export const SCAN_START = new Date('2026-01-13T10:00:00Z');
export const SCAN_END = new Date('2026-01-13T10:20:00Z');

export const TLS10: ForeignItem = {
  host: '192.0.2.10',
  hostname: 'web.lab.example',
  port: 443,
  protocol: 'tcp',
  service: 'https',
  id: '104743',
  name: 'TLS Version 1.0 Protocol Detection',
  severity: 'medium',
  cvss: 6.5,
  cwe: ['CWE-327'],
  urls: ['https://datatracker.ietf.org/doc/html/rfc8996'],
  synopsis: 'The remote service encrypts traffic using an older version of TLS.',
  description: 'The remote service accepts connections encrypted using TLS 1.0.',
  solution: 'Enable TLS 1.2 and 1.3 and disable TLS 1.0.',
  output: 'TLSv1 is enabled and the server supports at least one cipher.',
};

export const TERRAPIN: ForeignItem = {
  host: '192.0.2.10',
  hostname: 'web.lab.example',
  port: 22,
  protocol: 'tcp',
  service: 'ssh',
  id: '187315',
  name: 'SSH Terrapin Prefix Truncation Weakness (CVE-2023-48795)',
  severity: 'medium',
  cvss: 5.9,
  cve: ['CVE-2023-48795'],
  urls: ['https://terrapin-attack.com/'],
  description: 'The remote SSH server is vulnerable to a prefix truncation attack.',
  solution: 'Upgrade the SSH server.',
  output: 'Supports the vulnerable cipher chacha20-poly1305@openssh.com',
};

export const ANON_FTP: ForeignItem = {
  host: '192.0.2.11',
  port: 21,
  protocol: 'tcp',
  service: 'ftp',
  id: '10079',
  name: 'Anonymous FTP Enabled',
  severity: 'high',
  cvss: 7.5,
  cve: ['CVE-1999-0497'],
  description: 'Anonymous logins are allowed on the remote FTP server.',
  solution: 'Disable anonymous FTP.',
  output: 'The contents of the remote FTP root are: pub',
};

export const SCAN_INFO: ForeignItem = {
  host: '192.0.2.11',
  port: 0,
  id: '19506',
  name: 'Scan Information',
  severity: 'info',
  description: 'Information about the scan.',
  solution: 'n/a',
  output: 'Scanner version: 10.8.0',
};

export const FIRST_SCAN: readonly ForeignItem[] = [TLS10, TERRAPIN, ANON_FTP, SCAN_INFO];

/** The same items with each tool's id: a Greenbone OID, a Nuclei template id. */
export const withOids = (items: readonly ForeignItem[]) =>
  items.map((i) => ({ ...i, id: `1.3.6.1.4.1.25623.1.0.${i.id}` }));
export const withTemplates = (items: readonly ForeignItem[]) => items.map((i) => ({ ...i, id: `svc-test-${i.id}` }));
