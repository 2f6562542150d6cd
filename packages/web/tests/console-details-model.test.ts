import { describe, expect, it } from 'vitest';
import { ApiError, isTransient } from '../src/api/errors.ts';
import { SORT_CHOICES, sortLabel } from '../src/sessions/list-sort.ts';
import { countOf, formatCount } from '../src/ui/format.ts';

/** The console's rules behind its smaller details, without a browser. */

describe('formatCount, the console count format', () => {
  it('groups thousands whatever the browser language', () => {
    expect([0, 7, 999, 1000, 10_000, 1_234_567].map(formatCount)).toEqual([
      '0',
      '7',
      '999',
      '1,000',
      '10,000',
      '1,234,567',
    ]);
  });

  it('marks no count with the en dash, and says one or many', () => {
    expect(formatCount(null)).toBe('—');
    expect(formatCount(undefined)).toBe('—');
    expect(countOf(1, 'finding', 'findings')).toBe('1 finding');
    expect(countOf(10_000, 'finding', 'findings')).toBe('10,000 findings');
  });
});

describe('isTransient: which failures the console offers to try again', () => {
  it('a passing failure: unreachable, timeout, throttled, the server, or no answer at all', () => {
    for (const status of [0, 408, 429, 500, 502, 503, 504])
      expect(isTransient(new ApiError(status, 'x', null)), String(status)).toBe(true);
    expect(isTransient(new TypeError('Failed to fetch'))).toBe(true);
  });

  it('an answer that would be the same again: not found, forbidden, bad request, conflict', () => {
    for (const status of [400, 403, 404, 409, 413, 422])
      expect(isTransient(new ApiError(status, 'x', null)), String(status)).toBe(false);
  });
});

describe('the sessions list order, named for what comes first', () => {
  it('names each choice by column and direction, never "ascending"', () => {
    expect(sortLabel('risk_score', 'desc')).toBe('Risk: highest first');
    expect(sortLabel('uploaded_at', 'desc')).toBe('Uploaded: newest first');
    expect(sortLabel('target', 'asc')).toBe('Target: A to Z');
    expect(SORT_CHOICES.map((c) => c.label).filter((l) => /ascending|descending/.test(l))).toEqual([]);
  });

  it('offers every column both ways, its usual direction first, as sort:order', () => {
    expect(SORT_CHOICES).toHaveLength(12);
    expect(SORT_CHOICES[0]).toEqual({
      value: 'uploaded_at:desc',
      sort: 'uploaded_at',
      order: 'desc',
      label: 'Uploaded: newest first',
    });
    expect(SORT_CHOICES.find((c) => c.value === 'status:asc')?.label).toBe('Status: new first');
  });
});
