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
