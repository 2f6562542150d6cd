import type { FastifyRequest } from 'fastify';
import { CreatedLicenseResponse, CreateLicenseBody, LIMIT_MAX } from '@svc/protocol';
import { requireUser, userOf } from '../../auth/guards.ts';
import { actorOf } from '../../auth/principal.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { createLicense } from '../../licenses/create.ts';
import { presentCreatedLicense } from '../../licenses/present.ts';

/**
 * A limit must be a JSON integer from 1, or null. Checked on the raw body before the schema so that
 * every bad limit (0, "", true, 1.5, too large) gets one message instead of ajv's per-keyword ones.
 */
async function rejectBadLimits(request: FastifyRequest): Promise<void> {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return;
  for (const field of ['max_sessions', 'max_agents'] as const) {
    const v = (body as Record<string, unknown>)[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > LIMIT_MAX)
      throw badRequest(`Invalid body: ${field} must be a positive integer or null`);
  }
}

/** The date-time format admits a leap second (23:59:60), which a Date cannot hold. */
function expiryOf(body: CreateLicenseBody): Date | null {
  if (!body.expires_at) return null;
  const expiresAt = new Date(body.expires_at);
  if (Number.isNaN(expiresAt.getTime())) throw badRequest('Invalid body: expires_at is not a valid date');
  return expiresAt;
}

/** POST /api/licenses (docs/api.md#licenses): the plaintext key is in this response only. */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/licenses',
    {
      onRequest: requireUser(ctx, { adminOnly: true }),
      preValidation: rejectBadLimits,
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
      const input = { ...request.body, expires_at: expiryOf(request.body) };
      const by = { actor: actorOf(userOf(request)), now: ctx.now() };
      const { row, plaintextKey } = await createLicense(ctx, input, by);
      return reply.code(201).send({ license: presentCreatedLicense(row, by.now, plaintextKey) });
    },
  );
}
