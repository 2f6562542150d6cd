/** An answer other than 2xx: `message` is the portal's own message (the `error` field), never a stack. */
export class ApiError extends Error {
  readonly status: number;
  /** The whole parsed body, for answers that carry more than the message (e.g. a 409's client ids). */
  readonly body: unknown;

  constructor(status: number, message: string, body: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
  }
}

/** The portal's message from an error body: `error_description` (OAuth answers) or `error` (docs/api.md#error-body-and-status-codes). */
export function messageOf(status: number, body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as { error?: unknown; error_description?: unknown };
    if (typeof b.error_description === 'string' && b.error_description !== '') return b.error_description;
    if (typeof b.error === 'string' && b.error !== '') return b.error;
  }
  return status === 0 ? 'The portal cannot be reached' : `The portal answered ${status}`;
}

/** Text for any thrown value: the portal's message for API errors, the error's message otherwise. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : 'Something went wrong';
}

/**
 * Whether trying the same request again may succeed: the portal unreachable (status 0), a
 * timeout, throttling or a server-side failure (5xx), or a failure that is not an answer at
 * all. A 4xx answer (not found, forbidden, a bad request) stays what it is on a retry, so the
 * console does not offer one.
 */
export function isTransient(err: unknown): boolean {
  if (!(err instanceof ApiError)) return true;
  return err.status === 0 || err.status === 408 || err.status === 429 || err.status >= 500;
}
