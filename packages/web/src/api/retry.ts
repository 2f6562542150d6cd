/**
 * One more try for a read the portal could not serve for a moment: a 503 with Retry-After
 * (a busy database pool says 1 s, a database that is down 5 s). Only GET and HEAD, which
 * change nothing, are sent again; a write is never repeated behind the user's back. A wait
 * longer than MAX_RETRY_WAIT_MS is not worth holding the page for: the error is shown.
 */
export const MAX_RETRY_WAIT_MS = 5_000;

const IDEMPOTENT = new Set(['GET', 'HEAD']);

/** Milliseconds to wait before the one retry, or null when this answer is final. */
export function retryDelayMs(method: string, res: Response, now: number = Date.now()): number | null {
  if (res.status !== 503 || !IDEMPOTENT.has(method.toUpperCase())) return null;
  const raw = res.headers.get('retry-after')?.trim();
  if (raw === undefined || raw === '') return null;
  // Delay-seconds or an HTTP date (RFC 9110, 10.2.3; every date form starts with the day's name).
  const ms = /^\d+$/.test(raw) ? Number(raw) * 1000 : /^[A-Za-z]{3}/.test(raw) ? Date.parse(raw) - now : Number.NaN;
  if (Number.isNaN(ms) || ms > MAX_RETRY_WAIT_MS) return null;
  return Math.max(0, ms);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `send` once, and once more after the portal's Retry-After when retryDelayMs allows it. */
export async function sendRetryingOnce(
  method: string,
  send: () => Promise<Response>,
  wait: (ms: number) => Promise<void> = pause,
): Promise<Response> {
  const first = await send();
  const delay = retryDelayMs(method, first);
  if (delay === null) return first;
  // The first answer's body is not read: let its connection go.
  await first.body?.cancel().catch(() => undefined);
  await wait(delay);
  return send();
}
