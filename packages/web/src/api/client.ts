import { accessToken, refreshTokens, signOut } from '../auth/session.ts';
import { ApiError, messageOf } from './errors.ts';
import { sendRetryingOnce } from './retry.ts';

const JSON_TYPE = 'application/json';

type Query = Record<string, string | number | boolean | null | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
}

function urlOf(path: string, query: Query | undefined): string {
  const params = new URLSearchParams();
  // An empty value is sent: `client_id=` names the sessions uploaded without a client (docs/api.md#ids-are-per-client).
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) params.set(k, String(v));
  const qs = params.toString();
  return qs === '' ? path : `${path}?${qs}`;
}

/**
 * Where a call goes decides how the signed-in user's token rides along: the portal's API takes it
 * in X-Identity-Token (docs/api.md#credentials), the identity provider's user routes as a
 * bearer (rule 2).
 */
type Audience = 'api' | 'identity';

interface Call {
  method: string;
  url: string;
  body: unknown;
  accept: string;
  audience: Audience;
}

async function send({ method, url, body, accept, audience }: Call): Promise<Response> {
  const headers: Record<string, string> = { accept };
  const token = accessToken();
  if (token !== null) {
    if (audience === 'api') headers['x-identity-token'] = token;
    else headers['authorization'] = `Bearer ${token}`;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    return await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, messageOf(0, null), null);
  }
}

/**
 * One call with the signed-in user's token. A 401 gets one refresh and one retry; a second 401
 * signs out. A GET answered 503 with a short Retry-After is sent once more after it (retry.ts).
 * Any other non-2xx answer throws ApiError carrying the portal's message.
 */
async function call(c: Call): Promise<Response> {
  const attempt = () => sendRetryingOnce(c.method, () => send(c));
  let res = await attempt();
  if (res.status === 401 && accessToken() !== null && (await refreshTokens())) res = await attempt();
  if (res.ok) return res;
  const error: unknown = await res.json().catch(() => null);
  // A 401 after this tab signed out (a call still in flight) ends nothing more.
  if (res.status === 401 && accessToken() !== null) signOut('Your session has ended. Sign in again.');
  throw new ApiError(res.status, messageOf(res.status, error), error);
}

async function jsonCall<T>(audience: Audience, method: string, path: string, opts: RequestOptions): Promise<T> {
  const res = await call({ method, url: urlOf(path, opts.query), body: opts.body, accept: JSON_TYPE, audience });
  return (await res.json()) as T;
}

/** A JSON call to the portal's API. */
export function apiRequest<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  return jsonCall('api', method, path, opts);
}

/** A JSON call to the identity provider's user routes (`/identity/admin/*`, `/identity/user/*`). */
export function identityRequest<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  return jsonCall('identity', method, path, opts);
}

/** A GET whose answer is a file (a download). */
export async function apiBlob(path: string, query: Query): Promise<Blob> {
  const res = await call({ method: 'GET', url: urlOf(path, query), body: undefined, accept: '*/*', audience: 'api' });
  return res.blob();
}
