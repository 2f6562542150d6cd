import { CreateUserBody, UserResponse } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest, conflict } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { passwordWeakness } from '../password-strength.ts';
import { hashPassword } from '../passwords.ts';
import { findUserByEmail, newUserId, normalizeEmail, presentUser } from '../users.ts';
import { identityUserOf, requireBearer } from './bearer.ts';

/** POST /identity/admin/users: body email, password, role (admin|member), client_ids. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/admin/users',
    {
      preHandler: requireBearer(ctx, { admin: true }),
      schema: {
        operationId: 'createUser',
        tags: ['identity'],
        summary: 'Create a user',
        security: [{ bearer: [] }],
        body: CreateUserBody,
        response: responses({ 201: UserResponse }, 400, 401, 403, 409),
      },
    },
    async (request, reply) => {
      const admin = identityUserOf(request);
      const { email, password } = request.body;
      const role = request.body.role ?? 'member';
      const clientIds = request.body.client_ids ?? [];
      if (role === 'member' && clientIds.length === 0)
        throw badRequest('A member needs at least one client id in client_ids');
      const weakness = passwordWeakness(password, [email]);
      if (weakness !== null) throw badRequest(weakness);
      if (await findUserByEmail(ctx.db, email)) throw conflict('A user with this e-mail already exists');
      const passwordHash = await hashPassword(password);
      const { row, event } = await ctx.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('users')
          .values({
            id: newUserId(),
            email,
            email_normalized: normalizeEmail(email),
            password_hash: passwordHash,
            role,
            client_ids: clientIds,
            updated_at: new Date(),
          })
          .onConflict((oc) => oc.column('email_normalized').doNothing())
          .returningAll()
          .executeTakeFirst();
        if (!row) throw conflict('A user with this e-mail already exists');
        const event = await recordAuditEvent(trx, {
          event_type: 'user_created',
          actor: admin.email,
          data: { user_id: row.id, email: row.email, role, client_ids: clientIds },
        });
        return { row, event };
      });
      ctx.events.publish(event);
      return reply.code(201).send({ user: presentUser(row) });
    },
  );
}
