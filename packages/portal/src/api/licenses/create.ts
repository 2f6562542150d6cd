import type { FastifyRequest } from 'fastify';
import { CreatedLicenseResponse, CreateLicenseBody, LIMIT_MAX, TIER_DEFAULT_LIMITS } from '@svc/protocol';
import { recordAuditEvent } from '../../audit/record.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { generateLicenseKey, newLicenseId } from '../../licenses/keys.ts';
import { presentLicense } from '../../licenses/present.ts';

/**
 * The app's ajv coerces types (for query strings), which on this body would turn a limit of
 * "" into null (unlimited) and true into 1. A limit must be a JSON integer from 1 or null,
 * so look at the raw body before coercion (and give one message for every bad limit).
 */
async function rejectCoercibleLimits(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return;
  for (const field of ['max_sessions', 'max_agents'] as const) {
    const v = (body as Record<string, unknown>)[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > LIMIT_MAX)
      throw badRequest(`Invalid body: ${field} must be a positive integer or null`);
  }
}

/**
 * POST /api/licenses (D10). Omitted limits take the tier's defaults; an explicit null
 * means unlimited. The plaintext key is in this response only; we keep its SHA-256.
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      preValidation: rejectCoercibleLimits,
      schema: {
        operationId: 'createLicense',
        tags: ['licenses'],
        summary: 'Create a license key',
        security: [{ identityToken: [] }],
        body: CreateLicenseBody,
        response: responses({ 201: CreatedLicenseResponse }, 400, 401, 403),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const now = ctx.now();
      const expiresAt = body.expires_at ? new Date(body.expires_at) : null;
      // The date-time format admits a leap second (23:59:60), which Date cannot represent.
      if (expiresAt !== null && Number.isNaN(expiresAt.getTime()))
        throw badRequest('Invalid body: expires_at is not a valid date');
      if (expiresAt !== null && expiresAt.getTime() <= now.getTime())
        throw badRequest('expires_at must be in the future');
      const defaults = TIER_DEFAULT_LIMITS[body.tier];
      const actor = actorOf(userOf(request));
      const key = generateLicenseKey(body.tier);
      const { row, event } = await ctx.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('licenses')
          .values({
            id: newLicenseId(),
            key_prefix: key.prefix,
            key_hash: key.hash,
            tier: body.tier,
            client_id: body.client_id,
            name: body.name,
            description: body.description ?? null,
            max_sessions: body.max_sessions === undefined ? defaults.max_sessions : body.max_sessions,
            max_agents: body.max_agents === undefined ? defaults.max_agents : body.max_agents,
            expires_at: expiresAt,
            revoked_at: null,
            created_by: actor,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        const event = await recordAuditEvent(trx, {
          event_type: 'license_created',
          actor,
          client_id: row.client_id,
          data: {
            license_id: row.id,
            key_prefix: row.key_prefix,
            tier: row.tier,
            name: row.name,
            max_sessions: row.max_sessions,
            max_agents: row.max_agents,
            expires_at: row.expires_at?.toISOString() ?? null,
          },
        });
        return { row, event };
      });
      ctx.keys.invalidate();
      ctx.events.publish(event);
      return reply.code(201).send({ license: { ...presentLicense(row, now), plaintext_key: key.plaintext } });
    },
  );
}
