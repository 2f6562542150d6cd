import { findingFingerprint, SARIF_FINGERPRINT_KEY, sarifArtifactUri, toSarif } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { F1_CVES, multiReferenceSession, SSH_FP, sarifValidator, smallSession, TELNET_FP } from './exports-fixture.ts';

/** SARIF export, validated against the published SARIF 2.1.0 schema (exports-fixture.ts). */
const valid = sarifValidator();

interface Result {
  ruleId: string;
  level: string;
  fingerprints: Record<string, string>;
  partialFingerprints: Record<string, string>;
  suppressions?: unknown[];
  locations: {
    physicalLocation: { artifactLocation: { uri: string } };
    logicalLocations?: { fullyQualifiedName: string }[];
  }[];
  properties: Record<string, unknown>;
  taxa?: { id: string; index?: number; toolComponent?: { name?: string; index?: number } }[];
}
interface Log {
  version: string;
  runs: {
    tool: { driver: { name: string; rules: { id: string; properties: Record<string, unknown> }[] } };
    taxonomies?: { name: string; taxa: { id: string; helpUri: string }[] }[];
    results: Result[];
  }[];
}
const sarif = (doc: unknown, sessionUrl?: string) => JSON.parse(toSarif(doc, { sessionUrl })) as Log;

describe('SARIF export', () => {
  it('validates against the SARIF 2.1.0 schema (and the schema does catch a broken log)', () => {
    const log = sarif(smallSession(), 'https://portal.example/collect/?session=20260301_120000&client_id=acme');
    expect(valid(log)).toEqual([]);
    expect(valid({ ...log, version: '2.0.0' })).not.toEqual([]);
    expect(valid({ version: '2.1.0', runs: [{ tool: { driver: {} } }] })).not.toEqual([]);
  });

  it('has one run, one rule per rule id, levels from severity, locations, fingerprints and properties', () => {
    const log = sarif(smallSession());
    expect(log.runs).toHaveLength(1);
    const run = log.runs[0]!;
    expect(run.tool.driver.name).toBe('svc');
    expect(run.tool.driver.rules.map((r) => [r.id, r.properties['security-severity']])).toEqual([
      ['ssh-weak-kex', '7.4'],
      ['telnet-open', '5.5'],
      ['icmp-timestamp', '2.0'],
      ['Scan incomplete', '0.0'],
    ]);
    const [ssh, telnet, icmp, bare] = run.results as [Result, Result, Result, Result];
    expect([ssh.level, telnet.level, icmp.level, bare.level]).toEqual(['error', 'warning', 'note', 'note']);
    expect(ssh.fingerprints).toEqual({ [SARIF_FINGERPRINT_KEY]: SSH_FP });
    expect(ssh.partialFingerprints).toEqual({ [SARIF_FINGERPRINT_KEY]: SSH_FP });
    expect(telnet.fingerprints[SARIF_FINGERPRINT_KEY]).toBe(TELNET_FP);
    expect(ssh.locations[0]?.physicalLocation.artifactLocation.uri).toBe('network/10.0.0.5/tcp/22');
    expect(ssh.locations[0]?.logicalLocations?.[0]?.fullyQualifiedName).toBe('tcp://10.0.0.5:22');
    expect(icmp.locations[0]?.physicalLocation.artifactLocation.uri).toBe('network/10.0.0.9');
    expect(bare.locations[0]?.physicalLocation.artifactLocation.uri).toBe('network/session');
    expect(bare.locations[0]?.logicalLocations).toBeUndefined();
    expect(ssh.properties).toMatchObject({
      cvss: 7.4,
      kev: true,
      kev_date_added: '2024-05-01',
      epss: 0.9123,
      epss_percentile: 0.99,
    });
    expect(ssh.suppressions).toBeUndefined();
    // The accepted risk is a suppression with its justification.
    expect(telnet.suppressions).toEqual([
      { kind: 'external', status: 'accepted', justification: 'Legacy PLC, isolated VLAN' },
    ]);
  });

  it('an expired exception is no suppression: flagged expired, or past its expiry date', () => {
    const doc = smallSession();
    (doc['remediation'] as Record<string, unknown>[])[1]!['exception_expired'] = true;
    const telnet = sarif(doc).runs[0]!.results[1]!;
    expect(telnet.suppressions).toBeUndefined();
    expect(telnet.properties['exception_status']).toBe('expired');
    const later = (today: string) =>
      (JSON.parse(toSarif(smallSession(), { today })) as Log).runs[0]!.results[1]!.suppressions?.length ?? 0;
    expect(later('2099-12-31')).toBe(1);
    expect(later('2100-01-01')).toBe(0);
  });

  it('gives the same finding the same fingerprint in two sessions of the same target, stored or computed', () => {
    const first = smallSession('20260301_120000');
    const second = smallSession('20260308_120000');
    // The second scanner run wrote no fingerprints, re-titled a finding and changed its severity.
    for (const f of second['findings'] as Record<string, unknown>[]) delete f['fingerprint'];
    const ssh2 = (second['findings'] as Record<string, unknown>[])[0]!;
    Object.assign(ssh2, { title: 'SSH: weak KEX', severity: 'critical' });
    const fps = (doc: unknown) => sarif(doc).runs[0]!.results.map((r) => r.partialFingerprints[SARIF_FINGERPRINT_KEY]);
    expect(fps(second)).toEqual(fps(first));
    expect(fps(first)[0]).toBe(
      findingFingerprint({ rule_id: 'ssh-weak-kex', host: '10.0.0.5', port: 22, protocol: 'tcp' }),
    );
    expect(new Set(fps(first)).size).toBe(4);
  });

  it('percent-encodes IPv6 hosts in the artifact path', () => {
    expect(sarifArtifactUri({ host: 'FE80::1', port: 443, protocol: 'TCP' })).toBe('network/fe80%3A%3A1/tcp/443');
  });

  it('a session without findings is a valid log with no results', () => {
    const log = sarif({ session_id: '20260301_120000' });
    expect(valid(log)).toEqual([]);
    expect(log.runs[0]!.results).toEqual([]);
  });

  it('carries every CVE in result properties and every CWE as taxa of the run’s CWE taxonomy', () => {
    const log = sarif(multiReferenceSession());
    expect(valid(log)).toEqual([]);
    // The schema does check taxa: a reference naming no taxon is refused.
    const broken = structuredClone(log);
    broken.runs[0]!.results[0]!.taxa = [{ toolComponent: { name: 'CWE' } }] as NonNullable<Result['taxa']>;
    expect(valid(broken)).toContain('/runs/0/results/0/taxa/0 must match a schema in anyOf');
    const run = log.runs[0]!;
    expect(run.taxonomies).toEqual([
      {
        name: 'CWE',
        organization: 'MITRE',
        shortDescription: { text: 'The MITRE Common Weakness Enumeration' },
        informationUri: 'https://cwe.mitre.org/',
        isComprehensive: false,
        taxa: ['284', '264', '79', '200'].map((id) => ({
          id,
          helpUri: `https://cwe.mitre.org/data/definitions/${id}.html`,
        })),
      },
    ]);
    const [first, second, bare] = run.results as [Result, Result, Result];
    expect(first.properties['cve']).toEqual(F1_CVES);
    expect(second.properties['cve']).toEqual(['CVE-2017-15906']);
    const cwe = (id: string, index: number) => ({ id, index, toolComponent: { name: 'CWE', index: 0 } });
    expect(first.taxa).toEqual([cwe('284', 0), cwe('264', 1), cwe('79', 2)]);
    expect(second.taxa).toEqual([cwe('200', 3)]);
    expect(bare.taxa).toBeUndefined();
    expect(bare.properties).not.toHaveProperty('cve');
    // Each taxon reference resolves to the taxon it names.
    for (const t of [...(first.taxa ?? []), ...(second.taxa ?? [])])
      expect(run.taxonomies?.[t.toolComponent?.index ?? -1]?.taxa[t.index ?? -1]?.id).toBe(t.id);
    // The rule's CWE tags are those of all its findings, not only its first one's.
    expect(run.tool.driver.rules[0]?.properties['tags']).toEqual([
      'security',
      'network',
      'CWE-284',
      'CWE-264',
      'CWE-79',
      'CWE-200',
    ]);
  });

  it("DefectDojo's SARIF parser reads every CWE from the taxa and finds no list under properties.cwe", () => {
    // dojo/tools/sarif/parser.py (django-DefectDojo 7cfa159a6767b0ac6e66f3b1597a997e607e7308):
    // get_result_cwes_taxa takes int(id) of each taxon of toolComponent "CWE";
    // get_result_cwes_properties runs re.search over properties.cwe, a TypeError on a list.
    const results = sarif(multiReferenceSession()).runs[0]!.results;
    const taxaCwes = (r: Result) =>
      (r.taxa ?? []).filter((t) => t.toolComponent?.name === 'CWE').map((t) => Number.parseInt(t.id, 10));
    expect(results.map(taxaCwes)).toEqual([[284, 264, 79], [200], []]);
    for (const r of results) expect(['undefined', 'string']).toContain(typeof r.properties['cwe']);
  });
});
