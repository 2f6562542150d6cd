import { DEFECTDOJO_TEST_TYPE, toDefectDojo } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { SSH_FP, smallSession, TELNET_FP } from './exports-fixture.ts';

/**
 * DefectDojo's Generic Findings Import (JSON), checked against the parser's documented lists:
 * the Generic Findings Import page of its documentation (report keys) and
 * dojo/tools/generic/json_parser.py (`required` and `allowed` finding keys; endpoints, files,
 * tags, vulnerability_ids and cwes are taken out before the check) of django-DefectDojo at
 * commit 03609eb7c1b9c194f0cf220c1ee1c4cd14c0a4b1. A key outside these lists makes DefectDojo
 * refuse the whole file.
 */
const REPORT_KEYS = ['name', 'type', 'version', 'description', 'static_tool', 'dynamic_tool', 'soc', 'findings'];
const REQUIRED = ['title', 'severity', 'description'];
const ALLOWED = [
  ...REQUIRED,
  ...['endpoints', 'files', 'tags', 'vulnerability_ids', 'cwes'],
  ...['date', 'cwe', 'cve', 'epss_score', 'epss_percentile', 'cvssv3', 'cvssv3_score', 'cvssv4', 'cvssv4_score'],
  ...['mitigation', 'impact', 'steps_to_reproduce', 'severity_justification', 'references', 'active', 'verified'],
  ...['false_p', 'out_of_scope', 'risk_accepted', 'under_review', 'is_mitigated', 'thread_id', 'mitigated'],
  ...['numerical_severity', 'param', 'payload', 'line', 'file_path', 'component_name', 'component_version'],
  ...['static_finding', 'dynamic_finding', 'scanner_confidence', 'unique_id_from_tool', 'vuln_id_from_tool'],
  ...['sast_source_object', 'sast_sink_object', 'sast_source_line', 'sast_source_file_path', 'nb_occurences'],
  ...['publish_date', 'service', 'planned_remediation_date', 'planned_remediation_version', 'effort_for_fixing'],
  ...['kev_date', 'known_exploited', 'ransomware_used', 'fix_available', 'fix_version'],
];
/** Endpoint keys: DefectDojo builds an Endpoint from the object's keys. */
const ENDPOINT_KEYS = ['protocol', 'userinfo', 'host', 'port', 'path', 'query', 'fragment'];
const SEVERITIES = ['Critical', 'High', 'Medium', 'Low', 'Info'];

type Report = { findings: Record<string, unknown>[] } & Record<string, unknown>;
const report = (doc: unknown, sessionUrl?: string) => JSON.parse(toDefectDojo(doc, { sessionUrl })) as Report;

describe('DefectDojo export', () => {
  it('writes only documented keys, every required one, and values of the documented types', () => {
    const r = report(smallSession(), 'https://portal.example/collect/?session=20260301_120000&client_id=acme');
    expect(Object.keys(r).filter((k) => !REPORT_KEYS.includes(k))).toEqual([]);
    expect(r['type']).toBe(DEFECTDOJO_TEST_TYPE);
    expect(r.findings).toHaveLength(4);
    for (const f of r.findings) {
      expect(Object.keys(f).filter((k) => !ALLOWED.includes(k))).toEqual([]);
      for (const k of REQUIRED) expect(typeof f[k]).toBe('string');
      expect(SEVERITIES).toContain(f['severity']);
      expect(f['date']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if ('cwe' in f) expect(Number.isInteger(f['cwe'])).toBe(true);
      for (const e of (f['endpoints'] ?? []) as Record<string, unknown>[])
        expect(Object.keys(e).filter((k) => !ENDPOINT_KEYS.includes(k))).toEqual([]);
    }
  });

  it('carries identity, prioritisation, remediation and the accepted risk', () => {
    const [ssh, telnet, icmp, bare] = report(smallSession()).findings as Record<string, unknown>[];
    expect(ssh).toMatchObject({
      title: 'Weak SSH key exchange, "diffie-hellman-group1"',
      severity: 'High',
      unique_id_from_tool: SSH_FP,
      vuln_id_from_tool: 'ssh-weak-kex',
      cve: 'CVE-2015-4000',
      cwe: 327,
      cvssv3_score: 7.4,
      epss_score: 0.9123,
      epss_percentile: 0.99,
      known_exploited: true,
      kev_date: '2024-05-01',
      mitigation: 'Disable group1 key exchange.',
      references: 'https://weakdh.org/',
      date: '2026-03-01',
      active: true,
      risk_accepted: false,
      endpoints: [{ host: '10.0.0.5', port: 22, protocol: 'tcp' }],
    });
    expect(ssh?.['description']).toContain('Remediation status: in_progress, first seen in 20260201_120000');
    expect(telnet).toMatchObject({ unique_id_from_tool: TELNET_FP, active: false, risk_accepted: true });
    expect(telnet?.['description']).toContain(
      'Risk exception: accepted until 2099-12-31, approved by ciso@example.com (Legacy PLC, isolated VLAN)',
    );
    expect(icmp?.['endpoints']).toEqual([{ host: '10.0.0.9' }]);
    expect(bare).not.toHaveProperty('endpoints');
    expect(bare?.['severity']).toBe('Info');
  });

  it('keeps unique_id_from_tool stable across sessions of the same target', () => {
    const second = smallSession('20260308_120000');
    // Titles change between scanner releases; a finding with a rule id keeps its identity.
    for (const f of (second['findings'] as Record<string, unknown>[]).slice(0, 3)) {
      delete f['fingerprint'];
      f['title'] = `${String(f['title'])} (renamed)`;
    }
    const ids = (doc: unknown) => report(doc).findings.map((f) => f['unique_id_from_tool']);
    expect(ids(second)).toEqual(ids(smallSession()));
    // Without a rule id the title stands in for it, so a renamed one is another finding.
    (second['findings'] as Record<string, unknown>[])[3]!['title'] = 'Scan incomplete (renamed)';
    expect(ids(second)[3]).not.toBe(ids(smallSession())[3]);
  });

  it('marks a finding whose entry is resolved as mitigated and inactive', () => {
    const doc = smallSession();
    doc['remediation_resolved'] = [{ finding_id: 'f-003', title: 'ICMP timestamp reply', status: 'resolved' }];
    const icmp = report(doc).findings[2];
    expect(icmp).toMatchObject({ active: false, is_mitigated: true, risk_accepted: false });
  });
});
