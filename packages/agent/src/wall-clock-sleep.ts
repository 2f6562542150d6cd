/**
 * Resolves true once at least `ms` have passed on the wall clock, or false at once when the
 * signal ends it. A timer counts from the event loop's cached time, which can lag Date.now()
 * by a millisecond, so a plain setTimeout can end a backoff early as the log's clock sees it.
 */
export function sleepAtLeast(ms: number, signal: AbortSignal, now: () => number = Date.now): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const until = now() + ms;
    let timer: NodeJS.Timeout;
    const arm = (wait: number) => {
      timer = setTimeout(() => {
        const left = until - now();
        if (left > 0) return arm(left);
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, wait);
    };
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    arm(ms);
  });
}
