import type { FindingException, FindingHistoryEntry, TargetView } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { draftQueueBody, matchingTargets, usualPortsOf, usualProfileOf } from '../src/fleet/command-form.ts';
import {
  bulkMessage,
  exceptionText,
  FIRST_VIEW,
  historyText,
  parseDueDays,
  queryOf,
  sourceText,
} from '../src/sessions/findings-model.ts';

/** The console's words and rules for the findings of record (docs/findings-of-record.md) and run_scan's ports. */

const exception = (e: Partial<FindingException>): { exception: FindingException } => ({
  exception: {
    state: 'active',
    reason: 'r',
    approver: 'ann@example.test',
    approved_at: null,
    expiry: '2030-01-31',
    ...e,
  },
});

const entry = (h: Partial<FindingHistoryEntry>): FindingHistoryEntry => ({
  at: '2025-06-08T12:00:00.000Z',
  actor: 'ann@example.test',
  status: null,
  exception: null,
  ...h,
});

describe('where a decision came from', () => {
  it("names a person's approver, and an upload's key without taking the named approver as an approval", () => {
    expect(exceptionText(exception({}))).toBe('accepted until 2030-01-31, by ann@example.test');
    expect(
      exceptionText(exception({ source: 'upload', approver: 'license:lic_1', claimed_approver: 'ciso@example.test' })),
    ).toBe('accepted until 2030-01-31, set by upload (license:lic_1); the file named approver ciso@example.test');
    expect(exceptionText(exception({ source: 'upload', approver: 'license:lic_1', claimed_approver: null }))).toBe(
      'accepted until 2030-01-31, set by upload (license:lic_1)',
    );
    expect(exceptionText(exception({ state: 'expired', source: 'person' }))).toBe(
      'expired until 2030-01-31, by ann@example.test',
    );
    expect(exceptionText({ exception: null })).toBe('none');
    expect(sourceText('person')).toBeNull();
    expect(sourceText('upload')).toBe('set by upload');
  });
});

describe('history lines', () => {
  it('says what changed, from what to what, and where it came from', () => {
    expect(historyText(entry({ field: 'status', from: 'new', to: 'in_progress', source: 'person' }))).toBe(
      'status new → in progress',
    );
    expect(
      historyText(
        entry({ field: 'status', from: 'new', to: 'persistent', source: 'scan', session_id: '20250608_120000' }),
      ),
    ).toBe('status new → persistent (set by the scan), with session 20250608_120000');
    expect(
      historyText(entry({ field: 'exception', from: null, to: 'isolated (until 2030-01-31)', detail: 'accepted' })),
    ).toBe('exception accepted: isolated (until 2030-01-31)');
    expect(historyText(entry({ field: 'exception', from: 'isolated (until 2030-01-31)', to: null }))).toBe(
      'exception withdrawn (was: isolated (until 2030-01-31))',
    );
    expect(historyText(entry({ field: 'disposition', from: null, to: 'false_positive: lab host' }))).toBe(
      'marked as false positive: lab host',
    );
    expect(historyText(entry({ field: 'disposition', from: 'false_positive: lab host', to: null }))).toBe(
      'false positive withdrawn (was: lab host)',
    );
    expect(historyText(entry({ field: 'note', from: null, to: 'patch on Friday' }))).toBe('note: patch on Friday');
  });

  it('shows a claim of an uploaded file as not applied, with why', () => {
    expect(
      historyText(
        entry({
          field: 'claim',
          source: 'upload',
          to: 'status: deferred',
          detail: 'not applied: the key may not change remediation',
          session_id: '20250608_120000',
        }),
      ),
    ).toBe(
      'status: deferred claimed by upload, not applied: the key may not change remediation, with session 20250608_120000',
    );
  });

  it('reads older entries without a field', () => {
    expect(historyText(entry({ status: 'deferred' }))).toBe('status deferred');
    expect(historyText(entry({}))).toBe('note');
  });
});

describe('the findings query', () => {
  it('asks for a change, the findings this scan reported, false positives and overdue ones', () => {
    expect(queryOf(FIRST_VIEW, '')).toMatchObject({ change: undefined, disposition: undefined, overdue: undefined });
    expect(queryOf({ ...FIRST_VIEW, change: 'not_checked' }, '').change).toBe('not_checked');
    expect(queryOf({ ...FIRST_VIEW, change: 'found', overdue: 'true' }, '')).toMatchObject({
      change: 'new,persistent,reopened',
      overdue: 'true',
    });
    expect(queryOf({ ...FIRST_VIEW, disposition: 'false_positive' }, '').disposition).toBe('false_positive');
  });
});

describe('bulk answers', () => {
  it('says what the one request matched and changed, and what was left out', () => {
    const answer = { success: true as const, matched: 3, changed: 2, unmatched: ['f'.repeat(64)] };
    expect(bulkMessage('Status set to deferred', 5, answer, { noFingerprint: 1, resolved: 1 })).toEqual({
      kind: 'ok',
      text: 'Status set to deferred for 5 selected findings: 3 matched, 2 changed. 1 without a fingerprint left unchanged. 1 resolved left without an exception. 1 not found.',
    });
    expect(
      bulkMessage(
        'Marked as false positive',
        1,
        { ...answer, matched: 1, changed: 1, unmatched: [] },
        { noFingerprint: 0 },
      ).text,
    ).toBe('Marked as false positive for 1 selected finding: 1 matched, 1 changed.');
  });
});

describe('due-date settings', () => {
  const draft = { critical: '15', high: '30', medium: '90', low: '180', info: '' };
  it('reads whole days, empty as never due', () => {
    expect(parseDueDays(draft)).toEqual({
      ok: true,
      days: { critical: 15, high: 30, medium: 90, low: 180, info: null },
    });
  });
  it('refuses anything else, naming the severity', () => {
    for (const bad of ['0', '3651', '1.5', '-3', 'ten'])
      expect(parseDueDays({ ...draft, high: bad })).toEqual({
        ok: false,
        message: 'Days for high findings must be a whole number from 1 to 3650, or empty (never due)',
      });
  });
});

describe("run_scan's ports", () => {
  const target = (name: string, coverage: TargetView['coverage']): TargetView => ({
    client_id: 'acme',
    target: name,
    last_session_id: '20250701_090000',
    last_scanned_at: '2025-07-01T09:20:00.000Z',
    coverage,
    open: 0,
    resolved: 0,
  });
  const known = [
    target('10.0.0.0/24', { hosts: [], ports: { tcp: '22,80,443', udp: '161' }, profile: 'quick_recon' }),
    target('web.example.test, 10.0.1.5', { hosts: [], ports: { tcp: '1-1024' }, profile: 'import:nessus' }),
    target('10.0.2.0/24', null),
  ];

  it('offers the known target the typed list names: the same list first, then those sharing an entry', () => {
    expect(matchingTargets(' 10.0.0.0/24 ', known).map((t) => t.target)).toEqual(['10.0.0.0/24']);
    expect(matchingTargets('10.0.1.5,WEB.example.test', known).map((t) => t.target)).toEqual([
      'web.example.test, 10.0.1.5',
    ]);
    expect(matchingTargets('10.0.1.5, 10.0.0.0/24', known).map((t) => t.target)).toEqual([
      '10.0.0.0/24',
      'web.example.test, 10.0.1.5',
    ]);
    expect(matchingTargets('10.9.9.9', known)).toEqual([]);
    expect(matchingTargets('', known)).toEqual([]);
  });

  it('writes the coverage as T:…,U:… and keeps a profile only when run_scan takes it', () => {
    expect(usualPortsOf(known[0]!.coverage)).toBe('T:22,80,443,U:161');
    expect(usualPortsOf(known[1]!.coverage)).toBe('T:1-1024');
    expect(usualPortsOf({ hosts: [], ports: { udp: '53,161' } })).toBe('U:53,161');
    expect(usualPortsOf({ hosts: [], ports: {} })).toBeNull();
    expect(usualPortsOf(null)).toBeNull();
    expect(usualProfileOf(known[0]!.coverage)).toBe('quick_recon');
    expect(usualProfileOf(known[1]!.coverage)).toBeNull();
    expect(usualProfileOf(null)).toBeNull();
  });

  it('checks the ports with the protocol rule before sending', () => {
    const agent = { kind: 'agent' as const, agent_id: 'svcd_0a1b2c3d' };
    expect(draftQueueBody('run_scan', agent, { targets: '10.0.0.1', ports: 'T:22,80,U:161' }, '')).toEqual({
      ok: true,
      body: {
        command_type: 'run_scan',
        agent_id: 'svcd_0a1b2c3d',
        payload: { targets: '10.0.0.1', ports: 'T:22,80,U:161' },
      },
    });
    const refused = draftQueueBody('run_scan', agent, { targets: '10.0.0.1', ports: '22;rm -rf /' }, '');
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : refused.message).toMatch(/^payload\.ports must be a port list/);
  });
});
