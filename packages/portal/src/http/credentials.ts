import type { IncomingHttpHeaders } from 'node:http';

export const API_KEY_HEADER = 'x-api-key';
export const IDENTITY_TOKEN_HEADER = 'x-identity-token';

/** What a request presents as credentials: the only place they are read from its headers. */
export interface Credentials {
  /** Any Authorization header, as sent: /api refuses it (docs/api.md#credentials), /identity reads a bearer token from it. */
  authorization: string | undefined;
  /** X-Identity-Token, trimmed; undefined when missing or blank. */
  identityToken: string | undefined;
  /** x-api-key, trimmed; undefined when missing or blank. */
  apiKey: string | undefined;
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s === undefined || s === '' ? undefined : s;
}

export function credentialsOf(headers: IncomingHttpHeaders): Credentials {
  return {
    authorization: headers.authorization,
    identityToken: single(headers, IDENTITY_TOKEN_HEADER),
    apiKey: single(headers, API_KEY_HEADER),
  };
}

/** Whether the request carries an Authorization header at all (the cheap test /api's refusal starts with). */
export const sendsAuthorization = (headers: IncomingHttpHeaders): boolean => headers.authorization !== undefined;

/** The token of `Authorization: Bearer <token>`, or undefined for any other value. */
export function bearerTokenOf(credentials: Credentials): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(credentials.authorization ?? '')?.[1];
}
