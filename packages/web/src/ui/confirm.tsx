import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';

/**
 * A destructive action behind a confirmation: the button opens an inline alert dialog that
 * names what will happen. Focus moves to its Cancel button (Enter never confirms by accident),
 * Escape cancels, and focus returns to the button when the question closes. A failed action
 * keeps the question open with the portal's message.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  /** The confirming button's text; `Yes, <label>` by default. */
  confirmLabel?: string;
  /** The dismissing button's text; `Cancel` by default (an action that itself cancels says something else). */
  dismissLabel?: string;
  disabled?: boolean;
  onConfirm: () => Promise<unknown> | undefined;
}) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (open) cancelRef.current?.focus({ preventScroll: true });
    else if (wasOpen.current) triggerRef.current?.focus({ preventScroll: true });
    wasOpen.current = open;
  }, [open]);

  const close = () => {
    setError(null);
    setOpen(false);
  };
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      setOpen(false);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  if (!open)
    return (
      <button
        type="button"
        class="button-danger"
        ref={triggerRef}
        disabled={props.disabled}
        onClick={() => setOpen(true)}
      >
        {props.label}
      </button>
    );
  return (
    <span
      class="confirm"
      role="alertdialog"
      aria-label={props.label}
      aria-describedby={id}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) close();
      }}
    >
      <span id={id}>{props.question}</span>
      {error !== null ? (
        <span class="alert alert-error" role="alert">
          {error}
        </span>
      ) : null}
      <button type="button" class="button-danger" disabled={busy} onClick={confirm}>
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>
      <button type="button" class="button-quiet" ref={cancelRef} disabled={busy} onClick={close}>
        {props.dismissLabel ?? 'Cancel'}
      </button>
    </span>
  );
}
