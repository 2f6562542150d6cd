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

describe('remediation tracking', () => {
  const { remediation, remediation_resolved } = trackRemediation({
    findings,
    prior,
    sessionId: '20250301_140000',
    now: NOW,
  });

  it('a finding seen in the prior session (by fingerprint) is carried over: first_seen, status, note and status_changed', () => {
    expect(remediation[0]).toEqual({
      title: 'Weak SSH algorithms',
      severity: 'medium',
      finding_id: 'f-001',
      fingerprint: fpSsh,
      host: '10.0.0.5',
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
      status: 'new',
      status_changed: NOW.toISOString(),
      note: '',
      first_seen: '20250301_140000',
      prior_status: null,
    });
  });

  it('a prior item no longer detected goes to remediation_resolved, keeping its exception fields', () => {
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
    const dup = normalizeFindings([findings[1]!, { ...findings[1]!, id: undefined }]);
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
