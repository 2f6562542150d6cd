import type { LatestStateEntry, LatestStateResponse } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import type { ExceptionRule } from '../src/pipeline/exceptions.ts';
import { mergePriorState, reapplyPriorState } from '../src/pipeline/portal-state.ts';
import { runStages } from '../src/pipeline/run-stages.ts';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import { BUSINESS_LICENSE } from '@svc/test-support/report-session';

/** The merge of the portal's latest state with the local prior session (docs/decisions.md#prior-state-from-the-portal). */

const TARGET = '10.0.0.0/24';
const NOW = new Date('2025-03-08T14:10:00.000Z');
const fpTelnet = findingFingerprint({ rule_id: 'telnet-open', host: '10.0.0.6', port: 23, protocol: 'tcp' });
const fpSsh = findingFingerprint({ rule_id: 'ssh-weak', host: '10.0.0.5', port: 22, protocol: 'tcp' });

const findings = [
  { rule_id: 'telnet-open', title: 'Telnet enabled', severity: 'high', host: '10.0.0.6', port: 23, protocol: 'tcp' },
  { rule_id: 'ssh-weak', title: 'Weak SSH', severity: 'critical', host: '10.0.0.5', port: 22, protocol: 'tcp' },
] as const;

const localPrior = {
  metadata: { session_id: '20250301_140000', target: TARGET, finished_at: '2025-03-01T14:10:00.000Z' },
  remediation: [
    {
      title: 'Telnet enabled',
      fingerprint: fpTelnet,
      host: '10.0.0.6',
      status: 'new',
      status_changed: '2025-03-01T14:10:00.000Z',
      note: '',
      first_seen: '20250301_140000',
    },
    {
      title: 'Weak SSH',
      fingerprint: fpSsh,
      host: '10.0.0.5',
      status: 'new',
      status_changed: '2025-03-01T14:10:00.000Z',
      note: 'local note',
      first_seen: '20250301_140000',
    },
  ],
};

function entry(over: Partial<LatestStateEntry>): LatestStateEntry {
  return {
    fingerprint: fpTelnet,
    title: 'Telnet enabled',
    host: '10.0.0.6',
    port: 23,
    severity: 'high',
    status: 'new',
    status_changed: '2025-03-01T14:10:00.000Z',
    note: '',
    first_seen: '20250301_140000',
    prior_status: null,
    exception_status: null,
    exception_reason: null,
    exception_approver: null,
    exception_approved_at: null,
    exception_expiry: null,
    ...over,
  };
}

function state(over: Partial<LatestStateResponse>): LatestStateResponse {
  return {
    session_id: '20250301_140000',
    client_id: 'acme',
    target: TARGET,
    uploaded_at: '2025-03-01T14:11:00.000Z',
    scanned_at: '2025-03-01T14:10:00.000Z',
    remediation: [],
    remediation_resolved: [],
    ...over,
  };
}

function stages(prior: unknown, exceptions: ExceptionRule[]) {
  return runStages({
    findings,
    hosts: [{ ip: '10.0.0.5' }, { ip: '10.0.0.6' }],
    prior,
    exceptions,
    settings: {
      sessionId: '20250308_140000',
      target: TARGET,
      toolVersion: '4.2.3',
      startedAt: new Date('2025-03-08T14:00:00.000Z'),
      schedule: null,
      orc: orcSettingsFrom({}),
    },
    license: { tier: 'business', state: BUSINESS_LICENSE },
    now: NOW,
  }).doc;
}

const triaged = entry({ status: 'in_progress', status_changed: '2025-03-02T09:00:00.000Z', note: 'OPS-12' });

describe('prior state from the portal', () => {
  it('offline (no portal state): the local prior and the local exceptions as they are', () => {
    const merged = mergePriorState(localPrior, null, []);
    expect(merged.source).toBe('local');
    expect(merged.prior).toBe(localPrior);
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.map((r) => [r.status, r.note])).toEqual([
      ['persistent', ''],
      ['persistent', 'local note'],
    ]);
  });

  it("offline: an exception the local prior session recorded (from the portal) still applies; a later local file's wins", () => {
    const excepted = {
      ...localPrior,
      remediation: [
        {
          ...localPrior.remediation[0],
          exception_status: 'accepted',
          exception_reason: 'Isolated VLAN',
          exception_approver: 'ops@example.test',
          exception_approved_at: '2025-03-01T15:00:00.000Z',
          exception_expiry: '2025-12-31',
        },
        localPrior.remediation[1],
      ],
    };
    const carried = mergePriorState(excepted, null, []);
    expect(carried.source).toBe('local');
    const doc = stages(carried.prior, carried.exceptions);
    expect(doc.remediation?.[0]).toMatchObject({
      fingerprint: fpTelnet,
      exception_status: 'accepted',
      exception_reason: 'Isolated VLAN',
      exception_approver: 'ops@example.test',
      exception_expiry: '2025-12-31',
    });
    expect(doc.summary?.risk_score_operational).toBeLessThan(doc.summary?.risk_score as number);

    const later: ExceptionRule = {
      fingerprint: fpTelnet,
      title: null,
      host: null,
      reason: 'Vendor appliance',
      approver: 'CISO',
      approved_at: '2025-03-05T10:00:00.000Z',
      expiry: null,
    };
    const both = mergePriorState(excepted, null, [later]);
    const overridden = stages(both.prior, both.exceptions);
    expect(overridden.remediation?.[0]).toMatchObject({
      exception_reason: 'Vendor appliance',
      exception_approver: 'CISO',
    });
  });

  it('the portal copy of the local prior session wins: its in_progress, note and status_changed carry over', () => {
    const merged = mergePriorState(localPrior, state({ remediation: [triaged] }), []);
    expect(merged.source).toBe('portal');
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.[0]).toMatchObject({
      fingerprint: fpTelnet,
      status: 'in_progress',
      note: 'OPS-12',
      status_changed: '2025-03-02T09:00:00.000Z',
      first_seen: '20250301_140000',
      prior_status: 'in_progress',
    });
    // Auto-detection still applies: the portal no longer lists Weak SSH, so it is new again.
    expect(doc.remediation?.[1]).toMatchObject({ fingerprint: fpSsh, status: 'new', first_seen: '20250308_140000' });
  });

  it('no local prior (a fresh agent): the portal state is the prior', () => {
    const merged = mergePriorState(null, state({ remediation: [entry({ status: 'deferred', note: 'Q3' })] }), []);
    expect(merged.source).toBe('portal');
    expect(stages(merged.prior, merged.exceptions).remediation?.[0]).toMatchObject({ status: 'deferred', note: 'Q3' });
  });

  it('a newer local prior keeps its items except where the portal decided after it', () => {
    const newerLocal = {
      ...localPrior,
      metadata: { ...localPrior.metadata, session_id: '20250305_140000', finished_at: '2025-03-05T14:10:00.000Z' },
    };
    const older = state({
      remediation: [
        entry({ status: 'deferred', status_changed: '2025-03-06T08:00:00.000Z', note: 'after the local scan' }),
        entry({
          fingerprint: fpSsh,
          title: 'Weak SSH',
          host: '10.0.0.5',
          status: 'in_progress',
          status_changed: '2025-03-04T08:00:00.000Z',
          note: 'before the local scan',
        }),
      ],
    });
    const merged = mergePriorState(newerLocal, older, []);
    expect(merged.source).toBe('local+portal');
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.map((r) => [r.status, r.note, r.status_changed])).toEqual([
      ['deferred', 'after the local scan', '2025-03-06T08:00:00.000Z'],
      ['persistent', 'local note', NOW.toISOString()],
    ]);
  });

  it('a portal session scanned after the local prior is the prior', () => {
    const merged = mergePriorState(
      localPrior,
      state({ session_id: '20250307_140000', scanned_at: '2025-03-07T14:10:00.000Z', remediation: [triaged] }),
      [],
    );
    expect(merged.source).toBe('portal');
    expect(stages(merged.prior, merged.exceptions).remediation?.[0]).toMatchObject({ status: 'in_progress' });
  });

  it("the portal's exceptions apply; the later approval wins over the local file; expired ones count again", () => {
    const local: ExceptionRule[] = [
      {
        fingerprint: fpTelnet,
        title: null,
        host: null,
        reason: 'local, older',
        approver: 'a@x.test',
        approved_at: '2025-01-01T00:00:00.000Z',
        expiry: null,
      },
      {
        fingerprint: fpSsh,
        title: null,
        host: null,
        reason: 'local, newer',
        approver: 'b@x.test',
        approved_at: '2025-03-03T00:00:00.000Z',
        expiry: null,
      },
    ];
    const portal = state({
      remediation: [
        entry({
          exception_status: 'accepted',
          exception_reason: 'portal, newer',
          exception_approver: 'ciso@x.test',
          exception_approved_at: '2025-03-02T00:00:00.000Z',
          exception_expiry: '2099-01-01',
        }),
        entry({
          fingerprint: fpSsh,
          title: 'Weak SSH',
          host: '10.0.0.5',
          exception_status: 'accepted',
          exception_reason: 'portal, older',
          exception_approver: 'ciso@x.test',
          exception_approved_at: '2025-03-02T00:00:00.000Z',
          exception_expiry: '2025-03-07',
        }),
      ],
    });
    const merged = mergePriorState(localPrior, portal, local);
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.map((r) => [r.exception_status, r.exception_reason, r.exception_expiry])).toEqual([
      ['accepted', 'portal, newer', '2099-01-01'],
      ['accepted', 'local, newer', null],
    ]);
    expect(doc.summary?.risk_score_operational).toBeLessThan(doc.summary?.risk_score ?? 0);

    // Portal only: the SSH exception expired the day before the scan, so it is `expired` and counts again.
    const only = mergePriorState(localPrior, portal, []);
    const expired = stages(only.prior, only.exceptions);
    expect(expired.remediation?.[1]).toMatchObject({
      exception_status: 'expired',
      exception_expired: true,
      exception_reason: 'portal, older',
    });
    expect(expired.remediation?.[0]).toMatchObject({ exception_status: 'accepted' });
    expect(expired.summary?.risk_score_operational).toBeLessThan(expired.summary?.risk_score ?? 0);
  });

  it('svc upload: a finished document re-runs remediation, exceptions and scores from the merged prior', () => {
    // Written offline: the local prior only, no triage.
    const offline = stages(localPrior, []);
    expect(offline.remediation?.[0]).toMatchObject({ status: 'persistent', exception_status: null });
    expect(offline.summary?.risk_score_operational).toBe(offline.summary?.risk_score);
    const portal = state({
      remediation: [
        {
          ...triaged,
          exception_status: 'accepted',
          exception_reason: 'jump host only',
          exception_approver: 'ciso@x.test',
          exception_approved_at: '2025-03-02T00:00:00.000Z',
          exception_expiry: null,
        },
      ],
    });
    const again = reapplyPriorState(offline, localPrior, portal);
    expect(again?.remediation?.[0]).toMatchObject({
      status: 'in_progress',
      note: 'OPS-12',
      status_changed: '2025-03-02T09:00:00.000Z',
      exception_status: 'accepted',
      exception_reason: 'jump host only',
    });
    expect(again?.summary?.risk_score).toBe(offline.summary?.risk_score);
    expect(again?.summary?.risk_score_operational).toBeLessThan(again?.summary?.risk_score ?? 0);
    expect(again?.metadata?.risk_score_operational).toBe(again?.summary?.risk_score_operational);
    expect(again?.metadata?.remediation_summary?.by_status?.in_progress).toBe(1);
    const { remediation: _remediation, ...withoutRemediation } = offline;
    expect(reapplyPriorState(withoutRemediation, localPrior, portal)).toBeNull();
  });
});

describe('prior state from the portal: findings of record', () => {
  const fpRdp = findingFingerprint({ rule_id: 'rdp-exposed', host: '10.0.0.9', port: 3389, protocol: 'tcp' });
  const fpSnmp = findingFingerprint({ rule_id: 'snmp-public', host: '10.0.0.6', port: 161, protocol: 'udp' });
  const falsePositive = {
    disposition: 'false_positive' as const,
    disposition_reason: 'banner only, patched',
    disposition_by: 'analyst@x.test',
    disposition_at: '2025-03-03T10:00:00.000Z',
  };

  it('an open record the latest session did not report keeps its own place: not checked unless this scan looked there', () => {
    const rdp = entry({
      fingerprint: fpRdp,
      title: 'RDP exposed',
      host: '10.0.0.9',
      port: 3389,
      protocol: 'tcp',
      status: 'deferred',
      note: 'jump host',
      last_seen: '20250222_140000',
    });
    const snmp = entry({ fingerprint: fpSnmp, title: 'SNMP public', host: '10.0.0.6', port: 161, protocol: 'udp' });
    const merged = mergePriorState(null, state({ remediation: [triaged, rdp, snmp] }), []);
    const doc = stages(merged.prior, merged.exceptions);
    // 10.0.0.9 did not answer: RDP stays open as it was. 10.0.0.6 answered: its SNMP item is resolved.
    expect(doc.remediation_not_checked).toMatchObject([
      {
        title: 'RDP exposed',
        status: 'deferred',
        note: 'jump host',
        port: 3389,
        protocol: 'tcp',
        last_seen: '20250222_140000',
      },
    ]);
    const placed = (e: { title?: string; port?: unknown; protocol?: unknown }) => [e.title, e.port, e.protocol];
    expect(doc.remediation_resolved?.map(placed)).toEqual([['SNMP public', 161, 'udp']]);
  });

  it("the portal's disposition and the exception's source come with the item; the false positive is out of the score", () => {
    const marked = entry({
      ...falsePositive,
      exception_status: 'accepted',
      exception_reason: 'isolated',
      exception_approver: 'key svc_biz_abcd',
      exception_approved_at: '2025-03-02T00:00:00.000Z',
      exception_expiry: null,
      exception_source: 'upload',
      exception_claimed_approver: 'CISO',
    });
    const merged = mergePriorState(null, state({ remediation: [marked] }), []);
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.[0]).toMatchObject({
      ...falsePositive,
      exception_status: 'accepted',
      exception_source: 'upload',
      exception_claimed_approver: 'CISO',
    });
    expect(doc.metadata?.disposition_summary).toEqual({ false_positive: 1 });
    // Only Weak SSH (critical) counts; the false positive is no accepted risk either.
    expect(doc.metadata?.exception_summary).toMatchObject({ total_exceptions: 0 });
    const plain = stages(null, []);
    expect(doc.summary?.risk_score).toBeLessThan(plain.summary?.risk_score ?? 0);
  });

  it('a record the portal holds as resolved, seen again, is reopened with its history', () => {
    const gone = entry({ status: 'resolved', note: 'closed in OPS-9', first_seen: '20250215_140000' });
    const merged = mergePriorState(null, state({ remediation: [], remediation_resolved: [gone] }), []);
    expect(stages(merged.prior, merged.exceptions).remediation?.[0]).toMatchObject({
      fingerprint: fpTelnet,
      status: 'persistent',
      prior_status: 'resolved',
      reopened_at: NOW.toISOString(),
      first_seen: '20250215_140000',
      note: 'closed in OPS-9',
    });
  });

  it("a newer local prior takes the portal's disposition of its items (set or withdrawn there)", () => {
    const newerLocal = {
      ...localPrior,
      metadata: { ...localPrior.metadata, session_id: '20250305_140000', finished_at: '2025-03-05T14:10:00.000Z' },
      remediation: [localPrior.remediation[0], { ...localPrior.remediation[1], ...falsePositive }],
    };
    const older = state({
      remediation: [entry(falsePositive), entry({ fingerprint: fpSsh, title: 'Weak SSH', host: '10.0.0.5' })],
    });
    const merged = mergePriorState(newerLocal, older, []);
    expect(merged.source).toBe('local+portal');
    const doc = stages(merged.prior, merged.exceptions);
    expect(doc.remediation?.map((r) => r.disposition ?? null)).toEqual(['false_positive', null]);
  });

  it('svc upload: the document is re-tracked against its own coverage; not-checked items stay', () => {
    const offline = stages(localPrior, []);
    const rdp = entry({ fingerprint: fpRdp, title: 'RDP exposed', host: '10.0.0.9', port: 3389, protocol: 'tcp' });
    const again = reapplyPriorState(offline, localPrior, state({ remediation: [triaged, rdp] }));
    expect(again?.remediation_not_checked?.map((e) => e.title)).toEqual(['RDP exposed']);
    expect(again?.metadata?.remediation_summary?.total).toBe(2);
    expect(again?.metadata?.disposition_summary).toEqual({ false_positive: 0 });
  });
});
