import { Value } from '@sinclair/typebox/value';
import { coverageBlock, SessionFile } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { deriveMetadata } from '@svc/portal/sessions/derive';
import { parseExceptionsFile } from '../src/pipeline/exceptions.ts';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { runStages, type StagesInput } from '../src/pipeline/run-stages.ts';
import { scheduleId } from '../src/kit/scheduling.ts';
import { BUSINESS_LICENSE } from '@svc/test-support/report-session';

const NOW = new Date('2025-03-01T14:10:00.000Z');
const license = BUSINESS_LICENSE;

function input(over: Partial<StagesInput> = {}): StagesInput {
  return {
    findings: [
      {
        rule_id: 'telnet-open',
        title: 'Telnet enabled',
        severity: 'high',
        host: '10.0.0.6',
        port: 23,
        protocol: 'tcp',
      },
      {
        rule_id: 'default-credentials',
        title: 'Default admin password',
        severity: 'critical',
        host: '10.0.0.6',
        port: 80,
        protocol: 'tcp',
      },
      {
        rule_id: 'outdated-software',
        title: 'OpenSSH 8.9 (CVE-2024-6387)',
        severity: 'critical',
        host: '10.0.0.5',
        port: 22,
        protocol: 'tcp',
      },
      { rule_id: 'http-title', title: 'Web page title', severity: 'info', host: '10.0.0.5', port: 80, protocol: 'tcp' },
    ],
    hosts: [{ ip: '10.0.0.5', hostname: 'ssh01' }, { ip: '10.0.0.6' }],
    // 10.0.0.7 answered with no open port left: its RDP item is resolved.
    coverage: coverageBlock({
      hosts: ['10.0.0.5', '10.0.0.6', '10.0.0.7'],
      ports: { tcp: [[1, 65535]], udp: [[161, 161]] },
      profile: 'full_recon',
      tools: ['nmap'],
      source: 'svc-scan',
    }),
    prior: {
      metadata: { session_id: '20250222_140000' },
      remediation: [
        {
          title: 'Telnet enabled',
          severity: 'high',
          host: '10.0.0.6',
          status: 'in_progress',
          note: 'OPS-7',
          first_seen: '20250215_140000',
          status_changed: '2025-02-20T10:00:00.000Z',
        },
        { title: 'RDP exposed', severity: 'high', host: '10.0.0.7', status: 'new', first_seen: '20250222_140000' },
      ],
    },
    exceptions: parseExceptionsFile(
      JSON.stringify({
        exceptions: [
          {
            title: 'Default admin password',
            reason: 'Kiosk, replaced in April',
            approver: 'CISO',
            approved_at: '2025-02-01T09:00:00Z',
            expiry: '2025-04-30',
          },
          { title: 'Telnet enabled', reason: 'Old PLC', approver: 'CISO', expiry: '2025-02-28' },
        ],
      }),
    ).rules,
    settings: {
      sessionId: '20250301_140000',
      target: '10.0.0.0/24',
      clientId: 'acme',
      client: 'ACME Corp',
      toolVersion: '4.2.3',
      scanProfile: 'standard',
      startedAt: new Date('2025-03-01T14:00:00.000Z'),
      schedule: { cron: '0 14 * * 6', profile: 'standard', scheduledBy: 'cron' },
      orc: orcSettingsFrom({ CLIENT_TYPE: 'political_subdivision' }),
    },
    license: { tier: 'business', state: license },
    now: NOW,
    ...over,
  };
}

describe('runStages', () => {
  it('composes a document that validates against the protocol SessionFile schema', () => {
    const { doc, warnings } = runStages(input());
    expect(warnings).toEqual([]);
    expect([...Value.Errors(SessionFile, doc)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
    expect(doc.metadata).toMatchObject({
      session_id: '20250301_140000',
      client_id: 'acme',
      client: 'ACME Corp',
      target: '10.0.0.0/24',
      started_at: '2025-03-01T14:00:00.000Z',
      finished_at: NOW.toISOString(),
      is_scheduled: true,
      schedule_id: scheduleId('10.0.0.0/24', '0 14 * * 6'),
      schedule_cron: '0 14 * * 6',
      scheduled_by: 'cron',
      has_topology: true,
      license: {
        tier: 'biz',
        fingerprint: '0123456789abcdef',
        source: 'env:SVC_LICENSE_KEY',
        validated_at: '2025-03-01T14:00:00.000Z',
      },
    });
    expect(JSON.stringify(doc)).not.toContain('svc_biz_');
    expect(doc.remediation?.map((r) => [r.title, r.status, r.exception_status])).toEqual([
      ['Telnet enabled', 'in_progress', 'expired'],
      ['Default admin password', 'new', 'accepted'],
      ['OpenSSH 8.9 (CVE-2024-6387)', 'new', null],
      ['Web page title', 'new', null],
    ]);
    expect(doc.remediation_resolved?.map((r) => [r.title, r.status, r.prior_status])).toEqual([
      ['RDP exposed', 'resolved', 'new'],
    ]);
    expect(doc.orc_964?.coverage).toEqual({ technical_divisions_total: 5, technical_divisions_covered: 3 });
  });

  it("the portal's deriveMetadata reads back the summaries the stages wrote", () => {
    const { doc } = runStages(input());
    const meta = deriveMetadata({ doc, keyClientId: 'acme', hasExecSummary: false });
    const m = doc.metadata!;
    const s = doc.summary!;
    expect(meta.remediation_summary).toEqual(m.remediation_summary);
    expect(meta.remediation_summary).toEqual({
      total: 5,
      resolved_count: 1,
      by_status: { new: 3, persistent: 0, in_progress: 1, resolved: 1, deferred: 0 },
      by_severity: { critical: 2, high: 2, medium: 0, low: 0, info: 1 },
    });
    expect(meta.compliance_summary).toEqual(m.compliance_summary);
    expect(meta.exception_summary).toEqual({
      ...m.exception_summary,
      risk_score_operational: s.risk_score_operational,
      risk_grade_operational: s.risk_grade_operational,
    });
    expect(meta.exception_summary).toMatchObject({ total_exceptions: 2, by_status: { accepted: 1, expired: 1 } });
    expect([meta.risk_score, meta.risk_grade, meta.total_findings, meta.total_hosts]).toEqual([
      s.risk_score,
      s.risk_grade,
      4,
      2,
    ]);
    expect(meta.severity_summary).toEqual(s.severity_counts);
    expect(meta.orc964_summary).toEqual({ enabled: true, technical_covered: 3, technical_total: 5, attest_pending: 4 });
    expect([meta.schedule_id, meta.is_scheduled, meta.scheduled_by, meta.has_topology]).toEqual([
      m.schedule_id,
      true,
      'cron',
      true,
    ]);
  });

  it('a community run warns and skips remediation, compliance and ORC 9.64, and still validates', () => {
    const { doc, warnings } = runStages(input({ license: { tier: '', state: null } }));
    expect(warnings).toEqual([
      'Skipping remediation: it needs the business tier (this host: community)',
      'Skipping compliance: it needs the business tier (this host: community)',
      'Skipping the ORC 9.64 block: it needs the compliance permission',
    ]);
    expect(Value.Check(SessionFile, doc)).toBe(true);
    for (const key of ['remediation', 'remediation_resolved', 'compliance', 'orc_964'] as const)
      expect(doc[key], key).toBeUndefined();
    expect(doc.metadata?.license).toBeUndefined();
    expect(doc.summary?.risk_score).toBe(doc.summary?.risk_score_operational);
    const meta = deriveMetadata({ doc, keyClientId: null, hasExecSummary: false });
    expect(meta.orc964_summary).toBeNull();
    expect(meta.compliance_summary).toEqual({ total_mappings: 0, by_framework: [] });
  });

  it('ORC 9.64 not enabled: no block and no ORC rows in compliance[]', () => {
    const base = input();
    const { doc } = runStages({ ...base, settings: { ...base.settings, orc: orcSettingsFrom({}), schedule: null } });
    expect(doc.orc_964).toBeUndefined();
    expect(doc.compliance?.filter((r) => r.framework === 'ORC 9.64')).toEqual([]);
    expect(doc.compliance?.length).toBeGreaterThan(0);
    expect(doc.metadata).toMatchObject({ is_scheduled: false });
    expect(doc.metadata?.schedule_id).toBeUndefined();
  });

  it('writes the coverage; an open item where the scan did not look stays open, not checked, and out of the numbers', () => {
    const base = input();
    expect(runStages(base).doc.coverage).toEqual(base.coverage);
    const { doc } = runStages({ ...base, coverage: coverageBlock({ hosts: ['10.0.0.5', '10.0.0.6'], ports: {} }) });
    expect(doc.remediation_resolved).toEqual([]);
    expect(doc.remediation_not_checked?.map((r) => [r.title, r.status, r.first_seen])).toEqual([
      ['RDP exposed', 'new', '20250222_140000'],
    ]);
    expect(doc.metadata?.remediation_summary).toMatchObject({ total: 4, resolved_count: 0 });
    expect(doc.metadata?.disposition_summary).toEqual({ false_positive: 0 });
    expect(Value.Check(SessionFile, doc)).toBe(true);
  });

  it('a false positive carried from the prior is left out of both scores and counted apart', () => {
    const base = input();
    const prior = base.prior as { remediation: Record<string, unknown>[] };
    const marked = {
      ...prior,
      remediation: [
        ...prior.remediation,
        {
          title: 'OpenSSH 8.9 (CVE-2024-6387)',
          severity: 'critical',
          host: '10.0.0.5',
          status: 'new',
          disposition: 'false_positive',
          disposition_reason: 'backported fix (Debian deb12u3)',
          disposition_by: 'analyst',
          disposition_at: '2025-02-25T10:00:00.000Z',
        },
      ],
    };
    const plain = runStages(base).doc;
    const { doc } = runStages({ ...base, prior: marked });
    expect(doc.remediation?.[2]).toMatchObject({ status: 'persistent', disposition: 'false_positive' });
    expect(doc.metadata?.disposition_summary).toEqual({ false_positive: 1 });
    expect(doc.summary?.risk_score).toBeLessThan(plain.summary?.risk_score ?? 0);
    expect(doc.metadata?.remediation_summary?.total).toBe(plain.metadata?.remediation_summary?.total);
  });

  it('a prior session of another target is not used for tracking: a warning, every finding new, nothing resolved', () => {
    const base = input();
    const { doc, warnings } = runStages({
      ...base,
      prior: { ...(base.prior as object), metadata: { session_id: '20250222_140000', target: '192.168.9.0/24' } },
    });
    expect(warnings).toEqual([
      'The prior session 20250222_140000 scanned 192.168.9.0/24, not 10.0.0.0/24: remediation tracking starts afresh',
    ]);
    expect(doc.remediation?.map((r) => r.status)).toEqual(['new', 'new', 'new', 'new']);
    expect(doc.remediation_resolved).toEqual([]);
  });
});
