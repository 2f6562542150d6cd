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
