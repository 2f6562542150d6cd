import { complianceSummaryOf, FRAMEWORK_CONTROL_IDS, FRAMEWORKS } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { categoryOf, mapCompliance } from '../src/pipeline/compliance.ts';
import { CATEGORIES, CATEGORY_CONTROLS, CONTROL_NAMES } from '../src/pipeline/compliance-map.ts';
import { normalizeFindings } from '../src/pipeline/findings.ts';

const findings = normalizeFindings([
  { rule_id: 'telnet-open', title: 'Telnet enabled', severity: 'high', host: '10.0.0.6' },
  {
    rule_id: 'custom-check',
    category: 'default_credentials',
    title: 'Default admin password',
    severity: 'critical',
    host: '10.0.0.6',
  },
  {
    rule_id: 'nuclei-cve-2024-6387',
    title: 'regreSSHion',
    severity: 'critical',
    host: '10.0.0.5',
    references: { cve: ['CVE-2024-6387'] },
  },
  { rule_id: 'tls-weak-cipher', title: 'Weak TLS cipher', severity: 'info', host: '10.0.0.5' },
  { rule_id: 'unknown-rule', title: 'Something unmapped', severity: 'medium', host: '10.0.0.5' },
]);

describe('compliance mapping', () => {
  it('category: own field, then rule id, then a CVE; unknown otherwise', () => {
    expect(findings.map(categoryOf)).toEqual([
      'cleartext_protocol',
      'default_credentials',
      'vulnerable_software',
      'weak_crypto',
      null,
    ]);
  });

  it('rows per framework in order, controls in order of first appearance, with names and finding ids (info findings map to nothing)', () => {
    expect(mapCompliance(findings)).toEqual([
      {
        framework: 'CIS Controls v8',
        control_id: '3.10',
        control_name: 'Encrypt Sensitive Data in Transit',
        finding_ids: ['f-001'],
      },
      {
        framework: 'CIS Controls v8',
        control_id: '4.7',
        control_name: 'Manage Default Accounts on Enterprise Assets and Software',
        finding_ids: ['f-002'],
      },
      { framework: 'CIS Controls v8', control_id: '5.2', control_name: 'Use Unique Passwords', finding_ids: ['f-002'] },
      {
        framework: 'CIS Controls v8',
        control_id: '7.1',
        control_name: 'Establish and Maintain a Vulnerability Management Process',
        finding_ids: ['f-003'],
      },
      {
        framework: 'CIS Controls v8',
        control_id: '7.4',
        control_name: 'Perform Automated Application Patch Management',
        finding_ids: ['f-003'],
      },
      {
        framework: 'NIST CSF',
        control_id: 'PR.DS-02',
        control_name: 'The confidentiality, integrity, and availability of data-in-transit are protected',
        finding_ids: ['f-001'],
      },
      {
        framework: 'NIST CSF',
        control_id: 'PR.AA-01',
        control_name:
          'Identities and credentials for authorized users, services, and hardware are managed by the organization',
        finding_ids: ['f-002'],
      },
      {
        framework: 'NIST CSF',
        control_id: 'ID.RA-01',
        control_name: 'Vulnerabilities in assets are identified, validated, and recorded',
        finding_ids: ['f-003'],
      },
      {
        framework: 'NIST CSF',
        control_id: 'PR.PS-02',
        control_name: 'Software is maintained, replaced, and removed commensurate with risk',
        finding_ids: ['f-003'],
      },
      {
        framework: 'PCI-DSS v4.0',
        control_id: '4.2',
        control_name: 'PAN is protected with strong cryptography during transmission',
        finding_ids: ['f-001'],
      },
      {
        framework: 'PCI-DSS v4.0',
        control_id: '8.3',
        control_name: 'Strong authentication for users and administrators is established and managed',
        finding_ids: ['f-002'],
      },
      {
        framework: 'PCI-DSS v4.0',
        control_id: '6.3',
        control_name: 'Security vulnerabilities are identified and addressed',
        finding_ids: ['f-003'],
      },
      {
        framework: 'SOC 2',
        control_id: 'CC6.7',
        control_name: 'Restriction of data transmission',
        finding_ids: ['f-001'],
      },
      { framework: 'SOC 2', control_id: 'CC6.1', control_name: 'Logical access security', finding_ids: ['f-002'] },
      {
        framework: 'SOC 2',
        control_id: 'CC7.1',
        control_name: 'Detection of configuration changes and vulnerabilities',
        finding_ids: ['f-003'],
      },
      {
        framework: 'ORC 9.64',
        control_id: '9.64(C)(1)',
        control_name: 'Identify and address critical functions and cybersecurity risks',
        finding_ids: ['f-001', 'f-002', 'f-003'],
      },
      {
        framework: 'ORC 9.64',
        control_id: '9.64(C)(3)',
        control_name: 'Detect cybersecurity threats and events',
        finding_ids: ['f-002'],
      },
      {
        framework: 'ORC 9.64',
        control_id: '9.64(C)(2)',
        control_name: 'Identify potential impacts of cybersecurity incidents',
        finding_ids: ['f-003'],
      },
    ]);
  });

  it('the protocol summary counts mapped ids and totals in one unit: gap = list length − mapped', () => {
    const summary = complianceSummaryOf(mapCompliance(findings));
    expect(summary.total_mappings).toBe(18);
    expect(
      summary.by_framework.map((f) => [
        f.framework,
        f.mapped_controls,
        f.total_controls,
        f.gap_controls,
        f.findings_count,
      ]),
    ).toEqual([
      ['CIS Controls v8', 5, 153, 148, 3],
      ['NIST CSF', 4, 106, 102, 3],
      ['PCI-DSS v4.0', 3, 63, 60, 3],
      ['SOC 2', 3, 33, 30, 3],
      ['ORC 9.64', 3, 5, 2, 3],
    ]);
  });

  it("every id the table maps or names is on its framework's own list, and every category maps in every framework", () => {
    for (const framework of FRAMEWORKS) {
      for (const id of Object.keys(CONTROL_NAMES[framework]))
        expect(FRAMEWORK_CONTROL_IDS[framework], `${framework} ${id}`).toContain(id);
      for (const category of CATEGORIES) {
        const ids = CATEGORY_CONTROLS[category][framework];
        expect(ids.length, `${category} in ${framework}`).toBeGreaterThan(0);
        for (const id of ids) {
          expect(FRAMEWORK_CONTROL_IDS[framework], `${category}: ${framework} ${id}`).toContain(id);
          expect(CONTROL_NAMES[framework][id], `${framework} ${id} has a name`).toBeTypeOf('string');
        }
      }
    }
  });
});
