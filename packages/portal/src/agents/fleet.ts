import { type AgentCounts, type AgentsQuery, type AgentView, STALE_THRESHOLD_SECONDS } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { presentAgent } from './present.ts';
import { type FleetFilter, fleetCounts, fleetPage, runningCommands } from './fleet-queries.ts';

const NO_COUNTS: AgentCounts = { online: 0, stale: 0, deregistered: 0 };

/**
 * The fleet view: registered agents by default, or those in one state, narrowed by client,
 * group, version and a search term (host name, address or agent id), in (agent_id, client_id) order, paged by agent_id, with the count of
 * each state. One agent id may exist under several clients: a page never ends between
 * them, so it may run over `limit` by the number of clients sharing its last id. Each agent
 * carries the commands it runs now (acked) with their latest progress.
 */
export async function listAgents(
  ctx: AppContext,
  user: UserPrincipal,
  query: Omit<AgentsQuery, 'agents'>,
): Promise<{ agents: AgentView[]; next_cursor: string | null; counts: AgentCounts }> {
  const clientIds = narrowScope(user.clientIds, query.client_id);
  if (clientIds !== null && clientIds.length === 0) return { agents: [], next_cursor: null, counts: NO_COUNTS };
  const now = ctx.now();
  const filter: FleetFilter = {
    clientIds,
    state: query.state ?? null,
    group: query.group,
    version: query.version,
    q: query.q,
    // presentAgent calls an agent stale when its whole-second age exceeds the threshold.
    staleBefore: new Date(now.getTime() - (STALE_THRESHOLD_SECONDS + 1) * 1000),
  };
  const [{ rows, more }, counts] = await Promise.all([
    fleetPage(ctx.db, filter, query.limit ?? 1000, query.cursor),
    fleetCounts(ctx.db, filter),
  ]);
  const running = Map.groupBy(await runningCommands(ctx.db, rows), (c) => `${c.client_id}\n${c.agent_id}`);
  return {
    agents: rows.map((r) => presentAgent(r, now, running.get(`${r.client_id}\n${r.agent_id}`) ?? [])),
    next_cursor: more ? (rows.at(-1)?.agent_id ?? null) : null,
    counts,
  };
}

/** The caller's clients (null: all), narrowed to `clientId` when given; a client outside them matches nothing. */
function narrowScope(scope: string[] | null, clientId: string | undefined): string[] | null {
  if (clientId === undefined) return scope;
  return scope === null || scope.includes(clientId) ? [clientId] : [];
}
