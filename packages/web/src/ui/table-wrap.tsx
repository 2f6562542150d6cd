import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';

/**
 * Tables on a phone: a table that opts in becomes stacked rows below 40rem (about 640 px),
 * each row a card of "label: value" lines, led by the cells that say the most about it (risk,
 * status, state), with no sideways scrolling.
 *
 * How a table opts in: `<DataTable stack={{ lead: ['Risk', 'Status'] }} …>`. Nothing else is
 * needed: the labels come from `columns`, and DataTable writes each body cell's `data-label`
 * (its column's heading) and marks the cells of the `lead` columns with `data-lead`, also for
 * rows rendered later by child components. A cell that spans the whole row (a detail or
 * editing row) gets `data-full` and no label. A cell may set its own `data-label` (kept).
 * The CSS is the "Stacked tables on phones" section of styles.css.
 */
export interface StackOptions {
  /** Column headings whose cells come first in a stacked row, in this order. */
  lead: readonly string[];
}

/** A column heading; `sort` makes it a button that reports its order to assistive technology. */
export interface Column {
  label: string;
  /** Shown to screen readers only (e.g. a column of selection boxes). */
  hidden?: boolean;
  sort?: { direction: 'ascending' | 'descending' | 'none'; onSort: () => void };
  /** The heading's own content instead of the label (e.g. a "select all" box); the label still names its cells. */
  header?: ComponentChildren;
}

/**
 * A table that may scroll sideways on narrow screens: focusable and named, so a keyboard can
 * scroll it. A named group, not a region: as a landmark it repeated the name of the section
 * around it ("Findings" in "Findings"), which axe's landmark-unique flags and which lists every
 * table twice among a screen reader's landmarks.
 */
export function TableWrap(props: {
  label: string;
  class?: string | undefined;
  busy?: boolean;
  children: ComponentChildren;
}) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a fieldset groups form controls; this names a scrolling table
    <div
      class={`table-wrap${props.class ? ` ${props.class}` : ''}${props.busy ? ' is-busy' : ''}`}
      role="group"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard
      tabIndex={0}
      aria-label={props.label}
      aria-busy={props.busy ? 'true' : undefined}
    >
      {props.children}
    </div>
  );
}

const labelOf = (c: string | Column) => (typeof c === 'string' ? c : c.label);

/** Writes data-label / data-lead / data-full on the body cells from the column headings. */
function labelCells(table: HTMLTableElement, labels: readonly string[], lead: readonly string[]): void {
  for (const body of Array.from(table.tBodies)) {
    for (const tr of Array.from(body.rows)) {
      let col = 0;
      for (const cell of Array.from(tr.cells)) {
        const span = Math.max(1, cell.colSpan);
        if (span >= labels.length && labels.length > 1) cell.setAttribute('data-full', '');
        else {
          const label = labels[col];
          if (label !== undefined && !cell.hasAttribute('data-label')) cell.setAttribute('data-label', label);
          const rank = lead.indexOf(cell.getAttribute('data-label') ?? '');
          if (rank >= 0) cell.setAttribute('data-lead', String(rank + 1));
          else cell.removeAttribute('data-lead');
        }
        col += span;
      }
    }
  }
}

/**
 * A named table with column headings; `children` are its body rows. `stack` makes it
 * stacked rows on a phone (see StackOptions); `busy` marks it as being replaced by the
 * next load (aria-busy, dimmed).
 */
export function DataTable(props: {
  label: string;
  columns: readonly (string | Column)[];
  stack?: StackOptions;
  busy?: boolean;
  children: ComponentChildren;
}) {
  const table = useRef<HTMLTableElement>(null);
  const labels = props.columns.map(labelOf);
  const key = labels.join('\u0000');
  const lead = props.stack?.lead ?? [];
  const leadKey = lead.join('\u0000');
  const stacked = props.stack !== undefined;
  useLayoutEffect(() => {
    const el = table.current;
    if (el === null || !stacked) return;
    const run = () => labelCells(el, labels, lead);
    run();
    // Rows that child components re-render on their own (an edited row) are labelled too;
    // attribute changes are not observed, so labelling never triggers itself.
    const observer = new MutationObserver(run);
    observer.observe(el, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, [key, leadKey, stacked]);
  return (
    <TableWrap label={props.label} class={stacked ? 'table-stack' : undefined} busy={props.busy ?? false}>
      <table ref={table}>
        <thead>
          <tr>
            {props.columns.map((c) => {
              const col: Column = typeof c === 'string' ? { label: c } : c;
              return (
                <th key={col.label} scope="col" aria-sort={col.sort?.direction}>
                  {col.header !== undefined ? (
                    col.header
                  ) : col.sort ? (
                    <button type="button" class="sort-button" onClick={col.sort.onSort}>
                      {col.label}
                      <span aria-hidden="true" class="sort-mark">
                        {col.sort.direction === 'ascending' ? '▲' : col.sort.direction === 'descending' ? '▼' : '↕'}
                      </span>
                    </button>
                  ) : col.hidden ? (
                    <span class="visually-hidden">{col.label}</span>
                  ) : (
                    col.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </TableWrap>
  );
}
