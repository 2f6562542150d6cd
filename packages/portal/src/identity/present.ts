import type { User } from '@svc/protocol';
import { SIGNING_ALG } from './signing-keys.ts';
import { identityIssuer } from './tokens.ts';
import type { UserRow } from './users.ts';

export function presentUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    client_ids: row.client_ids,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** OpenID provider metadata, so stock OpenID tooling finds the JWKS. */
export function presentDiscovery(baseUrl: string) {
  const issuer = identityIssuer(baseUrl);
  return {
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    token_endpoint: `${issuer}/token`,
    // RFC 8414: where clients sign out (RFC 7009).
    revocation_endpoint: `${issuer}/revoke`,
    revocation_endpoint_auth_methods_supported: ['none'],
    userinfo_endpoint: `${issuer}/user`,
    grant_types_supported: ['password', 'refresh_token'],
    // Required by OpenID discovery; tokens come only from the token endpoint.
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    token_endpoint_auth_methods_supported: ['none'],
  };
}
