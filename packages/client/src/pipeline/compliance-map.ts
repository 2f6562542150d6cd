import type { Framework } from '@svc/protocol';

/**
 * The compliance mapping table (data only): which controls of each of the five frameworks a
 * finding's category maps to, the control names, and the categories of known rule ids.
 * Every id is on its framework's own list in the protocol (FRAMEWORK_CONTROL_IDS: CIS
 * Safeguards, NIST CSF 2.0 Subcategories, PCI DSS 4.0 x.y requirements, SOC 2 common
 * criteria, ORC 9.64 divisions), the unit the gap analysis counts; docs/compliance.md.
 */

export const CATEGORIES = [
  'cleartext_protocol',
  'weak_crypto',
  'default_credentials',
  'vulnerable_software',
  'exposed_service',
  'misconfiguration',
  'recovery_exposure',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const CONTROL_NAMES: Readonly<Record<Framework, Readonly<Record<string, string>>>> = {
  'CIS Controls v8': {
    '3.10': 'Encrypt Sensitive Data in Transit',
    '4.1': 'Establish and Maintain a Secure Configuration Process',
    '4.7': 'Manage Default Accounts on Enterprise Assets and Software',
    '4.8': 'Uninstall or Disable Unnecessary Services on Enterprise Assets and Software',
    '5.2': 'Use Unique Passwords',
    '7.1': 'Establish and Maintain a Vulnerability Management Process',
    '7.4': 'Perform Automated Application Patch Management',
    '11.3': 'Protect Recovery Data',
    '12.2': 'Establish and Maintain a Secure Network Architecture',
  },
  'NIST CSF': {
    'ID.RA-01': 'Vulnerabilities in assets are identified, validated, and recorded',
    'PR.AA-01':
      'Identities and credentials for authorized users, services, and hardware are managed by the organization',
    'PR.DS-02': 'The confidentiality, integrity, and availability of data-in-transit are protected',
    'PR.DS-11': 'Backups of data are created, protected, maintained, and tested',
    'PR.IR-01': 'Networks and environments are protected from unauthorized logical access and usage',
    'PR.PS-01': 'Configuration management practices are established and applied',
    'PR.PS-02': 'Software is maintained, replaced, and removed commensurate with risk',
  },
  'PCI-DSS v4.0': {
    '1.2': 'Network security controls (NSCs) are configured and maintained',
    '2.2': 'System components are configured and managed securely',
    '4.2': 'PAN is protected with strong cryptography during transmission',
    '6.3': 'Security vulnerabilities are identified and addressed',
    '8.3': 'Strong authentication for users and administrators is established and managed',
    '12.10': 'Suspected and confirmed security incidents that could impact the CDE are responded to immediately',
  },
  'SOC 2': {
    'CC6.1': 'Logical access security',
    'CC6.6': 'Protection against threats from outside system boundaries',
    'CC6.7': 'Restriction of data transmission',
    'CC7.1': 'Detection of configuration changes and vulnerabilities',
    'CC8.1': 'Change management',
  },
  'ORC 9.64': {
    '9.64(C)(1)': 'Identify and address critical functions and cybersecurity risks',
    '9.64(C)(2)': 'Identify potential impacts of cybersecurity incidents',
    '9.64(C)(3)': 'Detect cybersecurity threats and events',
    '9.64(C)(4)': 'Respond to cybersecurity threats and incidents',
    '9.64(C)(5)': 'Recover from cybersecurity incidents and repair infrastructure',
  },
};

type Mapping = Readonly<Record<Framework, readonly string[]>>;

export const CATEGORY_CONTROLS: Readonly<Record<Category, Mapping>> = {
  cleartext_protocol: {
    'CIS Controls v8': ['3.10'],
    'NIST CSF': ['PR.DS-02'],
    'PCI-DSS v4.0': ['4.2'],
    'SOC 2': ['CC6.7'],
    'ORC 9.64': ['9.64(C)(1)'],
  },
  weak_crypto: {
    'CIS Controls v8': ['3.10'],
    'NIST CSF': ['PR.DS-02'],
    'PCI-DSS v4.0': ['4.2'],
    'SOC 2': ['CC6.7'],
    'ORC 9.64': ['9.64(C)(1)'],
  },
  default_credentials: {
    'CIS Controls v8': ['4.7', '5.2'],
    'NIST CSF': ['PR.AA-01'],
    'PCI-DSS v4.0': ['8.3'],
    'SOC 2': ['CC6.1'],
    'ORC 9.64': ['9.64(C)(1)', '9.64(C)(3)'],
  },
  vulnerable_software: {
    'CIS Controls v8': ['7.1', '7.4'],
    'NIST CSF': ['ID.RA-01', 'PR.PS-02'],
    'PCI-DSS v4.0': ['6.3'],
    'SOC 2': ['CC7.1'],
    'ORC 9.64': ['9.64(C)(1)', '9.64(C)(2)'],
  },
  exposed_service: {
    'CIS Controls v8': ['4.8', '12.2'],
    'NIST CSF': ['PR.IR-01'],
    'PCI-DSS v4.0': ['1.2'],
    'SOC 2': ['CC6.6'],
    'ORC 9.64': ['9.64(C)(1)', '9.64(C)(3)'],
  },
  misconfiguration: {
    'CIS Controls v8': ['4.1'],
    'NIST CSF': ['PR.PS-01'],
    'PCI-DSS v4.0': ['2.2'],
    'SOC 2': ['CC8.1'],
    'ORC 9.64': ['9.64(C)(1)', '9.64(C)(4)'],
  },
  recovery_exposure: {
    'CIS Controls v8': ['11.3'],
    'NIST CSF': ['PR.DS-11'],
    'PCI-DSS v4.0': ['12.10'],
    'SOC 2': ['CC7.1'],
    'ORC 9.64': ['9.64(C)(4)', '9.64(C)(5)'],
  },
};

/** Categories of rule ids the detection rules emit; a finding's own `category` field wins. */
export const RULE_CATEGORIES: Readonly<Record<string, Category>> = {
  'telnet-open': 'cleartext_protocol',
  'ftp-cleartext': 'cleartext_protocol',
  'http-basic-auth-cleartext': 'cleartext_protocol',
  'tls-deprecated-protocol': 'weak_crypto',
  'tls-weak-cipher': 'weak_crypto',
  'ssh-weak-algorithms': 'weak_crypto',
  'default-credentials': 'default_credentials',
  'snmp-default-community': 'default_credentials',
  'ftp-anonymous': 'default_credentials',
  'outdated-software': 'vulnerable_software',
  'smbv1-enabled': 'vulnerable_software',
  'rdp-exposed': 'exposed_service',
  'database-exposed': 'exposed_service',
  'smb-exposed': 'exposed_service',
  'directory-listing': 'misconfiguration',
  'self-signed-certificate': 'misconfiguration',
  'backup-share-exposed': 'recovery_exposure',
};
