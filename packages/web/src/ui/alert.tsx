import type { ComponentChildren } from 'preact';
import { describeError, isTransient } from '../api/errors.ts';

/**
 * An error as the portal worded it, announced to screen readers. With `onRetry` (a load that
 * failed) it offers to try again when the failure may pass (the portal restarting, the
 * network: api/errors.ts isTransient), since a reload of the whole page would lose what the
 * user was doing; a 404 or 403 would answer the same again, so it gets no retry.
 */
export function ErrorMessage(props: { error: unknown; onRetry?: (() => void) | undefined }) {
  if (props.error === null || props.error === undefined) return null;
  const alert = (
    <p class="alert alert-error" role="alert">
      {describeError(props.error)}
    </p>
  );
  if (props.onRetry === undefined || !isTransient(props.error)) return alert;
  return (
    <div class="retry">
      {alert}
      <button type="button" onClick={props.onRetry}>
        Try again
      </button>
    </div>
  );
}

/** The error of a list or panel that failed to load (useData), with its retry; nothing while it loads fine. */
export function LoadError(props: { load: { failure: unknown; reload: () => void } }) {
  return props.load.failure === null ? null : <ErrorMessage error={props.load.failure} onRetry={props.load.reload} />;
}

/** The outcome of an action: a success as a status, a failure as an alert; nothing when there is none. */
export function OutcomeMessage(props: { message: { kind: 'ok' | 'error'; text: string } | null }) {
  const m = props.message;
  if (m === null) return null;
  return (
    <p class={`alert ${m.kind === 'ok' ? 'alert-ok' : 'alert-error'}`} role={m.kind === 'ok' ? 'status' : 'alert'}>
      {m.text}
    </p>
  );
}

/** A done action, announced as a status. */
export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="adm-notice" role="status">
      {children}
    </p>
  );
}
