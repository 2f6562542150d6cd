import { coverageBlock, sessionCoverage } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { describe, expect, it } from 'vitest';
import { normalizeFindings } from '../src/pipeline/findings.ts';
import { trackRemediation } from '../src/pipeline/remediation.ts';

const NOW = new Date('2025-03-01T14:10:00.000Z');
const fpSsh = findingFingerprint({ rule_id: 'ssh-weak-algorithms', host: '10.0.0.5', port: 22, protocol: 'tcp' });
const fpTelnet = findingFingerprint({ rule_id: 'telnet-open', host: '10.0.0.6', port: 23, protocol: 'tcp' });
const fpRdp = findingFingerprint({ rule_id: 'rdp-exposed', host: '10.0.0.7', port: 3389, protocol: 'tcp' });

const findings = normalizeFindings([
  {
    rule_id: 'ssh-weak-algorithms',
    title: 'Weak SSH algorithms',
    severity: 'medium',
    host: '10.0.0.5',
    port: 22,
    protocol: 'tcp',
  },
  { rule_id: 'telnet-open', title: 'Telnet enabled', severity: 'high', host: '10.0.0.6', port: 23, protocol: 'tcp' },
  { title: 'Legacy title-only finding', severity: 'low', host: '10.0.0.8' },
  {
    rule_id: 'smbv1-enabled',
    title: 'SMBv1 enabled',
    severity: 'critical',
    host: '10.0.0.9',
    port: 445,
    protocol: 'tcp',
  },
]);

const prior = {
  metadata: { session_id: '20250222_140000' },
  remediation: [
    {
      title: 'Weak SSH algorithms (old title)',
      severity: 'medium',
      fingerprint: fpSsh,
      host: '10.0.0.5',
      status: 'in_progress',
      status_changed: '2025-02-23T09:00:00.000Z',
      note: 'ticket OPS-12',
      first_seen: '20250215_140000',
      prior_status: 'new',
    },
    {
      title: 'Telnet enabled',
      severity: 'high',
      fingerprint: fpTelnet,
      host: '10.0.0.6',
      status: 'new',
      status_changed: '2025-02-22T14:10:00.000Z',
      note: '',
      first_seen: '20250222_140000',
      prior_status: null,
    },
    { title: 'Legacy title-only finding', severity: 'low', host: '10.0.0.8', status: 'deferred', note: 'next budget' },
    {
      title: 'RDP exposed',
      severity: 'high',
      fingerprint: fpRdp,
      host: '10.0.0.7',
      status: 'persistent',
      status_changed: '2025-02-15T14:10:00.000Z',
      note: 'firewall change pending',
      first_seen: '20250208_140000',
      prior_status: 'new',
      exception_status: 'accepted',
      exception_reason: 'segmented VLAN',
      exception_approver: 'ciso@example.test',
      exception_approved_at: '2025-02-10T09:00:00.000Z',
      exception_expiry: '2025-12-31',
    },
  ],
};

/** A scan that looked at these hosts, every TCP port. */
const looked = (...hosts: string[]) =>
  sessionCoverage({ coverage: coverageBlock({ hosts, ports: { tcp: [[1, 65535]] } }) });

describe('remediation tracking', () => {
  // 10.0.0.7 answered (no open port left): its RDP finding is resolved.
  const { remediation, remediation_resolved } = trackRemediation({
    findings,
    prior,
    sessionId: '20250301_140000',
    now: NOW,
    coverage: looked('10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8', '10.0.0.9'),
  });

  it('a finding seen in the prior session (by fingerprint) is carried over: first_seen, status, note and status_changed', () => {
    expect(remediation[0]).toEqual({
      title: 'Weak SSH algorithms',
      severity: 'medium',
      finding_id: 'f-001',
      fingerprint: fpSsh,
      host: '10.0.0.5',
      port: 22,
      protocol: 'tcp',
      status: 'in_progress',
      status_changed: '2025-02-23T09:00:00.000Z',
      note: 'ticket OPS-12',
      first_seen: '20250215_140000',
      prior_status: 'in_progress',
    });
  });

  it('a prior new item seen again becomes persistent, its status change dated now', () => {
    expect(remediation[1]).toMatchObject({
      status: 'persistent',
      prior_status: 'new',
      first_seen: '20250222_140000',
      status_changed: NOW.toISOString(),
      note: '',
    });
  });

  it('a prior item without fingerprint matches by title and host; deferred is kept; first_seen falls back to the prior session id', () => {
    expect(remediation[2]).toMatchObject({
      finding_id: 'f-003',
      status: 'deferred',
      prior_status: 'deferred',
      note: 'next budget',
      first_seen: '20250222_140000',
      status_changed: NOW.toISOString(),
    });
  });

  it('a finding not in the prior session is new, first seen now', () => {
    expect(remediation[3]).toEqual({
      title: 'SMBv1 enabled',
      severity: 'critical',
      finding_id: 'f-004',
      fingerprint: findings[3]!.fingerprint,
      host: '10.0.0.9',
      port: 445,
      protocol: 'tcp',
      status: 'new',
      status_changed: NOW.toISOString(),
      note: '',
      first_seen: '20250301_140000',
      prior_status: null,
    });
  });

  it('a prior item no longer detected where the scan looked goes to remediation_resolved, keeping its exception fields', () => {
    expect(remediation_resolved).toEqual([
      {
        title: 'RDP exposed',
        severity: 'high',
        fingerprint: fpRdp,
        host: '10.0.0.7',
        status: 'resolved',
        status_changed: NOW.toISOString(),
        note: 'firewall change pending',
        first_seen: '20250208_140000',
        prior_status: 'persistent',
        exception_status: null,
        exception_reason: 'segmented VLAN',
        exception_approver: 'ciso@example.test',
        exception_approved_at: '2025-02-10T09:00:00.000Z',
        exception_expiry: '2025-12-31',
        exception_expired: false,
        resolved_at: NOW.toISOString(),
      },
    ]);
  });

  it('without a prior session every finding is new and nothing is resolved', () => {
    const r = trackRemediation({ findings, prior: null, sessionId: '20250301_140000', now: NOW });
    expect(r.remediation.map((e) => [e.status, e.first_seen, e.prior_status])).toEqual(
      Array(4).fill(['new', '20250301_140000', null]),
    );
    expect(r.remediation_resolved).toEqual([]);
  });

  it('one prior item matches one finding only: a duplicate finding is new', () => {
    const { id: _id, ...withoutId } = findings[1]!;
    const dup = normalizeFindings([findings[1]!, withoutId]);
    const r = trackRemediation({ findings: dup, prior, sessionId: 's', now: NOW });
    expect(r.remediation.map((e) => e.status)).toEqual(['persistent', 'new']);
  });

  it('a finding without a title never matches a prior item by title', () => {
    const untitled = normalizeFindings([{ severity: 'low', host: '10.0.0.8' }]);
    const r = trackRemediation({
      findings: untitled,
      prior: {
        metadata: { session_id: 'p' },
        remediation: [{ severity: 'low', host: '10.0.0.8', status: 'deferred' }],
      },
      sessionId: 's',
      now: NOW,
    });
    expect(r.remediation.map((e) => [e.title, e.status])).toEqual([['f-001', 'new']]);
    expect(r.remediation_resolved.map((e) => e.prior_status)).toEqual(['deferred']);
  });
});

describe('remediation tracking with coverage (findings of record)', () => {
  const fpRedis = findingFingerprint({ rule_id: 'redis-open', host: '10.0.0.5', port: 6379, protocol: 'tcp' });
  const fpSnmp = findingFingerprint({ rule_id: 'snmp-public', host: '10.0.0.5', port: 161, protocol: 'udp' });
  const ssh = findings.slice(0, 1);
  const track = (priorDoc: unknown, coverage = looked('10.0.0.5')) =>
    trackRemediation({ findings: ssh, prior: priorDoc, sessionId: '20250301_140000', now: NOW, coverage });

  it('an item on a host that did not answer is not checked: kept open as it was, exception and disposition included', () => {
    const r = trackRemediation({
      findings,
      prior,
      sessionId: '20250301_140000',
      now: NOW,
      coverage: looked('10.0.0.5', '10.0.0.6', '10.0.0.8', '10.0.0.9'),
    });
    expect(r.remediation_resolved).toEqual([]);
    expect(r.remediation_not_checked).toEqual([
      {
        title: 'RDP exposed',
        severity: 'high',
        fingerprint: fpRdp,
        host: '10.0.0.7',
        status: 'persistent',
        status_changed: '2025-02-15T14:10:00.000Z',
        note: 'firewall change pending',
        first_seen: '20250208_140000',
        prior_status: 'persistent',
        exception_status: 'accepted',
        exception_reason: 'segmented VLAN',
        exception_approver: 'ciso@example.test',
        exception_approved_at: '2025-02-10T09:00:00.000Z',
        exception_expiry: '2025-12-31',
        last_seen: '20250222_140000',
      },
    ]);
  });

  it('an item whose port was not scanned is not checked; one whose port was scanned is resolved', () => {
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      remediation: [
        { title: 'Redis open', fingerprint: fpRedis, host: '10.0.0.5', port: 6379, protocol: 'tcp', status: 'new' },
        { title: 'SNMP public', fingerprint: fpSnmp, host: '10.0.0.5', port: 161, protocol: 'udp', status: 'new' },
      ],
    };
    const quick = sessionCoverage({
      coverage: coverageBlock({ hosts: ['10.0.0.5'], ports: { tcp: [[21, 23]], udp: [[161, 161]] } }),
    });
    const r = track(priorDoc, quick);
    expect(r.remediation_resolved.map((e) => [e.title, e.port, e.protocol])).toEqual([['SNMP public', 161, 'udp']]);
    expect(r.remediation_not_checked.map((e) => [e.title, e.status, e.port])).toEqual([['Redis open', 'new', 6379]]);
  });

  it("an older item without a port takes its place from the prior file's finding (by finding_id)", () => {
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      findings: [{ id: 'f-009', host: '10.0.0.5', port: 6379, protocol: 'tcp' }],
      remediation: [
        { title: 'Redis open', fingerprint: fpRedis, host: '10.0.0.5', finding_id: 'f-009', status: 'new' },
      ],
    };
    const sshOnly = sessionCoverage({ coverage: coverageBlock({ hosts: ['10.0.0.5'], ports: { tcp: [[22, 22]] } }) });
    expect(track(priorDoc, sshOnly).remediation_not_checked.map((e) => [e.port, e.protocol])).toEqual([[6379, 'tcp']]);
    expect(track(priorDoc, looked('10.0.0.5')).remediation_resolved.map((e) => e.port)).toEqual([6379]);
  });

  it('a check the scan could not make keeps the items of its rule there open (rule from the prior finding)', () => {
    const fpKey = findingFingerprint({ rule_id: 'ssh-weak-host-key', host: '10.0.0.5', port: 2222, protocol: 'tcp' });
    const fpAlgo = findingFingerprint({
      rule_id: 'ssh-weak-algorithms',
      host: '10.0.0.5',
      port: 2222,
      protocol: 'tcp',
    });
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      findings: [
        { id: 'f-1', rule_id: 'ssh-weak-host-key', host: '10.0.0.5', port: 2222, protocol: 'tcp' },
        { id: 'f-2', rule_id: 'ssh-weak-algorithms', host: '10.0.0.5', port: 2222, protocol: 'tcp' },
      ],
      remediation: [
        {
          title: 'SSH host key under 2048 bits',
          fingerprint: fpKey,
          finding_id: 'f-1',
          host: '10.0.0.5',
          port: 2222,
          protocol: 'tcp',
          status: 'new',
        },
        {
          title: 'SSH algorithms on 2222',
          fingerprint: fpAlgo,
          finding_id: 'f-2',
          host: '10.0.0.5',
          port: 2222,
          protocol: 'tcp',
          status: 'new',
        },
        // No finding to name its rule: any check not made at its place may have been its own.
        { title: 'Old item', host: '10.0.0.5', port: 2222, protocol: 'tcp', status: 'new' },
      ],
    };
    const keyUnmeasured = sessionCoverage({
      coverage: coverageBlock({
        hosts: ['10.0.0.5'],
        ports: { tcp: [[1, 65535]] },
        notChecked: [{ host: '10.0.0.5', port: 2222, protocol: 'tcp', rules: ['ssh-weak-host-key'], reason: 'no key' }],
      }),
    });
    const r = track(priorDoc, keyUnmeasured);
    expect(r.remediation_resolved.map((e) => e.title)).toEqual(['SSH algorithms on 2222']);
    expect(r.remediation_not_checked.map((e) => [e.title, e.status])).toEqual([
      ['SSH host key under 2048 bits', 'new'],
      ['Old item', 'new'],
    ]);
  });

  it("the prior's not-checked items are open items: matched again, resolved when looked at, or still not checked", () => {
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      remediation: [],
      remediation_not_checked: [
        {
          title: 'Weak SSH algorithms',
          fingerprint: fpSsh,
          host: '10.0.0.5',
          port: 22,
          protocol: 'tcp',
          status: 'deferred',
          note: 'vendor fix in Q3',
          first_seen: '20250201_140000',
          last_seen: '20250215_140000',
        },
        {
          title: 'RDP exposed',
          fingerprint: fpRdp,
          host: '10.0.0.7',
          port: 3389,
          protocol: 'tcp',
          status: 'new',
          first_seen: '20250215_140000',
          last_seen: '20250215_140000',
        },
      ],
    };
    const r = track(priorDoc);
    expect(r.remediation[0]).toMatchObject({
      status: 'deferred',
      note: 'vendor fix in Q3',
      first_seen: '20250201_140000',
    });
    // Still unseen: its last sighting stays the one before the prior session.
    expect(r.remediation_not_checked).toMatchObject([{ title: 'RDP exposed', last_seen: '20250215_140000' }]);
    expect(track(priorDoc, looked('10.0.0.5', '10.0.0.7')).remediation_resolved.map((e) => e.title)).toEqual([
      'RDP exposed',
    ]);
  });

  it('a resolved item seen again is reopened: persistent, reopened_at the scan end, first_seen and note kept', () => {
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      remediation: [],
      remediation_resolved: [
        {
          title: 'Weak SSH algorithms',
          fingerprint: fpSsh,
          host: '10.0.0.5',
          status: 'resolved',
          note: 'fixed by OPS-12',
          first_seen: '20250201_140000',
          prior_status: 'in_progress',
        },
      ],
    };
    const r = track(priorDoc);
    expect(r.remediation[0]).toMatchObject({
      status: 'persistent',
      prior_status: 'resolved',
      status_changed: NOW.toISOString(),
      reopened_at: NOW.toISOString(),
      first_seen: '20250201_140000',
      note: 'fixed by OPS-12',
    });
    expect(r.remediation_resolved).toEqual([]);
  });

  it('a false-positive disposition travels with its item (open, resolved or not checked)', () => {
    const fp = {
      disposition: 'false_positive',
      disposition_reason: 'banner only, patched by the vendor',
      disposition_by: 'analyst@example.test',
      disposition_at: '2025-02-24T10:00:00.000Z',
    };
    const priorDoc = {
      metadata: { session_id: '20250222_140000' },
      remediation: [
        { title: 'Weak SSH algorithms', fingerprint: fpSsh, host: '10.0.0.5', status: 'new', ...fp },
        { title: 'RDP exposed', fingerprint: fpRdp, host: '10.0.0.7', port: 3389, status: 'new', ...fp },
      ],
    };
    const r = track(priorDoc);
    expect(r.remediation[0]).toMatchObject({ status: 'persistent', ...fp });
    expect(r.remediation_not_checked[0]).toMatchObject(fp);
    expect(track(priorDoc, looked('10.0.0.5', '10.0.0.7')).remediation_resolved[0]).toMatchObject(fp);
  });

  it('without a coverage the hosts of the findings count as looked at, every port (older callers)', () => {
    const r = trackRemediation({ findings, prior, sessionId: '20250301_140000', now: NOW });
    // 10.0.0.7 is named by no finding: its RDP item is not checked.
    expect(r.remediation_not_checked.map((e) => e.title)).toEqual(['RDP exposed']);
  });
});
