import type { IndexRow } from './findings-index.ts';

/**
 * Details are stored a page of consecutive ordinals per row (migration 0040 wrote pages of 100:
 * changing this needs a migration), as the text of a JSON object keyed by ordinal: one row and one
 * key entry per hundred findings. The panel reads one page (findingAt).
 */
export const DETAIL_PAGE = 100;

export type DetailPage = { page: number; details: string };

/** Pages of details from rows in ordinal order: `add` returns the pages the rows so far complete, `end` the rest. */
export function detailPages() {
  let page = -1;
  let entries: string[] = [];
  const close = (out: DetailPage[]) => {
    if (entries.length > 0) out.push({ page, details: `{${entries.join(',')}}` });
    entries = [];
  };
  return {
    add(rows: readonly Pick<IndexRow, 'ordinal' | 'detail'>[]): DetailPage[] {
      const out: DetailPage[] = [];
      for (const r of rows) {
        const p = Math.floor(r.ordinal / DETAIL_PAGE);
        if (p < page) throw new Error(`findings index: ordinal ${r.ordinal} after page ${page}`);
        if (p !== page) {
          close(out);
          page = p;
        }
        entries.push(`"${r.ordinal}":${r.detail}`);
      }
      return out;
    },
    end(): DetailPage[] {
      const out: DetailPage[] = [];
      close(out);
      return out;
    },
  };
}
