import { Page } from './page.tsx';

/** A section whose pages this build does not include yet. */
export function Unbuilt(props: { title: string }) {
  return (
    <Page title={props.title}>
      <p>This section is not part of this build of the console.</p>
    </Page>
  );
}
