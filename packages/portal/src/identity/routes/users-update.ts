import { UpdateUserBody, UserIdQuery, UserResponse } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest, conflict, notFound } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { passwordWeakness } from '../password-strength.ts';
import { hashPassword } from '../passwords.ts';
import { clearLoginFailures } from '../throttle.ts';
import { revokeUserTokens } from '../tokens.ts';
import { findUserById, presentUser } from '../users.ts';
import { identityUserOf, requireBearer } from './bearer.ts';
import { lockAdmins } from './last-admin.ts';

/** PATCH /identity/admin/users?id=: change password, role or client_ids. A new password revokes the user's refresh tokens and access tokens. */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'updateUser',
        tags: ['identity'],
        summary: 'Update a user',
        security: [{ bearer: [] }],
        querystring: UserIdQuery,
        body: UpdateUserBody,
        response: responses({ 200: UserResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const admin = identityUserOf(request);
      const { id } = request.query;
      const body = request.body;
      if (body.password !== undefined) {
        // The target's e-mail is one of the estimator's dictionary words; an unknown id is the 404 below.
        const target = await findUserById(ctx.db, id);
        const weakness = passwordWeakness(body.password, target ? [target.email] : []);
        if (weakness !== null) throw badRequest(weakness);
      }
      const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
      const { row, event } = await ctx.db.transaction().execute(async (trx) => {
        const admins = await lockAdmins(trx);
        const current = await trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
        if (!current) throw notFound('User not found');
        const role = body.role ?? current.role;
        const clientIds = body.client_ids ?? current.client_ids;
        if (role === 'member' && clientIds.length === 0)
          throw badRequest('A member needs at least one client id in client_ids');
        if (current.role === 'admin' && role !== 'admin' && admins.length === 1)
          throw conflict('Cannot demote the last admin');
        const now = ctx.now();
        const row = await trx
          .updateTable('users')
          .set({
            role,
            client_ids: clientIds,
            updated_at: now,
            ...(passwordHash ? { password_hash: passwordHash } : {}),
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        // A new password set by an admin starts the account's e-mail from zero failures.
        if (passwordHash) await clearLoginFailures(trx, row.email_normalized);
        // Ends the user's refresh-token families and the access tokens issued before now.
        if (passwordHash) await revokeUserTokens(trx, id, now);
        const changed = Object.keys(body).filter((k) => k !== 'password');
        const event = await recordAuditEvent(trx, {
          event_type: 'user_updated',
          actor: admin.email,
          data: {
            user_id: id,
            email: row.email,
            changed: passwordHash ? [...changed, 'password'] : changed,
            role,
            client_ids: clientIds,
          },
        });
        return { row, event };
      });
      ctx.events.publish(event);
      return { user: presentUser(row) };
    },
  );
}
