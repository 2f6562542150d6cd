import { accessToken, refreshTokens, signOut } from '../auth/session.ts';
import { ApiError, messageOf } from './errors.ts';

type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

function urlOf(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {}))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? path : `${path}?${qs}`;
}

async function send(method: string, url: string, body: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
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
 * One call to the portal's API with the signed-in user's token (X-Identity-Token, SPEC rule 1).
 * A 401 gets one refresh and one retry; a second 401 signs out. Any other non-2xx answer
 * throws ApiError carrying the portal's message.
 */
export async function apiRequest<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const url = urlOf(path, opts.query);
  let res = await send(method, url, opts.body);
  if (res.status === 401 && accessToken() !== null && (await refreshTokens())) res = await send(method, url, opts.body);
  const body: unknown = await res.json().catch(() => null);
  if (res.status === 401) signOut('Your session has ended. Sign in again.');
  if (!res.ok) throw new ApiError(res.status, messageOf(res.status, body), body);
  return body as T;
}
