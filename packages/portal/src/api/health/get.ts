import { Type } from '@sinclair/typebox';
import { AgentListResponse, AgentsQuery, HealthResponse, STALE_THRESHOLD_SECONDS } from '@svc/protocol';
import { listAgents } from '../../agents/fleet.ts';
import { requireUser, userOf } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { responses } from '../../http/responses.ts';

/**
 * A liveness probe must keep answering whatever a monitor appends (cache busters such as
 * `?_=123`, `?agents=false`): unknown parameters are allowed and only `agents=true` selects
 * the fleet view; the fleet parameters keep their rules.
 */
const HealthQuery = Type.Object(
  { ...AgentsQuery.properties, agents: Type.Optional(Type.String({ description: '`true` for the agent fleet view' })) },
  { additionalProperties: true },
);

/**
 * GET /api/health: public liveness, which never touches the database so it stays fast.
 * GET /api/health?agents=true: the fleet view (identity JWT with health:agents; scoped users
 * see their clients' agents): registered agents, or one `state`, narrowed by `client_id`,
 * `group` and `version`, paged by `limit` + `cursor`, with the count of agents per state.
 */
export default function register(app: App, ctx: AppContext): void {
  const fleetGuard = requireUser(ctx, { permission: 'health:agents' });
  app.get(
    '/health',
    {
      onRequest: async function (request, reply) {
        if ((request.query as { agents?: unknown }).agents === 'true') await fleetGuard.call(this, request, reply);
      },
      schema: {
        operationId: 'getHealth',
        security: [{}, { identityToken: [] }],
        tags: ['health', 'agents'],
        summary: 'Portal health (public), or the agent fleet with ?agents=true (admin JWT)',
        querystring: HealthQuery,
        // The fleet answer has `agents`; the health answer does not: the fleet schema goes first.
        response: responses({ 200: Type.Union([AgentListResponse, HealthResponse]) }, 400, 401, 403),
      },
    },
    async (request) => {
      if (request.query.agents === 'true') {
        const { agents: _flag, ...query } = request.query;
        const { agents, next_cursor, counts } = await listAgents(ctx, userOf(request), query);
        return { agents, stale_threshold_seconds: STALE_THRESHOLD_SECONDS, next_cursor, counts };
      }
      return {
        status: 'ok' as const,
        version: ctx.version,
        timestamp: ctx.now().toISOString(),
        environment: ctx.config.environment,
      };
    },
  );
}
