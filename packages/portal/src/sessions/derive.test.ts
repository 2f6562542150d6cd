import { readFileSync } from 'node:fs';
import type { SessionMetadata } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { MAX_SESSION_ID_LENGTH } from '@svc/protocol';
import { deriveMetadata, SessionFileError, sessionIdOf } from './derive.ts';

/**
 * deriveMetadata over the two fixture files (docs/session-file.md#computed-blocks, "Compliance, topology
 * and ORC 9.64 data"): an early v2.6-style file with almost nothing in it,
 * and a v4.2-style file with every block. docs/session-file.md documents the rules.
 */

type Doc = Record<string, any>;
const fixture = (name: string): Doc =>
  JSON.parse(readFileSync(new URL(`../../tests/fixtures/${name}`, import.meta.url), 'utf8')) as Doc;
const derive = (doc: unknown, keyClientId: string | null = null, hasExecSummary = false) =>
  deriveMetadata({ doc, keyClientId, hasExecSummary });
const zeros = () => ({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });

const MINIMAL: SessionMetadata = {
  session_id: '20240115_093000',
  client_id: null,
  client: null,
  target: '192.168.1.0/24',
  risk_score: null,
  risk_grade: null,
  total_findings: 3,
  total_hosts: 2,
  severity_summary: { critical: 0, high: 1, medium: 1, low: 0, info: 1 },
  tool_version: null,
  has_exec_summary: false,
  has_topology: false,
  remediation_summary: {
    total: 0,
    resolved_count: 0,
    by_status: { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 },
    by_severity: zeros(),
  },
  exception_summary: {
    total_exceptions: 0,
    by_status: { accepted: 0, expired: 0 },
    score_delta: 0,
    risk_score_operational: null,
    risk_grade_operational: null,
  },
  compliance_summary: { total_mappings: 0, by_framework: [] },
  orc964_summary: null,
  alerts_summary: null,
  schedule_id: null,
  schedule_cron: null,
  schedule_profile: null,
  is_scheduled: false,
  scheduled_by: null,
};

const COMPLETE: SessionMetadata = {
  session_id: '20250301_140512',
  client_id: 'acme-from-json',
  client: 'Acme Water District',
  target: '10.20.0.0/24',
  risk_score: 62,
  risk_grade: 'D',
  total_findings: 6,
  total_hosts: 3,
  severity_summary: { critical: 1, high: 2, medium: 2, low: 1, info: 0 },
  tool_version: '4.2.3',
  has_exec_summary: false,
  has_topology: true,
  remediation_summary: {
    // 5 open items + 2 resolved ones.
    total: 7,
    resolved_count: 2,
    by_status: { new: 2, persistent: 1, in_progress: 1, resolved: 2, deferred: 1 },
    by_severity: { critical: 2, high: 3, medium: 2, low: 0, info: 0 },
  },
  exception_summary: {
    total_exceptions: 3,
    by_status: { accepted: 2, expired: 1 },
    score_delta: 14,
    risk_score_operational: 48,
    risk_grade_operational: 'C',
  },
  compliance_summary: {
    total_mappings: 9,
    by_framework: [
      { framework: 'CIS Controls v8', mapped_controls: 2, total_controls: 153, gap_controls: 151, findings_count: 4 },
      // The fixture maps a CSF 1.1 id (PR.AC-1), not on the CSF 2.0 list: no control counts as mapped.
      { framework: 'NIST CSF', mapped_controls: 0, total_controls: 106, gap_controls: 106, findings_count: 1 },
      { framework: 'PCI-DSS v4.0', mapped_controls: 1, total_controls: 63, gap_controls: 62, findings_count: 2 },
      { framework: 'SOC 2', mapped_controls: 1, total_controls: 33, gap_controls: 32, findings_count: 1 },
      { framework: 'ORC 9.64', mapped_controls: 3, total_controls: 5, gap_controls: 2, findings_count: 4 },
    ],
  },
  orc964_summary: { enabled: true, technical_covered: 3, technical_total: 5, attest_pending: 3 },
  alerts_summary: {
    evaluated_at: '2025-03-01T14:41:05Z',
    total_triggered: 2,
    alerts_triggered: [
      {
        type: 'risk_threshold',
        timestamp: '2025-03-01T14:41:05Z',
        message: 'Risk score 62 >= threshold 60',
        channels_notified: ['email', 'webhook'],
      },
      {
        type: 'new_critical',
        timestamp: '2025-03-01T14:41:05Z',
        message: '1 new critical/high finding',
        channels_notified: ['email'],
      },
    ],
    config: { risk_threshold: 60, on_new_critical: true, on_scan_complete: false, channels: ['email', 'webhook'] },
  },
  schedule_id: 'sched_3f2a9c1b7d04',
  schedule_cron: '0 2 * * 1',
  schedule_profile: 'full_recon',
  is_scheduled: true,
  scheduled_by: 'daemon',
};

describe('deriveMetadata over the fixtures', () => {
  it('an early v2.6-style file: only what it has, defaults for the rest', () => {
    expect(derive(fixture('session-minimal.json'))).toStrictEqual(MINIMAL);
  });

  it('a v4.2-style file with every block', () => {
    expect(derive(fixture('session-complete.json'))).toStrictEqual(COMPLETE);
  });

  it("the key's client_id wins over the file's; the legacy key (null) keeps the file's", () => {
    expect(derive(fixture('session-complete.json'), 'acme-key').client_id).toBe('acme-key');
    expect(derive(fixture('session-complete.json'), null).client_id).toBe('acme-from-json');
    expect(derive(fixture('session-minimal.json'), 'acme-key').client_id).toBe('acme-key');
  });

  it('has_exec_summary comes from the upload, not the file', () => {
    expect(derive(fixture('session-minimal.json'), null, true).has_exec_summary).toBe(true);
    const doc = fixture('session-complete.json');
    doc['metadata']['has_exec_summary'] = true;
    expect(derive(doc, null, false).has_exec_summary).toBe(false);
  });

  it('does not modify the document', () => {
    const doc = fixture('session-complete.json');
    const copy = structuredClone(doc);
    derive(doc, 'acme-key', true);
    expect(doc).toStrictEqual(copy);
  });
});

describe('metadata.license (v4.2.3) is ignored', () => {
  it('gives the same metadata with or without the block, whatever it says', () => {
    const withLicense = fixture('session-complete.json');
    const without = fixture('session-complete.json');
    delete without['metadata']['license'];
    const odd = fixture('session-complete.json');
    odd['metadata']['license'] = {
      tier: 'msp',
      fingerprint: 'x',
      source: 'file',
      validated_at: 'never',
      client_id: 'someone-else',
      max_sessions: 1,
    };
    const expected = derive(without, 'acme-key');
    expect(derive(withLicense, 'acme-key')).toStrictEqual(expected);
    expect(derive(odd, 'acme-key')).toStrictEqual(expected);
    expect(JSON.stringify(derive(withLicense))).not.toContain('9f86d081884c7d659a2feaa0c55ad015');
  });
});

describe('fallbacks when a block is absent', () => {
  it('top-level target, client_name, metadata.version, metadata risk fields', () => {
    const doc = {
      metadata: { session_id: 'a_1', client_name: 'Old Name', version: '2.9.0', risk_score: 33, risk_grade: 'B' },
      target: 'example.org',
    };
    const m = derive(doc);
    expect(m).toMatchObject({
      target: 'example.org',
      client: 'Old Name',
      tool_version: '2.9.0',
      risk_score: 33,
      risk_grade: 'B',
    });
  });

  it('summary wins over metadata for risk fields', () => {
    const m = derive({
      metadata: { session_id: 'a_1', risk_score: 33, risk_grade: 'B' },
      summary: { risk_score: 70, risk_grade: 'D' },
    });
    expect(m).toMatchObject({ risk_score: 70, risk_grade: 'D' });
  });

  it('counts findings and hosts when the summary has no totals', () => {
    const findings = [
      { severity: 'CRITICAL', host: 'h1' },
      { severity: 'high', ip: 'h2' },
      { severity: 'bogus', host: 'h1' },
      { host: 'h3' },
      'not an object',
    ];
    const m = derive({ metadata: { session_id: 'a_1' }, findings });
    expect(m.total_findings).toBe(4);
    expect(m.total_hosts).toBe(3);
    expect(m.severity_summary).toStrictEqual({ critical: 1, high: 1, medium: 0, low: 0, info: 0 });
  });

  it('summary.by_severity is the older name of severity_counts; a top-level hosts[] counts hosts', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      summary: { by_severity: { critical: 2, low: 1 } },
      hosts: [{}, {}, {}, {}],
      findings: [{ severity: 'info', host: 'x' }],
    });
    expect(m.severity_summary).toStrictEqual({ critical: 2, high: 0, medium: 0, low: 1, info: 0 });
    expect(m.total_hosts).toBe(4);
  });

  it("a file's own metadata.remediation_summary is used when the remediation arrays are absent", () => {
    const own = {
      total: 4,
      resolved_count: 1,
      by_status: { new: 1, persistent: 1, in_progress: 1, resolved: 1, deferred: 0 },
      by_severity: { critical: 0, high: 2, medium: 2, low: 0, info: 0 },
    };
    expect(derive({ metadata: { session_id: 'a_1', remediation_summary: own } }).remediation_summary).toStrictEqual(
      own,
    );
    // ...but the arrays win when present.
    expect(
      derive({ metadata: { session_id: 'a_1', remediation_summary: own }, remediation: [] }).remediation_summary.total,
    ).toBe(0);
  });

  it('unknown remediation statuses count as new; resolved[] entries count as resolved', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      remediation: [{ status: 'weird', severity: 'low' }, { severity: 'high' }],
      remediation_resolved: [{ status: 'new' }],
    });
    expect(m.remediation_summary).toStrictEqual({
      total: 3,
      resolved_count: 1,
      by_status: { new: 2, persistent: 0, in_progress: 0, resolved: 1, deferred: 0 },
      by_severity: { critical: 0, high: 1, medium: 0, low: 1, info: 0 },
    });
  });

  it('orc_964 without coverage counts mapped divisions; attestations other than "true" are pending', () => {
    const orc = {
      enabled: true,
      divisions: [{ mapped: true }, { mapped: false }, { mapped: true }, { mapped: 'yes' }],
      attestations: [{ state: 'true' }, { state: 'unknown' }, { state: 'false' }, {}],
    };
    expect(derive({ metadata: { session_id: 'a_1' }, orc_964: orc }).orc964_summary).toStrictEqual({
      enabled: true,
      technical_covered: 2,
      technical_total: 5,
      attest_pending: 3,
    });
  });

  it('an unknown compliance framework has no total and no gap', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      compliance: [
        { framework: 'ISO 27001', control_id: 'A.5', finding_ids: ['x', 'y', 'x'] },
        { control_id: 'no framework' },
      ],
    });
    expect(m.compliance_summary).toStrictEqual({
      total_mappings: 2,
      by_framework: [
        { framework: 'ISO 27001', mapped_controls: 1, total_controls: null, gap_controls: null, findings_count: 2 },
      ],
    });
  });

  it('a framework named like an Object.prototype member is unknown too (no total, no gap)', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      compliance: [
        { framework: 'constructor', control_id: '1' },
        { framework: 'toString', control_id: '2' },
      ],
    });
    expect(m.compliance_summary).toStrictEqual({
      total_mappings: 2,
      by_framework: [
        { framework: 'constructor', mapped_controls: 1, total_controls: null, gap_controls: null, findings_count: 0 },
        { framework: 'toString', mapped_controls: 1, total_controls: null, gap_controls: null, findings_count: 0 },
      ],
    });
  });

  it('alerts_summary without total_triggered counts the triggered alerts', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      alerts_summary: { alerts_triggered: [{ type: 'scan_complete' }, 'x'] },
    });
    expect(m.alerts_summary).toStrictEqual({
      evaluated_at: null,
      total_triggered: 1,
      alerts_triggered: [{ type: 'scan_complete', timestamp: null, message: null, channels_notified: [] }],
      config: null,
    });
  });

  it('alerts_summary keeps only its documented fields (older files put it under metadata)', () => {
    const block = {
      evaluated_at: '2025-03-01T00:00:00Z',
      total_triggered: 1,
      alerts_triggered: [
        {
          type: 'new_critical',
          timestamp: 't',
          message: 'm',
          channels_notified: ['email', 3],
          raw_payload: 'x'.repeat(1000),
        },
      ],
      config: {
        risk_threshold: '60',
        on_new_critical: true,
        on_scan_complete: 'no',
        channels: 'email',
        smtp_password: 'secret',
      },
      future_field: { big: 'x'.repeat(1000) },
    };
    const m = derive({ metadata: { session_id: 'a_1', alerts_summary: block } });
    expect(m.alerts_summary).toStrictEqual({
      evaluated_at: '2025-03-01T00:00:00Z',
      total_triggered: 1,
      alerts_triggered: [{ type: 'new_critical', timestamp: 't', message: 'm', channels_notified: ['email'] }],
      config: { risk_threshold: null, on_new_critical: true, on_scan_complete: null, channels: [] },
    });
  });
});

describe('wrong-typed fields count as absent', () => {
  it('in the complete file, every field broken at once gives the minimal defaults', () => {
    const doc = fixture('session-complete.json');
    const meta = doc['metadata'];
    meta['client_id'] = 42;
    meta['client'] = { name: 'Acme' };
    meta['target'] = ['10.20.0.0/24'];
    meta['tool_version'] = 4.2;
    meta['schedule_id'] = true;
    meta['schedule_cron'] = 5;
    meta['schedule_profile'] = null;
    meta['is_scheduled'] = 'true';
    meta['scheduled_by'] = 1;
    doc['summary'] = {
      risk_score: '62',
      risk_grade: 4,
      total_findings: '6',
      total_hosts: null,
      severity_counts: 'lots',
      risk_score_operational: '48',
      risk_grade_operational: [],
      exception_impact: 'none',
    };
    doc['findings'] = { 'f-001': { severity: 'critical' } };
    doc['remediation'] = 'none';
    doc['remediation_resolved'] = 7;
    doc['compliance'] = { framework: 'CIS Controls v8' };
    doc['topology'] = { nodes: { ip: '10.20.0.5' } };
    doc['orc_964'] = [{ enabled: true }];
    doc['alerts_summary'] = 'quiet';
    expect(derive(doc)).toStrictEqual({
      ...MINIMAL,
      session_id: '20250301_140512',
      target: null,
      total_findings: 0,
      total_hosts: 0,
      severity_summary: zeros(),
    });
  });

  it('a number of the wrong type inside a block is 0, not the string', () => {
    const m = derive({
      metadata: { session_id: 'a_1' },
      summary: {
        severity_counts: { critical: '3', high: 2, medium: Number.NaN, low: null },
        exception_impact: { score_delta: '5' },
      },
    });
    expect(m.severity_summary).toStrictEqual({ critical: 0, high: 2, medium: 0, low: 0, info: 0 });
    expect(m.exception_summary.score_delta).toBe(0);
  });

  it('strings PostgreSQL cannot store (NUL, unpaired surrogates) are absent', () => {
    const m = derive({
      metadata: {
        session_id: 'a_1',
        client: 'Acme\u0000',
        target: '\ud800x',
        tool_version: 'ok',
        schedule_id: 'x\udc00',
      },
      compliance: [{ framework: 'CIS Controls v8\u0000', control_id: '1' }],
      alerts_summary: { config: { channels: ['email', 'chat\u0000'] } },
    });
    expect(m).toMatchObject({ client: null, target: null, tool_version: 'ok', schedule_id: null });
    expect(m.compliance_summary.by_framework).toStrictEqual([]);
    expect(m.alerts_summary!.config).toMatchObject({ channels: ['email'] });
  });

  it('blank strings are absent', () => {
    const m = derive({ metadata: { session_id: 'a_1', client: '  ', target: '', tool_version: ' ' } });
    expect(m).toMatchObject({ client: null, target: null, tool_version: null });
  });

  it('a malformed metadata.remediation_summary is normalised to the documented shape', () => {
    const m = derive({
      metadata: {
        session_id: 'a_1',
        remediation_summary: { total: '9', by_status: { new: 2, persistent: 'x' }, by_severity: 'none' },
      },
    });
    expect(m.remediation_summary).toStrictEqual({
      total: 2,
      resolved_count: 0,
      by_status: { new: 2, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 },
      by_severity: zeros(),
    });
  });

  it('metadata that is not an object counts as absent (the top-level session_id then applies)', () => {
    expect(derive({ metadata: 'x', session_id: 'top_level' }).session_id).toBe('top_level');
    expect(derive({ metadata: ['x'], session_id: 'top_level' }).session_id).toBe('top_level');
  });
});

describe('session id rules', () => {
  const fails = (doc: unknown, message: RegExp) => {
    expect(() => sessionIdOf(doc)).toThrow(SessionFileError);
    expect(() => derive(doc)).toThrow(message);
  };

  it('metadata.session_id, else a top-level session_id', () => {
    expect(sessionIdOf({ metadata: { session_id: '20250101_000000' }, session_id: 'other' })).toBe('20250101_000000');
    expect(sessionIdOf({ session_id: '20250101_000000' })).toBe('20250101_000000');
    expect(sessionIdOf({ metadata: {}, session_id: 'x-1' })).toBe('x-1');
  });

  it('a wrong-typed metadata.session_id counts as absent', () => {
    expect(sessionIdOf({ metadata: { session_id: 20250101 }, session_id: 'top_1' })).toBe('top_1');
    fails({ metadata: { session_id: 20250101 } }, /no metadata.session_id/);
  });

  it('the document must be a JSON object', () => {
    for (const doc of [null, [], 'x', 42, true]) fails(doc, /must be a JSON object/);
  });

  it('a missing or empty id is refused', () => {
    fails({}, /no metadata.session_id/);
    fails({ metadata: { session_id: '' } }, /no metadata.session_id/);
    fails({ metadata: { target: 'x' } }, /no metadata.session_id/);
  });

  it('only [a-zA-Z0-9_-], at most 128 characters', () => {
    for (const id of ['../x', 'a/b', 'a\\b', 'a b', 'a.b', '..', 'a\u0000b', 'é', '%2e%2e', 'a\nb', ' a'])
      fails({ metadata: { session_id: id } }, /Invalid session id/);
    fails({ metadata: { session_id: 'a'.repeat(MAX_SESSION_ID_LENGTH + 1) } }, /Invalid session id/);
    fails({ metadata: { session_id: 'a'.repeat(200) } }, /Invalid session id/);
    expect(sessionIdOf({ metadata: { session_id: 'a'.repeat(MAX_SESSION_ID_LENGTH) } })).toHaveLength(128);
    for (const id of ['20250301_140512', 'A-z_0-9', '-', '_'])
      expect(sessionIdOf({ metadata: { session_id: id } })).toBe(id);
  });
});
