import { AmbiguousSessionBody, BenchmarkResponse, SessionQuery } from '@svc/protocol';
import { resolveCredential } from '../../auth/credentials.ts';
import type { App, AppContext } from '../../context.ts';
import { unauthorized } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { accessSession, parseSessionId } from '../../sessions/access.ts';
import { benchmarkSession } from '../../sessions/benchmark-session.ts';
import { presentBenchmark } from '../../sessions/present.ts';

/**
 * GET /api/benchmark?session=<id> (docs/api.md#sessions): the session's risk score, findings per host and
 * critical/high ratio, each with a coarse percentile among the latest sessions of every
 * other client's client/target pairs, from a periodically rebuilt snapshot (definitions and
 * guarantee in sessions/benchmark.ts and benchmark-snapshot.ts). Permission `benchmark`
 * (business and msp keys, the legacy key, JWT users whose tier has it; a professional key
 * gets 403 `Insufficient permissions for benchmark`); the session must be in the caller's
 * scope (otherwise the 404 of a missing id; `client_id` names the client when the id is
 * ambiguous, docs/api.md#ids-are-per-client). Only counts and percentiles leave the database, never a peer's data.
 */
export default function register(app: App, ctx: AppContext): void {
  app.get(
    '/benchmark',
    {
      schema: {
        operationId: 'benchmarkSession',
        tags: ['sessions'],
        summary: 'Benchmark a session against its peers',
        security: [{ identityToken: [] }, { apiKey: [] }],
        querystring: SessionQuery,
        response: responses({ 200: BenchmarkResponse, 409: AmbiguousSessionBody }, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const sessionId = parseSessionId(request.query.session);
      const principal = await resolveCredential(ctx, request, 'benchmark');
      if (principal === null) throw unauthorized();
      const session = await accessSession(ctx, principal, sessionId, { clientId: request.query.client_id });
      const fetchedAt = ctx.now();
      const benchmark = await benchmarkSession(ctx, { clientId: session.client_id, sessionId });
      return presentBenchmark(sessionId, benchmark, fetchedAt);
    },
  );
}
