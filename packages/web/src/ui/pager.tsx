import { useState } from 'preact/hooks';

/** Client-side pages of a list already loaded: the visible slice and the controls. */
export function usePages<T>(items: readonly T[], size: number) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(page, pages - 1);
  return {
    slice: items.slice(current * size, current * size + size),
    controls: <Pager page={current} pages={pages} onPage={setPage} total={items.length} />,
  };
}

function Pager(props: { page: number; pages: number; total: number; onPage: (p: number) => void }) {
  if (props.pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        class="button-quiet"
        disabled={props.page === 0}
        onClick={() => props.onPage(props.page - 1)}
      >
        Previous
      </button>
      <span>
        Page {props.page + 1} of {props.pages} ({props.total})
      </span>
      <button
        type="button"
        class="button-quiet"
        disabled={props.page >= props.pages - 1}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next
      </button>
    </nav>
  );
}
