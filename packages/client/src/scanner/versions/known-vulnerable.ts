/**
 * The project's small, dated table of service versions with known, serious vulnerabilities,
 * matched against nmap's `-sV` product, CPE and version. Only entries backed by the cited
 * advisories; `checked` is when an entry was last compared with its sources. Version-only
 * matches are "potential": distributions backport fixes without changing the upstream version,
 * so where the banner carries a Debian revision and the Debian fix is known, that decides.
 */

export const KNOWN_VULNERABLE_CHECKED = '2026-11-25';

export interface VersionRange {
  /** Inclusive lower bound; absent means every earlier version. */
  from?: string | undefined;
  /** Exclusive upper bound. */
  below: string;
}

export interface KnownVulnerable {
  id: string;
  product: string;
  /** CPE 2.2 prefixes as nmap writes them (`cpe:/a:vendor:product`). */
  cpes: readonly string[];
  /** nmap `product` names, for matches without a CPE. */
  products: readonly string[];
  affected: readonly VersionRange[];
  fixed: string;
  /** Debian package version that fixes it, per upstream version Debian ships (`1:9.2p1-2+deb12u3`). */
  debianFixed?: Readonly<Record<string, string>> | undefined;
  cve: readonly string[];
  cvss: number;
  title: string;
  summary: string;
  source: readonly string[];
  checked: string;
}

export const KNOWN_VULNERABLE: readonly KnownVulnerable[] = [
  {
    id: 'openssh-regresshion',
    product: 'OpenSSH',
    cpes: ['cpe:/a:openbsd:openssh'],
    products: ['OpenSSH'],
    affected: [{ from: '8.5p1', below: '9.8p1' }],
    fixed: '9.8p1',
    debianFixed: { '9.2p1': '1:9.2p1-2+deb12u3' },
    cve: ['CVE-2024-6387'],
    cvss: 8.1,
    title: 'OpenSSH signal handler race (regreSSHion)',
    summary:
      'A race in sshd\u2019s SIGALRM handler allows unauthenticated remote code execution as root on glibc systems.',
    source: [
      'https://www.openssh.com/txt/release-9.8',
      'https://www.cve.org/CVERecord?id=CVE-2024-6387',
      '/usr/share/doc/openssh-client/changelog.Debian.gz (1:9.2p1-2+deb12u3)',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'openssh-terrapin',
    product: 'OpenSSH',
    cpes: ['cpe:/a:openbsd:openssh'],
    products: ['OpenSSH'],
    affected: [{ below: '9.6p1' }],
    fixed: '9.6p1',
    debianFixed: { '9.2p1': '1:9.2p1-2+deb12u2' },
    cve: ['CVE-2023-48795'],
    cvss: 5.9,
    title: 'SSH prefix truncation (Terrapin)',
    summary:
      'A man in the middle can delete messages at the start of the encrypted transport (ChaCha20-Poly1305 or ' +
      'Encrypt-then-MAC), downgrading security extensions.',
    source: [
      'https://www.openssh.com/txt/release-9.6',
      'https://www.cve.org/CVERecord?id=CVE-2023-48795',
      '/usr/share/doc/openssh-client/changelog.Debian.gz (1:9.2p1-2+deb12u2)',
    ],
    checked: '2026-11-25',
  },
  {
    id: 'openssh-supplemental-groups',
    product: 'OpenSSH',
    cpes: ['cpe:/a:openbsd:openssh'],
    products: ['OpenSSH'],
    affected: [{ from: '6.2', below: '8.8' }],
    fixed: '8.8',
    cve: ['CVE-2021-41617'],
    cvss: 7.0,
    title: 'OpenSSH AuthorizedKeysCommand privilege escalation',
    summary:
      'sshd 6.2 through 8.7 failed to initialise supplemental groups when running AuthorizedKeysCommand or ' +
      'AuthorizedPrincipalsCommand as another user, which can allow privilege escalation.',
    source: ['https://www.openssh.com/txt/release-8.8', 'https://www.cve.org/CVERecord?id=CVE-2021-41617'],
    checked: '2026-11-25',
  },
  {
    id: 'openssh-user-enumeration',
    product: 'OpenSSH',
    cpes: ['cpe:/a:openbsd:openssh'],
    products: ['OpenSSH'],
    affected: [{ below: '7.8' }],
    fixed: '7.8',
    cve: ['CVE-2018-15473'],
    cvss: 5.3,
    title: 'OpenSSH username enumeration',
    summary:
      'sshd through 7.7 answers differently for valid and invalid user names, letting attackers enumerate accounts.',
    source: ['https://www.cve.org/CVERecord?id=CVE-2018-15473', 'https://www.openssh.com/txt/release-7.8'],
    checked: '2026-11-25',
  },
  {
    id: 'redis-lua-use-after-free',
    product: 'Redis',
    cpes: ['cpe:/a:redislabs:redis', 'cpe:/a:redis:redis'],
    products: ['Redis key-value store'],
    affected: [
      { below: '6.2.20' },
      { from: '7.0.0', below: '7.2.11' },
      { from: '7.4.0', below: '7.4.6' },
      { from: '8.0.0', below: '8.2.2' },
    ],
    fixed: '8.2.2, 7.4.6, 7.2.11, 6.2.20',
    debianFixed: { '7.0.15': '5:7.0.15-1~deb12u6' },
    cve: ['CVE-2025-49844'],
    cvss: 10.0,
    title: 'Redis Lua use-after-free (RediShell)',
    summary: 'A crafted Lua script can trigger a use-after-free in the Lua parser and run code on the Redis host.',
    source: [
      'https://www.cve.org/CVERecord?id=CVE-2025-49844',
      'https://github.com/redis/docker-library-redis/pull/478',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'apache-path-traversal-2449',
    product: 'Apache httpd',
    cpes: ['cpe:/a:apache:http_server'],
    products: ['Apache httpd'],
    affected: [{ from: '2.4.49', below: '2.4.50' }],
    fixed: '2.4.50',
    cve: ['CVE-2021-41773'],
    cvss: 7.5,
    title: 'Apache httpd 2.4.49 path traversal',
    summary: 'A path normalisation flaw lets requests map URLs outside the document root and, with CGI, run code.',
    source: [
      'https://httpd.apache.org/security/vulnerabilities_24.html',
      'https://www.cve.org/CVERecord?id=CVE-2021-41773',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'apache-path-traversal-2450',
    product: 'Apache httpd',
    cpes: ['cpe:/a:apache:http_server'],
    products: ['Apache httpd'],
    affected: [{ from: '2.4.49', below: '2.4.51' }],
    fixed: '2.4.51',
    cve: ['CVE-2021-42013'],
    cvss: 9.8,
    title: 'Apache httpd 2.4.49/2.4.50 path traversal and code execution',
    summary: 'The 2.4.50 fix for CVE-2021-41773 was incomplete: encoded paths still reach files and CGI scripts.',
    source: [
      'https://httpd.apache.org/security/vulnerabilities_24.html',
      'https://www.cve.org/CVERecord?id=CVE-2021-42013',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'exim-return-of-the-wizard',
    product: 'Exim',
    cpes: ['cpe:/a:exim:exim'],
    products: ['Exim smtpd'],
    affected: [{ from: '4.87', below: '4.92' }],
    fixed: '4.92',
    cve: ['CVE-2019-10149'],
    cvss: 9.8,
    title: 'Exim remote command execution (Return of the WIZard)',
    summary: 'Improper validation of recipient addresses lets a remote attacker run commands as root.',
    source: [
      'https://www.exim.org/static/doc/security/CVE-2019-10149.txt',
      'https://www.cve.org/CVERecord?id=CVE-2019-10149',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'samba-is-known-pipename',
    product: 'Samba',
    cpes: ['cpe:/a:samba:samba'],
    products: ['Samba smbd'],
    affected: [
      { from: '3.5.0', below: '4.4.14' },
      { from: '4.5.0', below: '4.5.10' },
      { from: '4.6.0', below: '4.6.4' },
    ],
    fixed: '4.6.4, 4.5.10, 4.4.14',
    cve: ['CVE-2017-7494'],
    cvss: 9.8,
    title: 'Samba shared library upload and load (SambaCry)',
    summary: 'A client with write access to a share can upload a shared library and make smbd load and run it.',
    source: [
      'https://www.samba.org/samba/security/CVE-2017-7494.html',
      'https://www.cve.org/CVERecord?id=CVE-2017-7494',
    ],
    checked: '2026-11-23',
  },
  {
    id: 'vsftpd-234-backdoor',
    product: 'vsftpd',
    cpes: ['cpe:/a:vsftpd:vsftpd', 'cpe:/a:beasts:vsftpd'],
    products: ['vsftpd'],
    affected: [{ from: '2.3.4', below: '2.3.5' }],
    fixed: '2.3.5',
    cve: ['CVE-2011-2523'],
    cvss: 9.8,
    title: 'vsftpd 2.3.4 backdoor',
    summary: 'The tampered vsftpd 2.3.4 source opens a root shell on port 6200 when a user name ends in ":)".',
    source: [
      'https://www.cve.org/CVERecord?id=CVE-2011-2523',
      'https://github.com/projectdiscovery/nuclei-templates/blob/main/network/cves/2011/CVE-2011-2523.yaml',
    ],
    checked: '2026-11-25',
  },
  {
    id: 'proftpd-mod-copy',
    product: 'ProFTPD',
    cpes: ['cpe:/a:proftpd:proftpd'],
    products: ['ProFTPD'],
    affected: [{ from: '1.3.5', below: '1.3.5a' }],
    fixed: '1.3.5a',
    cve: ['CVE-2015-3306'],
    cvss: 9.8,
    title: 'ProFTPD mod_copy unauthenticated file copy',
    summary: 'mod_copy accepts SITE CPFR/CPTO without login, letting anyone copy files and often reach code execution.',
    source: ['https://www.cve.org/CVERecord?id=CVE-2015-3306', 'http://bugs.proftpd.org/show_bug.cgi?id=4169'],
    checked: '2026-11-25',
  },
  {
    id: 'nginx-resolver-off-by-one',
    product: 'nginx',
    cpes: ['cpe:/a:igor_sysoev:nginx', 'cpe:/a:nginx:nginx', 'cpe:/a:f5:nginx'],
    products: ['nginx'],
    affected: [{ from: '0.6.18', below: '1.20.1' }],
    fixed: '1.20.1, 1.21.0',
    cve: ['CVE-2021-23017'],
    cvss: 7.7,
    title: 'nginx resolver off-by-one',
    summary:
      'With a resolver configured, a forged DNS response can overwrite one byte of worker memory (crash, possibly ' +
      'code execution).',
    source: ['https://nginx.org/en/security_advisories.html', 'https://www.cve.org/CVERecord?id=CVE-2021-23017'],
    checked: '2026-11-25',
  },
];
