import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'done'; value: T }
  | { state: 'failed'; error: unknown; retry: () => void };

/** Runs `load` when `deps` change; a result that arrives after a newer request started is dropped. */
export function useLoad<T>(load: (() => Promise<T>) | null, deps: unknown[]): Loaded<T> {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const retry = useCallback(() => setAttempt((a) => a + 1), []);
  const handled = useRef(0);
  useEffect(() => {
    if (load === null) return;
    let live = true;
    // A retry shows the loading state again, so the user sees it was heard; a change of
    // `deps` keeps what is shown until the new answer is in.
    if (attempt !== handled.current) {
      handled.current = attempt;
      setResult({ state: 'loading' });
    }
    load().then(
      (value) => live && setResult({ state: 'done', value }),
      (error: unknown) => live && setResult({ state: 'failed', error, retry }),
    );
    return () => {
      live = false;
    };
  }, [...deps, attempt]);
  return result;
}

export interface LoadedData<T> {
  /** The last data loaded, kept while reloading and after a failed reload. */
  data: T | null;
  /** The portal's message when the latest load failed. */
  error: string | null;
  /** What the latest load failed with (an ApiError: its status says whether a retry may help), or null. */
  failure: unknown;
  reload: () => void;
}

/** useLoad for lists and panels that reload in place: the last data stays on screen beside any error. */
export function useData<T>(load: () => Promise<T>, deps: readonly unknown[]): LoadedData<T> {
  const [tick, setTick] = useState(0);
  const result = useLoad(load, [...deps, tick]);
  const last = useRef<T | null>(null);
  if (result.state === 'done') last.current = result.value;
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return {
    data: last.current,
    error: result.state === 'failed' ? describeError(result.error) : null,
    failure: result.state === 'failed' ? result.error : null,
    reload,
  };
}

export interface Kept<T> {
  /** The last result, kept on screen while the next one loads. */
  last: T | null;
  /** A load is under way (the first one, or a newer one replacing `last`). */
  busy: boolean;
  /** The failure of the latest load, null when it succeeded or is still running. */
  error: unknown;
}

/** useLoad for a list that is replaced in place: the old result stays, marked busy, until the new one arrives. */
export function useLoadKeeping<T>(load: () => Promise<T>, deps: unknown[]): Kept<T> {
  const [state, setState] = useState<Kept<T>>({ last: null, busy: true, error: null });
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, busy: true, error: null }));
    load().then(
      (value) => live && setState({ last: value, busy: false, error: null }),
      (error: unknown) => live && setState((s) => ({ ...s, busy: false, error })),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}
