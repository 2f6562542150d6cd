import { accessToken, refreshTokens, signOut } from '../auth/session.ts';
import { ApiError, messageOf } from './errors.ts';

type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

function urlOf(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  // An empty value is sent: `client_id=` names the sessions uploaded without a client (D17).
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? path : `${path}?${qs}`;
}

async function send(method: string, url: string, body: unknown, accept: string): Promise<Response> {
  const headers: Record<string, string> = { accept };
  const token = accessToken();
  if (token !== null) headers['x-identity-token'] = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, messageOf(0, null), null);
  }
}

/**
 * One call with the signed-in user's token (X-Identity-Token, SPEC rule 1). A 401 gets one
 * refresh and one retry; a second 401 signs out. Any other non-2xx answer throws ApiError
 * carrying the portal's message.
 */
async function call(method: string, url: string, body: unknown, accept: string): Promise<Response> {
  let res = await send(method, url, body, accept);
  if (res.status === 401 && accessToken() !== null && (await refreshTokens()))
    res = await send(method, url, body, accept);
  if (res.ok) return res;
  const error: unknown = await res.json().catch(() => null);
  if (res.status === 401) signOut('Your session has ended. Sign in again.');
  throw new ApiError(res.status, messageOf(res.status, error), error);
}

/** A JSON call to the portal's API. */
export async function apiRequest<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const res = await call(method, urlOf(path, opts.query), opts.body, 'application/json');
  return (await res.json()) as T;
}

/** A GET whose answer is a file (a download). */
export async function apiBlob(path: string, query: Query): Promise<Blob> {
  const res = await call('GET', urlOf(path, query), undefined, '*/*');
  return res.blob();
}
