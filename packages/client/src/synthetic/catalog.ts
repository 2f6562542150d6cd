import type { Framework, Severity } from '@svc/protocol';

/**
 * The vulnerability catalog the synthetic sessions draw their findings from: plausible
 * network-scan results per severity, each with its compliance controls. The control ids of
 * every framework stay within that framework's control count (the protocol's
 * FRAMEWORK_CONTROL_TOTALS: CIS 18, NIST CSF 6, PCI-DSS 12, SOC 2 5), so a generated
 * session's gap analysis is never negative.
 */
export interface CatalogEntry {
  title: string;
  port?: number;
  protocol?: 'tcp' | 'udp';
  service?: string;
  cvss: number;
  cve: string | null;
  description: string;
  solution: string;
  /** Control ids per framework; informational findings map to none. */
  controls?: { cis: string; nist: string; pci: string; soc2: string };
}

export const FRAMEWORKS = {
  cis: 'CIS Controls v8',
  nist: 'NIST CSF',
  pci: 'PCI-DSS v4.0',
  soc2: 'SOC 2',
} as const satisfies Record<string, Framework>;
export type FrameworkKey = keyof typeof FRAMEWORKS;

export const CONTROL_NAMES: Record<FrameworkKey, Record<string, string>> = {
  cis: {
    '3.10': 'Encrypt Sensitive Data in Transit',
    '4.1': 'Establish and Maintain a Secure Configuration Process',
    '4.7': 'Manage Default Accounts on Enterprise Assets and Software',
    '4.8': 'Uninstall or Disable Unnecessary Services on Enterprise Assets and Software',
    '5.2': 'Use Unique Passwords',
    '7.1': 'Establish and Maintain a Vulnerability Management Process',
    '7.3': 'Perform Automated Operating System Patch Management',
    '7.4': 'Perform Automated Application Patch Management',
    '12.2': 'Establish and Maintain a Secure Network Architecture',
    '13.9': 'Deploy Port-Level Access Control',
  },
  nist: {
    'ID.RA-1': 'Asset vulnerabilities are identified and documented',
    'PR.AC-1': 'Identities and credentials are managed',
    'PR.AC-5': 'Network integrity is protected',
    'PR.DS-2': 'Data-in-transit is protected',
    'PR.IP-1': 'A baseline configuration is created and maintained',
    'PR.IP-12': 'A vulnerability management plan is developed and implemented',
  },
  pci: {
    '1.2': 'Network security controls are configured and maintained',
    '2.2': 'System components are configured and managed securely',
    '4.2': 'Strong cryptography protects cardholder data in transit',
    '6.3': 'Security vulnerabilities are identified and addressed',
    '8.3': 'Strong authentication is established and managed',
  },
  soc2: {
    'CC6.1': 'Logical access security',
    'CC6.6': 'Protection against threats from outside system boundaries',
    'CC6.7': 'Restriction of data transmission',
    'CC7.1': 'Detection of configuration changes and vulnerabilities',
    'CC8.1': 'Change management',
  },
};

const c = (cis: string, nist: string, pci: string, soc2: string) => ({ cis, nist, pci, soc2 });

export const CATALOG: Record<Severity, readonly CatalogEntry[]> = {
  critical: [
    { title: 'SMBv1 enabled (EternalBlue)', port: 445, protocol: 'tcp', service: 'microsoft-ds', cvss: 9.8, cve: 'CVE-2017-0144', description: 'The host accepts SMBv1 and is vulnerable to remote code execution.', solution: 'Disable SMBv1 and apply MS17-010.', controls: c('7.3', 'ID.RA-1', '6.3', 'CC7.1') },
    { title: 'Default administrator credentials', port: 8080, protocol: 'tcp', service: 'http-alt', cvss: 9.8, cve: null, description: 'The management interface accepts the vendor default login.', solution: 'Change the default credentials and restrict the interface.', controls: c('4.7', 'PR.AC-1', '8.3', 'CC6.1') },
    { title: 'Unauthenticated Redis exposed', port: 6379, protocol: 'tcp', service: 'redis', cvss: 9.8, cve: null, description: 'Redis answers commands without authentication.', solution: 'Bind Redis to localhost or require authentication.', controls: c('4.1', 'PR.AC-5', '1.2', 'CC6.6') },
    { title: 'Apache Log4j remote code execution (Log4Shell)', port: 8443, protocol: 'tcp', service: 'https-alt', cvss: 10.0, cve: 'CVE-2021-44228', description: 'A Java application logs attacker-controlled input with a vulnerable Log4j.', solution: 'Upgrade Log4j to 2.17.1 or later.', controls: c('7.4', 'PR.IP-12', '6.3', 'CC7.1') },
    { title: 'RDP remote code execution (BlueKeep)', port: 3389, protocol: 'tcp', service: 'ms-wbt-server', cvss: 9.8, cve: 'CVE-2019-0708', description: 'Remote Desktop Services allow pre-authentication code execution.', solution: 'Apply the vendor patch and enable Network Level Authentication.', controls: c('7.3', 'ID.RA-1', '6.3', 'CC7.1') },
    { title: 'Docker API exposed without TLS', port: 2375, protocol: 'tcp', service: 'docker', cvss: 9.8, cve: null, description: 'The Docker daemon API is reachable without authentication.', solution: 'Disable the TCP socket or require mutual TLS.', controls: c('4.8', 'PR.AC-5', '1.2', 'CC6.6') },
    { title: 'VPN appliance heap overflow', port: 443, protocol: 'tcp', service: 'https', cvss: 9.8, cve: 'CVE-2023-27997', description: 'The SSL-VPN firmware is vulnerable to pre-authentication code execution.', solution: 'Upgrade the appliance firmware.', controls: c('7.4', 'PR.IP-12', '6.3', 'CC8.1') },
    { title: 'Telnet with default credentials', port: 23, protocol: 'tcp', service: 'telnet', cvss: 9.8, cve: null, description: 'Telnet accepts a well-known default account.', solution: 'Disable Telnet and change the account password.', controls: c('5.2', 'PR.AC-1', '8.3', 'CC6.1') },
  ],
  high: [
    { title: 'Telnet service exposed', port: 23, protocol: 'tcp', service: 'telnet', cvss: 7.5, cve: null, description: 'Telnet sends credentials in clear text.', solution: 'Replace Telnet with SSH.', controls: c('4.8', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'Outdated OpenSSH (regreSSHion)', port: 22, protocol: 'tcp', service: 'ssh', cvss: 8.1, cve: 'CVE-2024-6387', description: 'The OpenSSH version is affected by a signal-handler race condition.', solution: 'Upgrade OpenSSH to 9.8p1 or later.', controls: c('7.4', 'ID.RA-1', '6.3', 'CC7.1') },
    { title: 'Anonymous FTP login allowed', port: 21, protocol: 'tcp', service: 'ftp', cvss: 7.5, cve: null, description: 'The FTP server accepts anonymous logins.', solution: 'Disable anonymous access.', controls: c('4.1', 'PR.AC-1', '2.2', 'CC6.1') },
    { title: "SNMP default community 'public'", port: 161, protocol: 'udp', service: 'snmp', cvss: 7.5, cve: null, description: "SNMP answers to the community string 'public'.", solution: 'Use SNMPv3 or a strong community string.', controls: c('4.7', 'PR.IP-1', '2.2', 'CC6.1') },
    { title: 'RDP exposed without Network Level Authentication', port: 3389, protocol: 'tcp', service: 'ms-wbt-server', cvss: 7.5, cve: null, description: 'Remote Desktop accepts connections without NLA.', solution: 'Require NLA and restrict RDP to a VPN.', controls: c('13.9', 'PR.AC-5', '1.2', 'CC6.6') },
    { title: 'MySQL reachable from the network', port: 3306, protocol: 'tcp', service: 'mysql', cvss: 7.5, cve: null, description: 'The database port accepts connections from any address.', solution: 'Restrict the database to application hosts.', controls: c('12.2', 'PR.AC-5', '1.2', 'CC6.6') },
    { title: 'Apache HTTP Server path traversal', port: 80, protocol: 'tcp', service: 'http', cvss: 7.5, cve: 'CVE-2021-41773', description: 'The web server maps URLs outside the document root.', solution: 'Upgrade Apache HTTP Server to 2.4.51 or later.', controls: c('7.4', 'PR.IP-12', '6.3', 'CC8.1') },
    { title: 'Unsupported operating system', cvss: 8.0, cve: null, description: 'The operating system no longer receives security updates.', solution: 'Upgrade to a supported release.', controls: c('7.3', 'PR.IP-12', '6.3', 'CC8.1') },
  ],
  medium: [
    { title: 'TLS 1.0 supported', port: 443, protocol: 'tcp', service: 'https', cvss: 5.9, cve: null, description: 'The service negotiates the deprecated TLS 1.0 protocol.', solution: 'Allow TLS 1.2 and later only.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'Self-signed TLS certificate', port: 443, protocol: 'tcp', service: 'https', cvss: 5.3, cve: null, description: 'The certificate is not issued by a trusted authority.', solution: 'Install a certificate from a trusted CA.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'SSH weak key exchange algorithms', port: 22, protocol: 'tcp', service: 'ssh', cvss: 5.3, cve: null, description: 'The SSH server offers SHA-1 based key exchange.', solution: 'Remove weak key exchange algorithms from the server configuration.', controls: c('4.1', 'PR.IP-1', '2.2', 'CC6.7') },
    { title: 'SMB signing not required', port: 445, protocol: 'tcp', service: 'microsoft-ds', cvss: 5.3, cve: null, description: 'Unsigned SMB sessions allow relay attacks.', solution: 'Require SMB signing.', controls: c('4.1', 'PR.IP-1', '2.2', 'CC6.1') },
    { title: 'Expired TLS certificate', port: 443, protocol: 'tcp', service: 'https', cvss: 5.3, cve: null, description: 'The certificate is past its validity period.', solution: 'Renew the certificate.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'DNS server allows recursion', port: 53, protocol: 'udp', service: 'domain', cvss: 5.0, cve: null, description: 'The DNS server resolves queries for any client.', solution: 'Restrict recursion to internal clients.', controls: c('12.2', 'PR.AC-5', '1.2', 'CC6.6') },
    { title: 'NTP mode 6 queries answered', port: 123, protocol: 'udp', service: 'ntp', cvss: 5.3, cve: null, description: 'The NTP daemon answers control queries usable for amplification.', solution: 'Disable mode 6 queries for remote clients.', controls: c('4.8', 'PR.IP-1', '2.2', 'CC6.6') },
    { title: 'HTTP login form without TLS', port: 80, protocol: 'tcp', service: 'http', cvss: 4.8, cve: null, description: 'Credentials are posted over plain HTTP.', solution: 'Redirect all HTTP traffic to HTTPS.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
  ],
  low: [
    { title: 'ICMP timestamp reply', cvss: 2.1, cve: 'CVE-1999-0524', description: 'The host answers ICMP timestamp requests.', solution: 'Filter ICMP timestamp requests.', controls: c('4.1', 'PR.IP-1', '1.2', 'CC6.6') },
    { title: 'Missing HTTP security headers', port: 443, protocol: 'tcp', service: 'https', cvss: 3.1, cve: null, description: 'Responses lack Content-Security-Policy and related headers.', solution: 'Add the standard security headers.', controls: c('4.1', 'PR.IP-1', '2.2', 'CC8.1') },
    { title: 'SSH server allows CBC ciphers', port: 22, protocol: 'tcp', service: 'ssh', cvss: 2.6, cve: null, description: 'The SSH server offers CBC mode ciphers.', solution: 'Offer only CTR and AEAD ciphers.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'TCP timestamps enabled', cvss: 2.6, cve: null, description: 'TCP timestamps disclose the host uptime.', solution: 'Disable TCP timestamps where supported.', controls: c('4.1', 'PR.IP-1', '2.2', 'CC7.1') },
    { title: 'Cookie without Secure flag', port: 443, protocol: 'tcp', service: 'https', cvss: 3.1, cve: null, description: 'A session cookie may be sent over plain HTTP.', solution: 'Set the Secure and HttpOnly flags.', controls: c('3.10', 'PR.DS-2', '4.2', 'CC6.7') },
    { title: 'Web server version disclosed', port: 80, protocol: 'tcp', service: 'http', cvss: 2.6, cve: null, description: 'The Server header names the exact software version.', solution: 'Suppress version details in response headers.', controls: c('4.1', 'PR.IP-1', '2.2', 'CC8.1') },
  ],
  info: [
    { title: 'HTTP server banner', port: 80, protocol: 'tcp', service: 'http', cvss: 0, cve: null, description: 'The HTTP server identifies itself.', solution: 'No action required.' },
    { title: 'SSH host key fingerprint', port: 22, protocol: 'tcp', service: 'ssh', cvss: 0, cve: null, description: 'The SSH host key was recorded.', solution: 'No action required.' },
    { title: 'TLS certificate details', port: 443, protocol: 'tcp', service: 'https', cvss: 0, cve: null, description: 'The certificate subject and issuer were recorded.', solution: 'No action required.' },
    { title: 'Operating system fingerprint', cvss: 0, cve: null, description: 'The operating system was identified from network behaviour.', solution: 'No action required.' },
    { title: 'Traceroute information', cvss: 0, cve: null, description: 'The network path to the host was recorded.', solution: 'No action required.' },
    { title: 'DNS hostname resolved', port: 53, protocol: 'udp', service: 'domain', cvss: 0, cve: null, description: 'A reverse DNS name was found for the host.', solution: 'No action required.' },
  ],
};

export const HOST_ROLES = ['gw', 'web', 'db', 'mail', 'files', 'dc', 'nas', 'vpn', 'print', 'cam', 'plc', 'app', 'ws'] as const;
export const OS_GUESSES = ['Linux 5.x', 'Ubuntu 22.04', 'Debian 12', 'Windows Server 2019', 'Windows 10', 'Cisco IOS', 'FreeBSD 13', 'RouterOS 7'] as const;
export const EXCEPTION_REASONS = [
  'Vendor-managed device, isolated VLAN',
  'Compensating control: access restricted by firewall',
  'Legacy application; replacement scheduled',
  'Business requirement accepted by risk owner',
  'Patch breaks certified configuration; vendor fix pending',
] as const;
export const APPROVERS = ['ciso@example.com', 'it-director@example.com', 'risk-owner@example.com'] as const;
