import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Page, pageLabel, pageOf } from './paging.ts';

/** Previous/Next for a list shown a page at a time; nothing when one page holds it all. */
export function Pager({ page, label, onPage }: { page: Page<unknown>; label: string; onPage: (n: number) => void }) {
  if (page.pages <= 1) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" class="button-quiet" disabled={page.page <= 1} onClick={() => onPage(page.page - 1)}>
        Previous
      </button>
      <span>
        {pageLabel(page)} (page {page.page} of {page.pages})
      </span>
      <button
        type="button"
        class="button-quiet"
        disabled={page.page >= page.pages}
        onClick={() => onPage(page.page + 1)}
      >
        Next
      </button>
    </nav>
  );
}

/** Pages of a list already loaded: the visible page, its controls, and a way back to the first page. */
export function usePages<T>(items: readonly T[], label: string, size?: number) {
  const [pageNo, setPageNo] = useState(1);
  const page = pageOf(items, pageNo, size);
  return {
    page,
    first: () => setPageNo(1),
    controls: <Pager page={page} label={label} onPage={setPageNo} />,
  };
}

/**
 * Previous/Next over the portal's forward-only cursor: the caller keeps the cursors it came
 * through. The buttons show only when there is another page; `children` (e.g. a rows-per-page
 * choice) always show.
 */
export function CursorPager(props: {
  label: string;
  /** Where the list stands, e.g. `Page 2`. */
  position?: string;
  hasPrevious: boolean;
  hasNext: boolean;
  onPrevious: () => void;
  onNext: () => void;
  children?: ComponentChildren;
}) {
  const paged = props.hasPrevious || props.hasNext;
  if (!paged && props.children === undefined) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      {paged && (
        <button type="button" class="button-quiet" disabled={!props.hasPrevious} onClick={props.onPrevious}>
          Previous
        </button>
      )}
      {paged && props.position !== undefined && <span>{props.position}</span>}
      {paged && (
        <button type="button" class="button-quiet" disabled={!props.hasNext} onClick={props.onNext}>
          Next
        </button>
      )}
      {props.children}
    </nav>
  );
}

/** The "Rows per page" choice beside a CursorPager. */
export function RowsPerPage(props: { sizes: readonly number[]; value: number; onChange: (size: number) => void }) {
  return (
    <label class="inline">
      Rows per page
      <select value={String(props.value)} onChange={(e) => props.onChange(Number(e.currentTarget.value))}>
        {props.sizes.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}
