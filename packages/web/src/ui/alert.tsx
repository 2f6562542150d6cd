import { describeError } from '../api/errors.ts';

/** An error as the portal worded it, announced to screen readers. */
export function ErrorMessage(props: { error: unknown }) {
  if (props.error === null || props.error === undefined) return null;
  return (
    <p class="alert alert-error" role="alert">
      {describeError(props.error)}
    </p>
  );
}
