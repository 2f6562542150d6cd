import { useEffect, useState } from 'preact/hooks';

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
