import { Type } from '@sinclair/typebox';
import { ErrorBody } from '@svc/protocol';
import type { App, AppContext } from '../../context.ts';
import { bearerTokenOf, credentialsOf } from '../../http/credentials.ts';
import { unauthorized } from '../../http/errors.ts';
import { sendMetrics } from '../../metrics/http.ts';
import { tokenMatcher } from '../../metrics/token.ts';

/** The Prometheus text format, version 0.0.4 (prom-client's Registry.contentType). */
const METRICS_CONTENT = {
  200: {
    description: 'The metrics in the Prometheus text exposition format',
    content: { 'text/plain': { schema: Type.String({ description: 'Prometheus text format 0.0.4' }) } },
  },
};

/**
 * GET /metrics on the portal's own port, registered only when SVC_METRICS_TOKEN is set (else
 * a 404 like any unknown path). `Authorization: Bearer <token>`, compared in constant time;
 * anything else is the plain 401. Outside /api, where scrapers conventionally look, like /readyz.
 */
export default function register(app: App, ctx: AppContext): void {
  const { metrics } = ctx;
  const { token } = ctx.config.metrics;
  if (metrics === null || token === null) return;
  const matches = tokenMatcher(token);
  app.get(
    '/metrics',
    {
      onRequest: async (request, reply) => {
        if (matches(bearerTokenOf(credentialsOf(request.headers)))) return;
        void reply.header('www-authenticate', 'Bearer realm="metrics"');
        throw unauthorized();
      },
      schema: {
        operationId: 'scrapeMetrics',
        security: [{ bearer: [] }],
        tags: ['health'],
        summary: 'Prometheus metrics (only when SVC_METRICS_TOKEN is set)',
        description:
          'Requests by route and status, heartbeats, agent commands, webhook deliveries and queue, upload bytes, database pool, event loop and process (docs/metrics.md). `Authorization: Bearer <SVC_METRICS_TOKEN>`; without it, or with another token: 401. Not served (404) unless SVC_METRICS_TOKEN is set; SVC_METRICS_LISTEN serves it on a separate address without a token.',
        response: { ...METRICS_CONTENT, 401: ErrorBody },
      },
    },
    async (_request, reply) => sendMetrics(metrics, reply),
  );
}
