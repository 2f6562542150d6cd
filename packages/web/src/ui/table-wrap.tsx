import type { ComponentChildren } from 'preact';

/** A table that may scroll sideways on narrow screens: focusable and named, so a keyboard can scroll it. */
export function TableWrap(props: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must take focus to scroll by keyboard
    <section class="table-wrap" tabIndex={0} aria-label={props.label}>
      {props.children}
    </section>
  );
}

/** A named table with plain column headings; `children` are its body rows. */
export function DataTable(props: { label: string; columns: readonly string[]; children: ComponentChildren }) {
  return (
    <TableWrap label={props.label}>
      <table>
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </TableWrap>
  );
}
