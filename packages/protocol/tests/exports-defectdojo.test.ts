import fs from 'node:fs';
import { DEFECTDOJO_TEST_TYPE, toDefectDojo } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { F1_CVES, F1_CWES, multiReferenceSession, SSH_FP, smallSession, TELNET_FP } from './exports-fixture.ts';

/**
 * DefectDojo's Generic Findings Import (JSON), checked against the parser's documented lists:
 * the Generic Findings Import page of its documentation (report keys) and
 * dojo/tools/generic/json_parser.py (`required` and `allowed` finding keys; endpoints, files,
 * tags, vulnerability_ids and cwes are taken out before the check) of django-DefectDojo at
 * commit 7cfa159a6767b0ac6e66f3b1597a997e607e7308. A key outside these lists makes DefectDojo
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

/** DefectDojo's `cwe_number` (dojo/finding/cwe.py): a number 1 to 9,999,999 from 79, "79" or "CWE-79"; else null. */
function cweNumber(value: unknown): number | null {
  if (value === null || value === undefined || typeof value === 'boolean') return null;
  const token = String(value).trim().toUpperCase().replace(/^CWE-/, '');
  if (!/^\d+$/.test(token)) return null;
  const n = Number(token);
  return n > 0 && n <= 9_999_999 ? n : null;
}

/**
 * What DefectDojo keeps of a generic finding's vulnerability ids and CWEs, ported from the same
 * commit: json_parser.py (`cve` first, then `vulnerability_ids`, a string taken as a list; a
 * missing `cwe` is the first of `cwes`), save_vulnerability_ids in dojo/finding/helper.py
 * (duplicates and blank ids dropped) and finding_cwe_labels in dojo/finding/cwe.py.
 */
function dojoKeeps(item: Record<string, unknown>): { vulnerability_ids: string[]; cwes: string[] } {
  const extra = item['vulnerability_ids'];
  const ids = [
    ...(typeof item['cve'] === 'string' && item['cve'] !== '' ? [item['cve']] : []),
    ...(typeof extra === 'string' ? [extra] : Array.isArray(extra) ? (extra as string[]) : []),
  ];
  const cwes = Array.isArray(item['cwes']) ? (item['cwes'] as unknown[]) : [];
  const primary = item['cwe'] ?? (cwes.length > 0 ? cweNumber(cwes[0]) : null);
  const labels = [primary, ...cwes].flatMap((c) => {
    const n = cweNumber(c);
    return n === null ? [] : [`CWE-${n}`];
  });
  return { vulnerability_ids: [...new Set(ids)].filter((v) => v.trim() !== ''), cwes: [...new Set(labels)] };
}

const SAMPLES = new URL('./fixtures/defectdojo/', import.meta.url);
const sample = (name: string) =>
  JSON.parse(fs.readFileSync(new URL(name, SAMPLES), 'utf8')) as { findings: Record<string, unknown>[] };

type Report = { findings: Record<string, unknown>[] } & Record<string, unknown>;
const report = (doc: unknown, sessionUrl?: string) => JSON.parse(toDefectDojo(doc, { sessionUrl })) as Report;

describe('DefectDojo export', () => {
  it.each([
    ['a small session', smallSession, 4],
    ['findings with several CVEs and CWEs', multiReferenceSession, 3],
  ])('%s: only documented keys, every required one, values of the documented types', (_what, session, count) => {
    const r = report(session(), 'https://portal.example/collect/?session=20260301_120000&client_id=acme');
    expect(Object.keys(r).filter((k) => !REPORT_KEYS.includes(k))).toEqual([]);
    expect(r['type']).toBe(DEFECTDOJO_TEST_TYPE);
    expect(r.findings).toHaveLength(count);
    for (const f of r.findings) {
      expect(Object.keys(f).filter((k) => !ALLOWED.includes(k))).toEqual([]);
      for (const k of REQUIRED) expect(typeof f[k]).toBe('string');
      expect(SEVERITIES).toContain(f['severity']);
      expect(f['date']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      if ('cwe' in f) expect(cweNumber(f['cwe'])).toBe(f['cwe']);
      if ('vulnerability_ids' in f)
        expect(f['vulnerability_ids']).toEqual(expect.arrayContaining([expect.any(String)]));
      for (const c of (f['cwes'] ?? []) as unknown[]) expect(cweNumber(c)).toBe(c);
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

  it('carries every CVE in vulnerability_ids and every CWE in cwe and cwes, exactly', () => {
    const [first, second, bare] = report(multiReferenceSession()).findings as Record<string, unknown>[];
    expect(first).toMatchObject({ cve: 'CVE-2016-10009', vulnerability_ids: F1_CVES, cwe: 284, cwes: [284, 264, 79] });
    expect(first?.['description']).toContain(`CVEs: ${F1_CVES.join(', ')}`);
    // One CWE is all in `cwe`: no `cwes`, so DefectDojo before 3.2.0 still takes the finding.
    expect(second).toMatchObject({ cve: 'CVE-2017-15906', vulnerability_ids: ['CVE-2017-15906'], cwe: 200 });
    expect(second).not.toHaveProperty('cwes');
    for (const key of ['cve', 'vulnerability_ids', 'cwe', 'cwes']) expect(bare).not.toHaveProperty(key);
  });

  it('DefectDojo keeps every CVE and CWE of each finding, as its parser and helpers read them', () => {
    const doc = multiReferenceSession();
    const kept = report(doc).findings.map(dojoKeeps);
    expect(kept).toEqual([
      { vulnerability_ids: F1_CVES, cwes: F1_CWES },
      { vulnerability_ids: ['CVE-2017-15906'], cwes: ['CWE-200'] },
      { vulnerability_ids: [], cwes: [] },
    ]);
    // The port reads DefectDojo's own samples as its unit tests expect (test_generic_parser.py).
    expect(sample('generic_cve_and_vulnerability_ids.json').findings.map(dojoKeeps)[0]?.vulnerability_ids).toEqual([
      'CVE-2020-36234',
      'GHSA-5mrr-rgp6-x4gr',
      'OSV-2021-1234',
    ]);
    expect(sample('generic_report_multi_cwe_fabricated.json').findings.map((f) => dojoKeeps(f).cwes)).toEqual([
      ['CWE-89', 'CWE-79', 'CWE-22'],
      ['CWE-79', 'CWE-89', 'CWE-200'],
      ['CWE-22'],
    ]);
  });

  it("writes vulnerability_ids and cwes in the shapes of DefectDojo's own samples", () => {
    const typesOf = (findings: Record<string, unknown>[], key: string) =>
      new Set(findings.flatMap((f) => (Array.isArray(f[key]) ? (f[key] as unknown[]).map((v) => typeof v) : [])));
    const ours = report(multiReferenceSession()).findings;
    const ids = sample('generic_cve_and_vulnerability_ids.json').findings;
    const cwes = sample('generic_report_multi_cwe_fabricated.json').findings;
    expect(typesOf(ours, 'vulnerability_ids')).toEqual(typesOf(ids, 'vulnerability_ids'));
    expect(typesOf(ids, 'vulnerability_ids')).toEqual(new Set(['string']));
    expect([...typesOf(ours, 'cwes')].every((t) => typesOf(cwes, 'cwes').has(t))).toBe(true);
    expect(typesOf(cwes, 'cwes')).toEqual(new Set(['number', 'string']));
  });
});
