import { LicenseIdQuery, LicenseResponse, UpdateLicenseBody, type AuditEventType } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { conflict, notFound } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { presentLicense } from '../../licenses/present.ts';

const EVENT: Record<'revoke' | 'deactivate' | 'activate', AuditEventType> = {
  revoke: 'license_revoked',
  deactivate: 'license_deactivated',
  activate: 'license_activated',
};

/**
 * PATCH /api/licenses?id= with `{action}`: revoke (one-way), deactivate (Active to
 * Inactive) or activate (Inactive to Active). A revoked key cannot change any more, and
 * an action that finds the key already in that state is a 409.
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'updateLicenseStatus',
        tags: ['licenses'],
        summary: 'Revoke, deactivate or activate a license key',
        security: [{ identityToken: [] }],
        querystring: LicenseIdQuery,
        body: UpdateLicenseBody,
        response: responses({ 200: LicenseResponse }, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const { id } = request.query;
      const { action } = request.body;
      const actor = actorOf(userOf(request));
      const now = ctx.now();
      const { row, event } = await ctx.db.transaction().execute(async (trx) => {
        const current = await trx
          .selectFrom('licenses')
          .selectAll()
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!current) throw notFound('License not found');
        if (current.revoked_at !== null) throw conflict('License key has been revoked');
        if (action === 'deactivate' && !current.is_active) throw conflict('License key is already inactive');
        if (action === 'activate' && current.is_active) throw conflict('License key is already active');
        const row = await trx
          .updateTable('licenses')
          .set(
            action === 'revoke'
              ? { revoked_at: now, updated_at: now }
              : { is_active: action === 'activate', updated_at: now },
          )
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        const event = await recordAuditEvent(trx, {
          event_type: EVENT[action],
          actor,
          client_id: row.client_id,
          data: { license_id: row.id, key_prefix: row.key_prefix, tier: row.tier },
        });
        return { row, event };
      });
      ctx.keys.invalidate();
      ctx.events.publish(event);
      return { license: presentLicense(row, now) };
    },
  );
}
