import { OkBody, UserIdQuery } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import type { App, AppContext } from '../../context.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { identityUserOf, requireBearer } from './bearer.ts';
import { lockAdmins } from './last-admin.ts';

/** DELETE /identity/admin/users?id=: the last admin cannot be deleted. */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'deleteUser',
        tags: ['identity'],
        summary: 'Delete a user',
        security: [{ bearer: [] }],
        querystring: UserIdQuery,
        response: responses({ 200: OkBody }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const admin = identityUserOf(request);
      const { id } = request.query;
      const event = await ctx.db.transaction().execute(async (trx) => {
        const admins = await lockAdmins(trx);
        const target = await trx
          .selectFrom('users')
          .select(['id', 'email', 'role'])
          .where('id', '=', id)
          .executeTakeFirst();
        if (!target) throw notFound('User not found');
        if (target.role === 'admin' && admins.length === 1) throw conflict('Cannot delete the last admin');
        await trx.deleteFrom('users').where('id', '=', id).execute();
        return recordAuditEvent(trx, {
          event_type: 'user_deleted',
          actor: admin.email,
          data: { user_id: id, email: target.email },
        });
      });
      ctx.events.publish(event);
      return { ok: true as const };
    },
  );
}
