import { describe, expect, it } from 'vitest';
import {
  applyRemediationUpdates,
  parseRemediationItems,
  RemediationDocumentError,
  RemediationInputError,
} from './remediation.ts';
import type { RemediationChange } from './results.ts';

const NOW = new Date('2025-03-04T05:06:07.089Z');
const T = NOW.toISOString();

function sample() {
  return {
    metadata: { session_id: '20250304_050607', client_id: 'acme' },
    findings: [{ id: 1 }],
    remediation: [
      {
        title: 'A',
        severity: 'critical',
        status: 'new',
        status_changed: '2025-01-01T00:00:00.000Z',
        note: '',
        first_seen: '20250101_000000',
      },
      {
        title: 'B',
        severity: 'high',
        status: 'persistent',
        status_changed: '2025-01-01T00:00:00.000Z',
        exception_status: 'accepted',
      },
      { title: 'C', severity: 'low', status: 'in_progress' },
    ],
    remediation_resolved: [
      { title: 'R', severity: 'medium', status: 'resolved', status_changed: '2025-02-01T00:00:00.000Z' },
    ],
  };
}

const apply = (doc: unknown, items: RemediationChange[]) => applyRemediationUpdates(doc, items, NOW);

describe('applyRemediationUpdates', () => {
  it('moves an open item to the end of .remediation_resolved[] on resolved, keeping its other fields', () => {
    const input = sample();
    const r = apply(input, [{ title: 'A', status: 'resolved' }]);
    expect(r.changed).toBe(1);
    expect(r.modified).toBe(true);
    expect(r.unmatched).toEqual([]);
    expect(r.doc['remediation']).toEqual([input.remediation[1], input.remediation[2]]);
    expect(r.doc['remediation_resolved']).toEqual([
      input.remediation_resolved[0],
      {
        title: 'A',
        severity: 'critical',
        status: 'resolved',
        status_changed: T,
        note: '',
        first_seen: '20250101_000000',
      },
    ]);
    expect(r.summary).toEqual({
      total: 4,
      resolved_count: 2,
      by_status: { new: 0, persistent: 1, in_progress: 1, resolved: 2, deferred: 0 },
      by_severity: { critical: 1, high: 1, medium: 1, low: 1, info: 0 },
    });
    // Untouched parts are kept as they were.
    expect(r.doc['metadata']).toBe(input.metadata);
    expect(r.doc['findings']).toBe(input.findings);
  });

  it('moves a resolved item back to the end of .remediation[] for any other status', () => {
    for (const status of ['new', 'persistent', 'in_progress', 'deferred'] as const) {
      const r = apply(sample(), [{ title: 'R', status }]);
      expect(r.changed, status).toBe(1);
      expect(r.doc['remediation_resolved'], status).toEqual([]);
      expect(
        (r.doc['remediation'] as unknown[]).map((e: any) => e.title),
        status,
      ).toEqual(['A', 'B', 'C', 'R']);
      expect((r.doc['remediation'] as unknown[])[3], status).toEqual({
        title: 'R',
        severity: 'medium',
        status,
        status_changed: T,
      });
      // Before: new A, persistent B, in_progress C; R joins one of them.
      expect(r.summary.by_status[status], status).toBe({ new: 2, persistent: 2, in_progress: 2, deferred: 1 }[status]);
      expect(r.summary.resolved_count, status).toBe(0);
    }
  });

  it('updates an open item in place with status and status_changed', () => {
    const r = apply(sample(), [{ title: 'B', status: 'deferred' }]);
    expect(r.changed).toBe(1);
    expect(r.doc['remediation']).toEqual([
      sample().remediation[0],
      { title: 'B', severity: 'high', status: 'deferred', status_changed: T, exception_status: 'accepted' },
      sample().remediation[2],
    ]);
    // The resolved array was not touched, so it is the input's own.
    expect(r.doc['remediation_resolved']).toEqual(sample().remediation_resolved);
    expect(r.summary.by_status).toEqual({ new: 1, persistent: 0, in_progress: 1, resolved: 1, deferred: 1 });
  });

  it('the same status again is no change, and leaves the document alone', () => {
    const input = sample();
    const r = apply(input, [
      { title: 'A', status: 'new' },
      { title: 'R', status: 'resolved' },
      { title: 'C', status: 'in_progress' },
    ]);
    expect(r.changed).toBe(0);
    expect(r.modified).toBe(false);
    expect(r.doc['remediation']).toBe(input.remediation);
    expect(r.doc['remediation_resolved']).toBe(input.remediation_resolved);
  });

  it('reports unknown titles once each, in request order, and changes nothing for them', () => {
    const r = apply(sample(), [
      { title: 'zzz', status: 'resolved' },
      { title: 'A', status: 'deferred' },
      { title: 'yyy', status: 'new' },
      { title: 'zzz', status: 'new' },
      { title: 'a', status: 'new' },
    ]);
    expect(r.changed).toBe(1);
    expect(r.unmatched).toEqual(['zzz', 'yyy', 'a']);
  });

  it('applies items in order: a title listed twice ends with its last status, each step counted', () => {
    const r = apply(sample(), [
      { title: 'A', status: 'resolved' },
      { title: 'A', status: 'in_progress' },
    ]);
    expect(r.changed).toBe(2);
    expect((r.doc['remediation'] as any[]).map((e) => [e.title, e.status])).toEqual([
      ['B', 'persistent'],
      ['C', 'in_progress'],
      ['A', 'in_progress'],
    ]);
    expect(r.doc['remediation_resolved']).toEqual(sample().remediation_resolved);
  });

  it('updates every entry that carries the title, in either array', () => {
    const doc = {
      remediation: [{ title: 'X', status: 'new' }, { title: 'X', status: 'deferred' }, { title: 'Y' }],
      remediation_resolved: [{ title: 'X', status: 'resolved' }],
    };
    const r = apply(doc, [{ title: 'X', status: 'deferred' }]);
    // The first open entry changes, the second already has it, the resolved one moves back.
    expect(r.changed).toBe(2);
    expect(r.doc['remediation']).toEqual([
      { title: 'X', status: 'deferred', status_changed: T },
      { title: 'X', status: 'deferred' },
      { title: 'Y' },
      { title: 'X', status: 'deferred', status_changed: T },
    ]);
    expect(r.doc['remediation_resolved']).toEqual([]);
  });

  it('counts a missing or unknown status as new, as remediation_summary does', () => {
    const doc = { remediation: [{ title: 'X' }, { title: 'Y', status: 'bogus' }] };
    expect(
      apply(doc, [
        { title: 'X', status: 'new' },
        { title: 'Y', status: 'new' },
      ]).changed,
    ).toBe(0);
    const r = apply(doc, [{ title: 'Y', status: 'persistent' }]);
    expect(r.changed).toBe(1);
    expect(r.doc['remediation']).toEqual([{ title: 'X' }, { title: 'Y', status: 'persistent', status_changed: T }]);
  });

  it('an open entry that says resolved is moved by a resolved update', () => {
    const r = apply({ remediation: [{ title: 'X', status: 'resolved' }] }, [{ title: 'X', status: 'resolved' }]);
    expect(r.changed).toBe(1);
    expect(r.doc['remediation']).toEqual([]);
    expect(r.doc['remediation_resolved']).toEqual([{ title: 'X', status: 'resolved', status_changed: T }]);
  });

  it('creates .remediation_resolved[] only when an entry moves into it', () => {
    const untouched = apply({ remediation: [{ title: 'X', status: 'new' }] }, [{ title: 'X', status: 'deferred' }]);
    expect(Object.keys(untouched.doc)).toEqual(['remediation']);
    const moved = apply({ remediation: [{ title: 'X', status: 'new' }] }, [{ title: 'X', status: 'resolved' }]);
    expect(moved.doc).toEqual({
      remediation: [],
      remediation_resolved: [{ title: 'X', status: 'resolved', status_changed: T }],
    });
    const back = apply({ remediation_resolved: [{ title: 'X' }] }, [{ title: 'X', status: 'new' }]);
    expect(back.doc).toEqual({
      remediation_resolved: [],
      remediation: [{ title: 'X', status: 'new', status_changed: T }],
    });
  });

  it('sets a note without counting it as a change; a status change and a note together count once', () => {
    const noteOnly = apply(sample(), [{ title: 'C', status: 'in_progress', note: 'waiting for vendor' }]);
    expect(noteOnly.changed).toBe(0);
    expect(noteOnly.notesUpdated).toBe(1);
    expect(noteOnly.modified).toBe(true);
    expect((noteOnly.doc['remediation'] as any[])[2]).toEqual({
      title: 'C',
      severity: 'low',
      status: 'in_progress',
      note: 'waiting for vendor',
    });
    const both = apply(sample(), [{ title: 'A', status: 'resolved', note: 'patched' }]);
    expect(both.changed).toBe(1);
    expect(both.notesUpdated).toBe(1);
    expect((both.doc['remediation_resolved'] as any[])[1]).toMatchObject({
      title: 'A',
      status: 'resolved',
      status_changed: T,
      note: 'patched',
    });
    const sameNote = apply(sample(), [{ title: 'A', status: 'new', note: '' }]);
    expect(sameNote.modified).toBe(false);
  });

  it('never mutates its input', () => {
    const input = sample();
    const before = JSON.stringify(input);
    apply(input, [
      { title: 'A', status: 'resolved' },
      { title: 'B', status: 'new', note: 'x' },
      { title: 'R', status: 'deferred' },
    ]);
    expect(JSON.stringify(input)).toBe(before);
  });

  it('skips entries that are not objects and keeps them', () => {
    const r = apply({ remediation: [null, 'A', { title: 'A', status: 'new' }, 7] }, [
      { title: 'A', status: 'in_progress' },
    ]);
    expect(r.changed).toBe(1);
    expect(r.doc['remediation']).toEqual([null, 'A', { title: 'A', status: 'in_progress', status_changed: T }, 7]);
    expect(r.summary.total).toBe(1);
  });

  it('refuses a document that is not a JSON object', () => {
    for (const doc of [null, [], 'x', 3])
      expect(() => apply(doc, [{ title: 'A', status: 'new' }])).toThrow(RemediationDocumentError);
  });
});

describe('parseRemediationItems', () => {
  const TODAY = '2025-03-04';
  it('accepts the five statuses and keeps a note only when given', () => {
    const items = ['new', 'persistent', 'in_progress', 'resolved', 'deferred'].map((status, i) => ({
      title: `t${i}`,
      status,
    }));
    expect(parseRemediationItems(items, TODAY)).toEqual(items);
    expect(parseRemediationItems([{ title: 't', status: 'new', note: 'n' }], TODAY)).toEqual([
      { title: 't', status: 'new', note: 'n' },
    ]);
  });

  it('names the bad status and its item', () => {
    expect(() =>
      parseRemediationItems(
        [
          { title: 'ok', status: 'new' },
          { title: 'Bad one', status: 'fixed' },
        ],
        TODAY,
      ),
    ).toThrow(
      new RemediationInputError(
        'Invalid status "fixed" for items[1] ("Bad one"): must be one of new, persistent, in_progress, resolved, deferred',
      ),
    );
    for (const status of ['', 'Resolved', 'RESOLVED', ' new', 'open', 'in-progress'])
      expect(() => parseRemediationItems([{ title: 't', status }], TODAY)).toThrow(RemediationInputError);
  });
});
