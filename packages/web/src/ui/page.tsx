import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';

/** A page's frame: its heading (the page's one h1) and the document title. */
export function Page(props: { title: string; actions?: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Scan portal`;
  }, [props.title]);
  return (
    <>
      <div class="page-head">
        <h1>{props.title}</h1>
        {props.actions}
      </div>
      {props.children}
    </>
  );
}
