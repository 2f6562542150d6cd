import { describe, expect, it } from 'vitest';
import { DETAIL_PAGE, detailPages } from './detail-pages.ts';

/** A session's details, a page of consecutive ordinals per stored row (migration 0040). */

const row = (ordinal: number) => ({
  ordinal,
  detail: JSON.stringify({ id: `f${ordinal}`, evidence: 'a "quoted" \\ line' }),
});
const rows = (from: number, to: number) => Array.from({ length: to - from }, (_v, i) => row(from + i));

describe('detailPages', () => {
  it('holds back the last page until the rows after it, or the end, complete it', () => {
    expect(DETAIL_PAGE).toBe(100);
    const pages = detailPages();
    // A chunk that ends inside page 1: page 0 is done, page 1 waits for the next chunk.
    const first = pages.add(rows(0, 150));
    expect(first.map((p) => p.page)).toEqual([0]);
    const second = pages.add(rows(150, 320));
    expect(second.map((p) => p.page)).toEqual([1, 2]);
    const last = pages.end();
    expect(last.map((p) => p.page)).toEqual([3]);
    expect(pages.end()).toEqual([]);

    const all = [...first, ...second, ...last];
    const byOrdinal = new Map(all.flatMap((p) => Object.entries(JSON.parse(p.details) as Record<string, unknown>)));
    expect(byOrdinal.size).toBe(320);
    expect(byOrdinal.get('149')).toEqual({ id: 'f149', evidence: 'a "quoted" \\ line' });
    expect(Object.keys(JSON.parse(second[0]?.details ?? '{}'))).toEqual(rows(100, 200).map((r) => String(r.ordinal)));
  });

  it('keys each detail by its ordinal, so gaps between ordinals cost nothing', () => {
    const pages = detailPages();
    expect(pages.add([row(3), row(250)]).map((p) => [p.page, Object.keys(JSON.parse(p.details))])).toEqual([
      [0, ['3']],
    ]);
    expect(pages.end().map((p) => [p.page, Object.keys(JSON.parse(p.details))])).toEqual([[2, ['250']]]);
  });

  it('refuses rows out of ordinal order, which would write a page twice', () => {
    const pages = detailPages();
    pages.add(rows(0, 120));
    expect(() => pages.add([row(5)])).toThrow('findings index: ordinal 5 after page 1');
  });

  it('makes no page of no rows', () => {
    const pages = detailPages();
    expect(pages.add([])).toEqual([]);
    expect(pages.end()).toEqual([]);
  });
});
