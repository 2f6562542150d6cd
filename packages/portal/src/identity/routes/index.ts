import type { App, AppContext } from '../../context.ts';
import discoveryGet from './discovery/get.ts';
import jwksGet from './jwks/get.ts';
import revokePost from './revoke/post.ts';
import tokenPost from './token/post.ts';
import userGet from './user/get.ts';
import userSessionsRevokePost from './user-sessions-revoke/post.ts';
import usersDelete from './users/delete.ts';
import usersGet from './users/get.ts';
import usersPatch from './users/patch.ts';
import usersPost from './users/post.ts';
import usersSessionsRevokePost from './users-sessions-revoke/post.ts';

/** The portal's own identity provider under /identity (docs/api.md#identity-provider), one operation per file. Only registration happens here. */
export function registerIdentityRoutes(app: App, ctx: AppContext): void {
  app.decorateRequest('identityUser', null);
  for (const route of [
    tokenPost,
    revokePost,
    jwksGet,
    discoveryGet,
    userGet,
    userSessionsRevokePost,
    usersGet,
    usersPost,
    usersPatch,
    usersDelete,
    usersSessionsRevokePost,
  ])
    route(app, ctx);
}
