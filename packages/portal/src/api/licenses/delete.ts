import { DeletedLicenseResponse, LicenseIdQuery } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';

/** DELETE /api/licenses?id=: only a revoked key may be deleted (409 otherwise). */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'deleteLicense',
        tags: ['licenses'],
        summary: 'Delete a revoked license key',
        security: [{ identityToken: [] }],
        querystring: LicenseIdQuery,
        response: responses({ 200: DeletedLicenseResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { id } = request.query;
      const actor = actorOf(userOf(request));
      const event = await ctx.db.transaction().execute(async (trx) => {
        const current = await trx
          .selectFrom('licenses')
          .selectAll()
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!current) throw notFound('License not found');
        if (current.revoked_at === null) throw conflict('Only a revoked license key can be deleted');
        await trx.deleteFrom('licenses').where('id', '=', id).execute();
        return recordAuditEvent(trx, {
          event_type: 'license_deleted',
          actor,
          client_id: current.client_id,
          data: { license_id: id, key_prefix: current.key_prefix, tier: current.tier },
        });
      });
      ctx.keys.invalidate();
      ctx.events.publish(event);
      return { ok: true as const, id };
    },
  );
}
