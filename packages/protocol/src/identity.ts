import { Type, type Static } from '@sinclair/typebox';
import { ClientId, IsoDateTime } from './common.ts';

/** docs/api.md#identity-provider: the portal's own identity provider. */
export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export const TokenRequest = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ maxLength: 64 })),
    username: Type.Optional(Type.String({ maxLength: 320 })),
    password: Type.Optional(Type.String({ maxLength: 1024 })),
    refresh_token: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: true },
);
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer(),
  refresh_token: Type.String(),
});
export type TokenResponse = Static<typeof TokenResponse>;

/** RFC 7009 token revocation: `token` is a refresh or an access token; the hint only orders the lookup. */
export const RevokeRequest = Type.Object(
  {
    token: Type.Optional(Type.String({ maxLength: 8192 })),
    token_type_hint: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);
export type RevokeRequest = Static<typeof RevokeRequest>;

/** "Sign out everywhere": how many of the user's sessions (refresh-token families) it ended. */
export const SessionsRevokedResponse = Type.Object({
  ok: Type.Literal(true),
  revoked_sessions: Type.Integer({ minimum: 0 }),
});
export type SessionsRevokedResponse = Static<typeof SessionsRevokedResponse>;

/** RFC 6749 section 5.2 error body; `error` keeps the shape. */
export const OAuthError = Type.Object({ error: Type.String(), error_description: Type.Optional(Type.String()) });

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.Union(ROLES.map((r) => Type.Literal(r))),
  client_ids: Type.Array(Type.String()),
  created_at: IsoDateTime,
  updated_at: IsoDateTime,
});
export type User = Static<typeof User>;

export const Email = Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' });
export const Password = Type.String({ minLength: 12, maxLength: 1024 });

export const CreateUserBody = Type.Object(
  {
    email: Email,
    password: Password,
    role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
    client_ids: Type.Optional(Type.Array(ClientId, { maxItems: 1000, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    password: Type.Optional(Password),
    role: Type.Optional(Type.Union(ROLES.map((r) => Type.Literal(r)))),
    client_ids: Type.Optional(Type.Array(ClientId, { maxItems: 1000, uniqueItems: true })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const UserResponse = Type.Object({ user: User });
export const UserListResponse = Type.Object({ users: Type.Array(User) });
export const UserIdQuery = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

export const Jwks = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) });
