import { useId, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';

/**
 * A destructive action behind a confirmation: the first button asks, the second does it.
 * The question is announced (role=alertdialog region) and focus moves to the confirm button.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
}) {
  const id = useId();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      setAsking(false);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  if (!asking)
    return (
      <button type="button" class="button-danger" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  return (
    <div class="confirm" role="alertdialog" aria-label={props.label} aria-describedby={id}>
      <p id={id}>{props.question}</p>
      {error !== null ? (
        <p class="alert alert-error" role="alert">
          {error}
        </p>
      ) : null}
      <div class="row">
        <button
          type="button"
          class="button-danger"
          disabled={busy}
          onClick={confirm}
          ref={(el) => el?.focus({ preventScroll: true })}
        >
          {props.confirmLabel}
        </button>
        <button type="button" class="button-quiet" disabled={busy} onClick={() => setAsking(false)}>
          Cancel
        </button>
      </div>
    </div>
  );
}
