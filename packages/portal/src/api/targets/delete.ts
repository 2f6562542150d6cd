import { PurgeTargetQuery, PurgeTargetResponse } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { DomainError } from '../../domain/errors.ts';
import { responses } from '../../http/responses.ts';
import { purgeTarget } from '../../sessions/purge-target.ts';

/**
 * DELETE /api/targets?client_id=<id>[&target=<target>] (admin only): purge a target (or, without
 * `target`, every target of the client): its sessions and its findings of record with their
 * history (docs/findings-of-record.md#retention). `client_id` is required; empty names the
 * sessions uploaded without a client.
 */
export default function register(app: App, ctx: AppContext): void {
  app.delete(
    '/targets',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      schema: {
        operationId: 'purgeTarget',
        tags: ['findings'],
        summary: "Purge a target's (or a client's) sessions and findings of record",
        security: [{ identityToken: [] }],
        querystring: PurgeTargetQuery,
        response: responses({ 200: PurgeTargetResponse }, 400, 401, 403),
      },
    },
    async (request) => {
      const { client_id: clientId, target } = request.query;
      if (clientId === undefined) throw new DomainError('invalid.client_id', 'Missing client_id parameter');
      const done = await purgeTarget(ctx, {
        clientId,
        target: target?.trim(),
        actor: actorOf(userOf(request)),
      });
      return { success: true as const, sessions_deleted: done.sessions, records_deleted: done.records };
    },
  );
}
