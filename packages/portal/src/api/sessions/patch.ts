import { SessionQuery, UpdateSessionBody, UpdateSessionResponse } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest, notFound } from '../../errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { storable } from '../../sessions/derive.ts';

/**
 * PATCH /api/sessions?session=<id> `{status, note?}` (D5): the review status, one of new,
 * in_review, resolved, archived; any status may follow any other. Every change is kept
 * in the status history and audited/emitted as `status_changed`; setting the current
 * status again only records the note. Credential: an in-scope JWT, or a key of the
 * session's client.
 */
export default function register(app: App, ctx: AppContext): void {
  app.patch(
    '/sessions',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Change the review status of a session',
        security: [{ identityToken: [] }, { apiKey: [] }],
        querystring: SessionQuery,
        body: UpdateSessionBody,
        response: responses({ 200: UpdateSessionResponse }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const { principal } = await accessSession(ctx, request, sessionId, { permission: 'update:status' });
      const actor = actorOf(principal!);
      const { status, note } = request.body;
      if (note !== undefined && !storable(note)) throw badRequest('Invalid note: NUL characters and unpaired surrogates are not allowed');
      const now = ctx.now();
      const { previous, event } = await ctx.db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom('sessions').select(['status', 'client', 'client_id', 'target']).where('session_id', '=', sessionId).forUpdate().executeTakeFirst();
        if (!row) throw notFound('Session not found');
        if (note !== undefined) await trx.insertInto('session_notes').values({ session_id: sessionId, author: actor, note, created_at: now }).execute();
        if (row.status === status) return { previous: row.status, event: null };
        await trx.updateTable('sessions').set({ status, updated_at: now }).where('session_id', '=', sessionId).execute();
        await trx.insertInto('status_history').values({ session_id: sessionId, from_status: row.status, to_status: status, changed_by: actor, note: note ?? null, changed_at: now }).execute();
        const event = await recordAuditEvent(trx, {
          event_type: 'status_changed',
          actor,
          session_id: sessionId,
          client_id: row.client_id,
          data: { session_id: sessionId, client: row.client, client_id: row.client_id, target: row.target, previous_status: row.status, new_status: status, changed_by: actor, changed_at: now.toISOString() },
        });
        return { previous: row.status, event };
      });
      if (event) ctx.events.publish(event);
      return { success: true as const, session_id: sessionId, previous_status: previous, status, changed: event !== null, changed_at: now.toISOString() };
    },
  );
}
