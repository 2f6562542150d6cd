import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';

export type Loaded<T> = { state: 'loading' } | { state: 'done'; value: T } | { state: 'failed'; error: unknown };

/** Runs `load` when `deps` change; a result that arrives after a newer request started is dropped. */
export function useLoad<T>(load: (() => Promise<T>) | null, deps: unknown[]): Loaded<T> {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    if (load === null) return;
    let live = true;
    load().then(
      (value) => live && setResult({ state: 'done', value }),
      (error: unknown) => live && setResult({ state: 'failed', error }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return result;
}

export interface LoadedData<T> {
  /** The last data loaded, kept while reloading and after a failed reload. */
  data: T | null;
  /** The portal's message when the latest load failed. */
  error: string | null;
  reload: () => void;
}

/** useLoad for lists and panels that reload in place: the last data stays on screen beside any error. */
export function useData<T>(load: () => Promise<T>, deps: readonly unknown[]): LoadedData<T> {
  const [tick, setTick] = useState(0);
  const result = useLoad(load, [...deps, tick]);
  const last = useRef<T | null>(null);
  if (result.state === 'done') last.current = result.value;
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: last.current, error: result.state === 'failed' ? describeError(result.error) : null, reload };
}
