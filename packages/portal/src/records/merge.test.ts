import { DEFAULT_DUE_DAYS, sessionCoverage } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { evidenceOf } from './evidence.ts';
import { type MergeSession, mergeUpload } from './merge.ts';
import type { RecordRow } from './model.ts';

/** The merge of an upload into the findings of record, as pure rules (docs/findings-of-record.md#merge). */

const finding = (rule: string, host: string, port: number, extra: Record<string, unknown> = {}) => ({
  id: `${rule}-${port}`,
  rule_id: rule,
  title: rule,
  severity: 'high',
  host,
  port,
  protocol: 'tcp',
  ...extra,
});
const doc = (
  findings: Record<string, unknown>[],
  coverage?: { hosts: string[]; tcp: string },
  remediation?: unknown[],
) => ({
  findings,
  ...(remediation === undefined ? {} : { remediation }),
  ...(coverage === undefined ? {} : { coverage: { hosts: coverage.hosts, ports: { tcp: coverage.tcp } } }),
});
const session = (id: string, d: unknown, over: Partial<MergeSession> = {}): MergeSession => ({
  sessionId: id,
  scannedAt: new Date(`${id.slice(0, 4)}-${id.slice(4, 6)}-${id.slice(6, 8)}T12:00:00Z`),
  now: new Date('2026-06-01T00:00:00Z'),
  coverage: sessionCoverage(d),
  uploader: { actor: 'license:lic_biz', mayDecide: true },
  dueDays: DEFAULT_DUE_DAYS,
  ...over,
});
const merge = (existing: RecordRow[], d: unknown, s: MergeSession) =>
  mergeUpload('acme', 't', new Map(existing.map((r) => [r.fingerprint, r])), evidenceOf(d), s);

const A = finding('ftp-anonymous', '10.0.0.1', 21);
const B = finding('telnet-open', '10.0.0.1', 23);
const C = finding('database-exposed', '10.0.0.2', 3306);
const ALL = { hosts: ['10.0.0.1', '10.0.0.2'], tcp: '1-65535' };

function firstScan(): RecordRow[] {
  const d = doc([A, B, C], ALL);
  return merge([], d, session('20260101_000000', d)).rows;
}

describe('mergeUpload', () => {
  it('a first scan makes new records; the next sees them again as persistent', () => {
    const first = firstScan();
    expect(first.map((r) => [r.title, r.status, r.first_seen])).toEqual([
      ['ftp-anonymous', 'new', '20260101_000000'],
      ['telnet-open', 'new', '20260101_000000'],
      ['database-exposed', 'new', '20260101_000000'],
    ]);
    const d = doc([A, B, C], ALL);
    const next = merge(first, d, session('20260102_000000', d));
    expect(next.counts).toEqual({ new: 0, persistent: 3, reopened: 0, resolved: 0, not_checked: 0 });
    expect(next.rows.map((r) => [r.status, r.seen_count, r.seen_in])).toEqual(
      Array(3).fill(['persistent', 2, ['20260102_000000', '20260101_000000']]),
    );
  });

  it('resolves only what the session looked at; the rest is not checked and keeps its decisions', () => {
    const first = firstScan().map((r) =>
      r.title === 'telnet-open' ? { ...r, status: 'in_progress', status_source: 'person' } : r,
    );
    // Looked at 10.0.0.1 port 21 only: FTP gone is resolved; telnet (port 23) and MySQL (another host) not checked.
    const d = doc([], { hosts: ['10.0.0.1'], tcp: '21' });
    const m = merge(first, d, session('20260102_000000', d));
    expect(m.counts).toEqual({ new: 0, persistent: 0, reopened: 0, resolved: 1, not_checked: 2 });
    const byTitle = new Map(m.rows.map((r) => [r.title, r]));
    expect(byTitle.get('ftp-anonymous')).toMatchObject({ status: 'resolved', resolved_in: '20260102_000000' });
    expect(byTitle.get('telnet-open')).toMatchObject({ status: 'in_progress', not_checked_in: '20260102_000000' });
    expect(byTitle.get('database-exposed')).toMatchObject({ status: 'new', not_checked_in: '20260102_000000' });
    expect(m.changed.map((c) => [c.before.status, c.after.status])).toEqual([['new', 'resolved']]);
  });

  it('a check the session could not make at a place keeps that rule’s records there open, and only those', () => {
    // Two rules on 10.0.0.1:21; the check of ftp-anonymous there was not made (e.g. a script cut short).
    const cleartext = finding('ftp-cleartext', '10.0.0.1', 21);
    const d0 = doc([A, cleartext, B, C], ALL);
    const first = merge([], d0, session('20260101_000000', d0)).rows;
    const notChecked = [{ host: '10.0.0.1', port: 21, protocol: 'tcp', rules: ['ftp-anonymous'], reason: 'cut short' }];
    const d = { findings: [], coverage: { hosts: ALL.hosts, ports: { tcp: ALL.tcp }, not_checked: notChecked } };
    const m = merge(first, d, session('20260102_000000', d));
    expect(m.counts).toEqual({ new: 0, persistent: 0, reopened: 0, resolved: 3, not_checked: 1 });
    const byTitle = new Map(m.rows.map((r) => [r.title, r]));
    expect(byTitle.get('ftp-anonymous')).toMatchObject({ status: 'new', not_checked_in: '20260102_000000' });
    expect(byTitle.get('ftp-cleartext')).toMatchObject({ status: 'resolved', resolved_in: '20260102_000000' });
    expect(byTitle.get('telnet-open')).toMatchObject({ status: 'resolved', resolved_in: '20260102_000000' });
    expect(byTitle.get('database-exposed')).toMatchObject({ status: 'resolved', resolved_in: '20260102_000000' });
    // A record whose rule is not known stays open wherever a check was not made.
    const unknown = first.map((r) => (r.title === 'ftp-cleartext' ? { ...r, rule_id: null } : r));
    const m2 = merge(unknown, d, session('20260102_000000', d));
    expect(m2.rows.filter((r) => r.status !== 'resolved').map((r) => r.title)).toEqual([
      'ftp-anonymous',
      'ftp-cleartext',
    ]);
  });

  it('a late upload’s new finding is not resolved by the later scan that could not make its check', () => {
    const later = firstScan();
    const early = doc([finding('http-no-tls', '10.0.0.1', 80)], ALL);
    const latestDoc = {
      findings: [],
      coverage: {
        hosts: ALL.hosts,
        ports: { tcp: ALL.tcp },
        not_checked: [{ host: '10.0.0.1', port: 80, rules: ['http-no-tls'] }],
      },
    };
    const latest = {
      sessionId: '20260101_000000',
      scannedAt: new Date('2026-01-01T12:00:00Z'),
      coverage: sessionCoverage(latestDoc),
    };
    const m = merge(later, early, session('20251231_000000', early, { latest }));
    expect(m.rows.find((r) => r.title === 'http-no-tls')).toMatchObject({ status: 'new', resolved_in: null });
  });

  it('a finding seen again after it was resolved is reopened, its history and note kept, not new', () => {
    const resolved = firstScan().map((r) =>
      r.title === 'ftp-anonymous'
        ? { ...r, status: 'resolved', note: 'closed', resolved_at: new Date('2026-01-01T13:00:00Z') }
        : r,
    );
    const d = doc([A, B, C], ALL);
    const m = merge(resolved, d, session('20260103_000000', d));
    const ftp = m.rows.find((r) => r.title === 'ftp-anonymous')!;
    expect(ftp).toMatchObject({
      status: 'persistent',
      note: 'closed',
      first_seen: '20260101_000000',
      prior_status: 'resolved',
    });
    expect(ftp.reopened_at).toEqual(new Date('2026-01-03T12:00:00Z'));
    expect(m.counts.reopened).toBe(1);
    expect(m.history.find((h) => h.fingerprint === ftp.fingerprint)).toMatchObject({
      field: 'status',
      from_value: 'resolved',
      to_value: 'persistent',
      detail: 'reopened: seen again',
      source: 'scan',
    });
  });

  it('a late upload of an earlier scan changes no status; a new finding it brings is resolved by the later scan that looked', () => {
    const later = firstScan();
    const early = doc([A, finding('http-no-tls', '10.0.0.1', 80)], ALL);
    const latest = {
      sessionId: '20260101_000000',
      scannedAt: new Date('2026-01-01T12:00:00Z'),
      coverage: sessionCoverage(doc([], ALL)),
    };
    const m = merge(later, early, session('20251231_000000', early, { latest }));
    const byTitle = new Map(m.rows.map((r) => [r.title, r]));
    expect(byTitle.get('ftp-anonymous')).toMatchObject({ status: 'new', first_seen: '20251231_000000' });
    // Records the late session did not report are left as the later session left them.
    expect(byTitle.has('telnet-open')).toBe(false);
    expect(byTitle.get('http-no-tls')).toMatchObject({ status: 'resolved', resolved_in: '20260101_000000' });
  });

  it('the key of a finding is computed, never taken from the file: a forged fingerprint changes nothing', () => {
    const first = firstScan();
    const telnet = first.find((r) => r.title === 'telnet-open')!;
    // A critical finding on another port naming telnet's fingerprint is its own finding.
    const forged = finding('smb-signing', '10.0.0.1', 445, { fingerprint: telnet.fingerprint, severity: 'critical' });
    const d = doc([A, B, C, forged], ALL);
    const m = merge(first, d, session('20260102_000000', d));
    expect(m.rows.filter((r) => r.fingerprint === telnet.fingerprint).map((r) => r.title)).toEqual(['telnet-open']);
    expect(m.counts.new).toBe(1);
  });
});

describe('claims of an upload', () => {
  const claimDoc = (approver: string) =>
    doc([A], ALL, [
      {
        title: A.title,
        finding_id: A.id,
        status: 'deferred',
        note: 'from the file',
        exception_status: 'accepted',
        exception_reason: 'isolated',
        exception_approver: approver,
        exception_approved_at: '2026-01-01T00:00:00Z',
        exception_expiry: '2027-01-01',
      },
    ]);

  it('a key with remediation:update sets them, as itself, the named approver apart', () => {
    const d = claimDoc('ciso@example.test');
    const [r] = merge([], d, session('20260101_000000', d)).rows;
    expect(r).toMatchObject({
      status: 'deferred',
      status_source: 'upload',
      note: 'from the file',
      exception_reason: 'isolated',
      exception_approver: 'license:lic_biz',
      exception_claimed_approver: 'ciso@example.test',
      exception_source: 'upload',
    });
  });

  it('a key without it changes nothing and leaves the claim in the history once', () => {
    const d = claimDoc('admin@example.test');
    const s = session('20260101_000000', d, { uploader: { actor: 'license:lic_pro', mayDecide: false } });
    const m = merge([], d, s);
    const r = m.rows[0]!;
    expect(r).toMatchObject({ status: 'new', note: '', exception_reason: null, exception_approver: null });
    expect(m.history.map((h) => [h.field, h.source, h.to_value?.split(':')[0], h.detail])).toEqual([
      ['claim', 'upload', 'status', 'not applied: the key that uploaded it has no remediation:update permission'],
      ['claim', 'upload', 'note', 'not applied: the key that uploaded it has no remediation:update permission'],
      ['claim', 'upload', 'exception', 'not applied: the key that uploaded it has no remediation:update permission'],
    ]);
    // The same file again: the scan's own change only, no new claim line.
    const again = merge([r], d, { ...s, sessionId: '20260102_000000', scannedAt: new Date('2026-01-02T12:00:00Z') });
    expect(again.history.map((h) => [h.field, h.from_value, h.to_value])).toEqual([['status', 'new', 'persistent']]);
  });

  it('a person’s decision is never overridden by a file; among uploads the newer wins', () => {
    const base = firstScan().find((r) => r.title === 'ftp-anonymous')!;
    const person = {
      ...base,
      note: 'decided',
      note_source: 'person',
      note_by: 'admin@test',
      note_at: new Date('2026-01-05T00:00:00Z'),
    };
    const d = claimDoc('x@y');
    const m = merge([person], d, session('20260106_000000', d));
    expect(m.rows[0]).toMatchObject({ note: 'decided', note_source: 'person' });
    expect(m.history.find((h) => h.field === 'claim' && h.to_value?.startsWith('note'))?.detail).toBe(
      'not applied: decided in the portal by admin@test',
    );
    const byKey = { ...person, note_source: 'upload', note_by: 'license:other' };
    expect(merge([byKey], d, session('20260106_000000', d)).rows[0]?.note).toBe('from the file');
  });
});
