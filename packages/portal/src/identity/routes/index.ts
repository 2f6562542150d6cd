import type { App, AppContext } from '../../context.ts';
import discovery from './discovery.ts';
import jwks from './jwks.ts';
import token from './token.ts';
import user from './user.ts';
import usersCreate from './users-create.ts';
import usersDelete from './users-delete.ts';
import usersList from './users-list.ts';
import usersUpdate from './users-update.ts';

/** The portal's own identity provider under /identity (D4). Only registration happens here. */
export function registerIdentityRoutes(app: App, ctx: AppContext): void {
  app.decorateRequest('identityUser', null);
  for (const route of [token, jwks, discovery, user, usersList, usersCreate, usersUpdate, usersDelete]) route(app, ctx);
}
