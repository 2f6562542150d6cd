import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
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
