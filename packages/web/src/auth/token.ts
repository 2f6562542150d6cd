import type { Role } from '@svc/protocol';

/** What the console reads from an access token's claims (docs/api.md#identity-provider): who, and which clients it may see. */
export interface Identity {
  subject: string;
  email: string;
  role: Role;
  /** Empty for an admin (every client). */
  clientIds: string[];
}

function base64UrlDecode(part: string): string {
  const b64 = part
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(part.length / 4) * 4, '=');
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/**
 * The claims of a JWT, unverified: the portal verifies every request, the console only
 * uses them to choose what to show. A token without role claims is an admin (docs/api.md#credentials).
 */
export function identityOf(accessToken: string): Identity {
  const payload = accessToken.split('.')[1];
  if (payload === undefined) throw new Error('The identity provider returned a malformed token');
  const claims = JSON.parse(base64UrlDecode(payload)) as Record<string, unknown>;
  const clientIds = Array.isArray(claims['client_ids'])
    ? claims['client_ids'].filter((c): c is string => typeof c === 'string')
    : [];
  return {
    subject: typeof claims['sub'] === 'string' ? claims['sub'] : '',
    email: typeof claims['email'] === 'string' ? claims['email'] : '',
    role: claims['role'] === 'member' ? 'member' : 'admin',
    clientIds,
  };
}
