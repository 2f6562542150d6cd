import type { Static } from '@sinclair/typebox';
import type {
  CreateUserBody,
  OkBody,
  SessionsRevokedResponse,
  UpdateUserBody,
  UserListResponse,
  UserResponse,
} from '@svc/protocol';
import { identityRequest } from './client.ts';

/** The identity provider's users: administration (`/identity/admin/users*`) and the caller's own sessions. */

type UserAnswer = Static<typeof UserResponse>;

/** GET /identity/admin/users: every user. */
export function listUsers(): Promise<Static<typeof UserListResponse>> {
  return identityRequest('GET', '/identity/admin/users');
}

export function createUser(body: CreateUserBody): Promise<UserAnswer> {
  return identityRequest('POST', '/identity/admin/users', { body });
}

/** PATCH /identity/admin/users?id=: role, client ids or password. */
export function updateUser(id: string, body: UpdateUserBody): Promise<UserAnswer> {
  return identityRequest('PATCH', '/identity/admin/users', { query: { id }, body });
}

export function deleteUser(id: string): Promise<OkBody> {
  return identityRequest('DELETE', '/identity/admin/users', { query: { id } });
}

/** POST /identity/admin/users/sessions/revoke?id=: every refresh-token family of the user ends. */
export function revokeUserSessions(id: string): Promise<SessionsRevokedResponse> {
  return identityRequest('POST', '/identity/admin/users/sessions/revoke', { query: { id } });
}

/** POST /identity/user/sessions/revoke: every session of the signed-in user ends, this one too. */
export function revokeOwnSessions(): Promise<SessionsRevokedResponse> {
  return identityRequest('POST', '/identity/user/sessions/revoke');
}
