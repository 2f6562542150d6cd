import { BULK_MAX_FINDINGS, RECORD_SORTS, RECORDS_PAGE_MAX, type RecordFinding } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import {
  apiFilterOf,
  DEFAULT_PAGE_SIZE,
  FILTER_KEYS,
  fitsOneChange,
  groupsOf,
  hrefOf,
  outcomeText,
  PAGE_SIZES,
  SORT_LABELS,
  viewOf,
} from '../src/portfolio/portfolio-model.ts';

/** The portfolio view's address: the API's own filter names, a round trip without loss. */

const query = (href: string) => Object.fromEntries(new URL(href, 'http://x').searchParams);

describe('the portfolio view in the address', () => {
  it('uses exactly the API filter names and round-trips every filter, the page size and the position', () => {
    expect(FILTER_KEYS).toEqual([
      'client_id',
      'target',
      'severity',
      'status',
      'kev',
      'epss_min',
      'exception',
      'disposition',
      'first_seen_from',
      'first_seen_to',
      'overdue',
      'due_before',
      'host',
      'host_prefix',
    ]);
    const view = viewOf({
      client_id: 'acme,beta',
      target: '10.0.0.0/24',
      severity: 'critical,high',
      status: 'open',
      kev: 'true',
      epss_min: '0.1',
      exception: 'none',
      disposition: 'none',
      first_seen_from: '2025-01-01',
      first_seen_to: '2025-01-31',
      overdue: 'true',
      due_before: '2025-02-01',
      host: 'web-01',
      per_page: '100',
      sort: 'due_date_asc',
      unknown: 'dropped',
    });
    const href = hrefOf(view, { cursor: 'abc', page: 3 });
    expect(
      href.startsWith('/console/findings?client_id=acme%2Cbeta&target=10.0.0.0%2F24&severity=critical%2Chigh'),
    ).toBe(true);
    const back = query(href);
    expect(viewOf(back)).toEqual(view);
    expect(back['cursor']).toBe('abc');
    expect(back['page']).toBe('3');
    expect(back['unknown']).toBeUndefined();
    expect(hrefOf(viewOf({}))).toBe('/console/findings');
    expect(hrefOf(viewOf({ severity: '  ', per_page: '25' }))).toBe('/console/findings');
  });

  it('keeps the order in the address, the default left out, an unknown one read as the default', () => {
    expect(viewOf({ sort: 'epss_desc' }).sort).toBe('epss_desc');
    expect(hrefOf(viewOf({ sort: 'host_asc' }))).toBe('/console/findings?sort=host_asc');
    expect(hrefOf(viewOf({ sort: 'severity' }))).toBe('/console/findings');
    expect(viewOf({ sort: 'newest' }).sort).toBe('severity');
    // Every order the portal offers has a label that says its direction.
    expect(Object.keys(SORT_LABELS)).toEqual([...RECORD_SORTS]);
    expect(SORT_LABELS.severity).toBe('Severity: highest first');
  });

  it('takes only the offered page sizes, none above the portal limit', () => {
    expect(viewOf({ per_page: '250' }).perPage).toBe(250);
    expect(viewOf({ per_page: '7' }).perPage).toBe(DEFAULT_PAGE_SIZE);
    expect(viewOf({ per_page: '100000' }).perPage).toBe(DEFAULT_PAGE_SIZE);
    expect(Math.max(...PAGE_SIZES)).toBeLessThanOrEqual(RECORDS_PAGE_MAX);
  });

  it('asks the portal for first-seen days as instants (the end day inclusive) and EPSS as a number', () => {
    expect(
      apiFilterOf(viewOf({ first_seen_from: '2025-01-01', first_seen_to: '2025-01-31', epss_min: '0.25' })),
    ).toEqual({
      first_seen_from: '2025-01-01T00:00:00.000Z',
      first_seen_to: '2025-02-01T00:00:00.000Z',
      epss_min: 0.25,
    });
    // Not a day or not a number: sent as typed, so the portal's 400 says why.
    expect(apiFilterOf(viewOf({ first_seen_from: 'yesterday', epss_min: 'high' }))).toEqual({
      first_seen_from: 'yesterday',
      epss_min: 'high',
    });
  });
});

describe('bulk changes', () => {
  const row = (client_id: string | null, target: string, fingerprint: string) =>
    ({ client_id, target, fingerprint }) as RecordFinding;

  it('groups chosen rows by client and target, one request each', () => {
    expect(groupsOf([row('a', 't1', '1'), row('b', 't1', '2'), row('a', 't1', '3'), row('a', 't2', '4')])).toEqual([
      { client_id: 'a', target: 't1', fingerprints: ['1', '3'] },
      { client_id: 'b', target: 't1', fingerprints: ['2'] },
      { client_id: 'a', target: 't2', fingerprints: ['4'] },
    ]);
  });

  it('offers "all matching" up to the bulk limit, and says what changed', () => {
    expect(fitsOneChange(0)).toBe(false);
    expect(fitsOneChange(BULK_MAX_FINDINGS)).toBe(true);
    expect(fitsOneChange(BULK_MAX_FINDINGS + 1)).toBe(false);
    expect(outcomeText('Status set to deferred', { matched: 1200, changed: 1000 })).toBe(
      'Status set to deferred: 1,000 findings changed, 200 already so.',
    );
    expect(outcomeText('Note saved', { matched: 1, changed: 1 })).toBe('Note saved: 1 finding changed.');
  });
});
