import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from './errors.ts';

/** RFC 6749 section 5.2 errors keep the `error` field and add `error_description`. */
export function oauthError(
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
): HttpError {
  return new HttpError(status, error, { extra: { error_description: description }, headers });
}

/** `Sec-Fetch-Site: cross-site`, or an Origin that is not the portal's own (SVC_BASE_URL). */
function crossSite(headers: IncomingHttpHeaders, baseUrl: string): boolean {
  if (headers['sec-fetch-site'] === 'cross-site') return true;
  const origin = headers.origin;
  return origin !== undefined && origin !== new URL(baseUrl).origin;
}

/**
 * A browser form on another site must not be able to spend visitors' requests on the token
 * endpoints (failed logins, lockout, sign-outs). Clients without Origin still work.
 */
export function refuseCrossSite(headers: IncomingHttpHeaders, baseUrl: string): void {
  if (crossSite(headers, baseUrl)) throw oauthError(403, 'invalid_request', 'cross-site request refused');
}
