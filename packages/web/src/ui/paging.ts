/**
 * Client-side pages of a list the portal answers in full (licenses, users, webhooks, audit
 * events, delivery logs, groups): every long list is shown a page at a time.
 */

export const PAGE_SIZE = 20;

export interface Page<T> {
  items: T[];
  /** 1-based, clamped to the pages there are. */
  page: number;
  pages: number;
  total: number;
  /** 1-based positions of the first and last item shown; 0 and 0 when empty. */
  from: number;
  to: number;
}

export function pageOf<T>(list: readonly T[], page: number, size = PAGE_SIZE): Page<T> {
  const total = list.length;
  const pages = Math.max(1, Math.ceil(total / size));
  const current = Math.min(Math.max(1, Math.floor(Number.isFinite(page) ? page : 1)), pages);
  const start = (current - 1) * size;
  const items = list.slice(start, start + size);
  return { items, page: current, pages, total, from: items.length ? start + 1 : 0, to: start + items.length };
}

/** `21–40 of 57`, or `none` for an empty list. */
export const pageLabel = (p: Page<unknown>): string => (p.total === 0 ? 'none' : `${p.from}–${p.to} of ${p.total}`);
