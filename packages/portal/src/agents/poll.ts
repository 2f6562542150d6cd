import { sql } from 'kysely';
import { MAX_COMMANDS_PER_POLL } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { forbidden, notFound } from '../errors.ts';
import { claimCtes, DELIVERY_ORDER, type ClaimedRow } from './claim.ts';
import { AGENT_UNREGISTERED } from './heartbeat.ts';

/** Find an agent the key may act for: its own client's (any for the legacy key), registered. */
export async function agentForKey(ctx: AppContext, principal: LicensePrincipal | LegacyPrincipal, agentId: string) {
  const agent = await ctx.db.selectFrom('agents').select(['agent_id', 'client_id', 'deregistered_at']).where('agent_id', '=', agentId).executeTakeFirst();
  // Another client's agent is answered like a missing one: a key learns nothing about other tenants.
  if (!agent || (principal.kind === 'license' && agent.client_id !== principal.clientId)) throw notFound('Agent not found');
  if (agent.deregistered_at) throw forbidden(AGENT_UNREGISTERED);
  return agent;
}

/** GET /api/agent-commands?agent_id=: up to 50 pending commands, which become `sent`. */
export async function pollCommands(ctx: AppContext, principal: LicensePrincipal | LegacyPrincipal, agentId: string): Promise<ClaimedRow[]> {
  await agentForKey(ctx, principal, agentId);
  const result = await sql<ClaimedRow>`
    WITH ${claimCtes(agentId, MAX_COMMANDS_PER_POLL, ctx.now(), sql<boolean>`true`)}
    SELECT * FROM claimed ORDER BY ${DELIVERY_ORDER}
  `.execute(ctx.db);
  return result.rows;
}
