import { apiRequest } from '../api/client.ts';
import { ApiError, messageOf } from '../api/errors.ts';
import { accessToken } from '../auth/session.ts';
import type { ConsoleClient } from './client.ts';

/**
 * The console's client for the fleet and administration pages: portal calls go through the
 * console's API client (X-Identity-Token, refresh on 401); the identity provider's user
 * routes take the same token as a bearer (SPEC "Authentication" rule 2).
 */
export const consoleClient: ConsoleClient = {
  api: <T>(method: string, path: string, body?: unknown) => apiRequest<T>(method, path, { body }),
  async identity<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = accessToken();
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
      });
    } catch {
      throw new ApiError(0, messageOf(0, null), null);
    }
    const parsed: unknown = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(res.status, messageOf(res.status, parsed), parsed);
    return parsed as T;
  },
};
