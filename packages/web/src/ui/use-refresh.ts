import { useEffect } from 'preact/hooks';

/**
 * Calls `reload` `everyMs` after each change of `last` (the data or the failure of the last
 * load), while the tab is shown: a hidden tab reads nothing, and reads at once when it is shown
 * again. The next wait starts from the answer, so a slow portal is never asked twice at a time.
 * `everyMs` null: nothing can change, nothing is read.
 */
export function useRefresh(reload: () => void, everyMs: number | null, last: readonly unknown[]): void {
  useEffect(() => {
    if (everyMs === null) return;
    const shown = () => document.visibilityState === 'visible';
    let due = false;
    const timer = setTimeout(() => {
      if (shown()) reload();
      else due = true;
    }, everyMs);
    const onVisibility = () => {
      if (due && shown()) {
        due = false;
        reload();
      }
    };
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [reload, everyMs, ...last]);
}
