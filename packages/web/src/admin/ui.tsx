import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { type Page, pageLabel } from './paging.ts';
import './admin.css';

/** Small building blocks shared by the fleet and administration pages. */

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Run `load` now and whenever `deps` change or reload() is called; keeps the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (!live) return;
        setError(describeError(err));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Run an action, keeping its error (the portal's message) and a busy flag. */
export function useAction(): {
  busy: boolean;
  error: string | null;
  run: (action: () => Promise<unknown>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (err) {
      setError(describeError(err));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function ErrorNote({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p class="adm-error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="adm-notice" role="status">
      {children}
    </p>
  );
}

/**
 * A destructive action behind a confirmation: the button opens an inline alert dialog that
 * names what will happen; focus moves to its Cancel button so Enter never confirms by accident,
 * and Escape cancels.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  disabled?: boolean;
  onConfirm: () => Promise<unknown> | undefined;
}) {
  const [open, setOpen] = useState(false);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    // Focus goes into the question when it opens and back to its button when it closes.
    if (open) cancelRef.current?.focus();
    else if (wasOpen.current) triggerRef.current?.focus();
    wasOpen.current = open;
  }, [open]);
  if (!open)
    return (
      <button type="button" class="adm-danger" ref={triggerRef} disabled={props.disabled} onClick={() => setOpen(true)}>
        {props.label}
      </button>
    );
  return (
    <span
      class="adm-confirm"
      role="alertdialog"
      aria-label={props.question}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setOpen(false);
      }}
    >
      <span>{props.question}</span>{' '}
      <button
        type="button"
        class="adm-danger"
        onClick={async () => {
          setOpen(false);
          await props.onConfirm();
        }}
      >
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>{' '}
      <button type="button" ref={cancelRef} onClick={() => setOpen(false)}>
        Cancel
      </button>
    </span>
  );
}

export function Pager({ page, label, onPage }: { page: Page<unknown>; label: string; onPage: (n: number) => void }) {
  if (page.pages <= 1) return null;
  return (
    <nav class="adm-pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page.page <= 1} onClick={() => onPage(page.page - 1)}>
        Previous
      </button>
      <span>
        {pageLabel(page)} (page {page.page} of {page.pages})
      </span>
      <button type="button" disabled={page.page >= page.pages} onClick={() => onPage(page.page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** A secret shown once: read-only, selectable, with a copy button. */
export function SecretOnce({ label, value, id }: { label: string; value: string; id: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied');
    } catch {
      inputRef.current?.select();
      setCopied('Selected: press Ctrl+C to copy');
    }
  };
  return (
    <div class="adm-secret">
      <label for={id}>{label} (shown once; it cannot be read again)</label>
      <div class="adm-row">
        <input id={id} ref={inputRef} readOnly value={value} spellcheck={false} autocomplete="off" />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <span role="status">{copied}</span>
    </div>
  );
}

/** A horizontally scrollable table region, so wide tables stay readable at 390 px. */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="adm-table" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
