import { SESSION_SORTS, type SessionSort } from '@svc/protocol';

/** The sessions list's orders, each named for what comes first ("ascending" next to "Sort by" said nothing). */

export const SORT_LABELS: Record<SessionSort, string> = {
  uploaded_at: 'Uploaded',
  scanned_at: 'Scanned',
  target: 'Target',
  client: 'Client',
  risk_score: 'Risk',
  status: 'Status',
};

/** Text sorts A to Z and status in review order first; times and risk highest first. */
export const FIRST_ORDER: Record<SessionSort, 'asc' | 'desc'> = {
  uploaded_at: 'desc',
  scanned_at: 'desc',
  target: 'asc',
  client: 'asc',
  risk_score: 'desc',
  status: 'asc',
};

/** What each direction puts first, per column: `asc` and `desc` in words. */
const FIRST: Record<SessionSort, { asc: string; desc: string }> = {
  uploaded_at: { asc: 'oldest first', desc: 'newest first' },
  scanned_at: { asc: 'oldest first', desc: 'newest first' },
  target: { asc: 'A to Z', desc: 'Z to A' },
  client: { asc: 'A to Z', desc: 'Z to A' },
  risk_score: { asc: 'lowest first', desc: 'highest first' },
  status: { asc: 'new first', desc: 'archived first' },
};

/** `Risk: highest first`. */
export const sortLabel = (sort: SessionSort, order: 'asc' | 'desc'): string =>
  `${SORT_LABELS[sort]}: ${FIRST[sort][order]}`;

/** The "Sort by" choices: every column in both directions, its usual one first; the value is `sort:order`. */
export const SORT_CHOICES: readonly { value: string; sort: SessionSort; order: 'asc' | 'desc'; label: string }[] =
  SESSION_SORTS.flatMap((sort) => {
    const first = FIRST_ORDER[sort];
    const other: 'asc' | 'desc' = first === 'asc' ? 'desc' : 'asc';
    return [first, other].map((order: 'asc' | 'desc') => ({
      value: `${sort}:${order}`,
      sort,
      order,
      label: sortLabel(sort, order),
    }));
  });
