import { sql } from 'kysely';
import { MAX_COMMANDS_PER_POLL } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { claimCtes, DELIVERY_ORDER, type ClaimedRow } from './claim.ts';
import { agentForKey } from './resolve.ts';

/** GET /api/agent-commands?agent_id=: up to 50 pending commands, which become `sent`. */
export async function pollCommands(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  agentId: string,
): Promise<ClaimedRow[]> {
  const agent = await agentForKey(ctx.db, principal, agentId);
  const result = await sql<ClaimedRow>`
    WITH ${claimCtes(sql<boolean>`c.client_id = ${agent.client_id} AND c.agent_id = ${agent.agent_id}`, MAX_COMMANDS_PER_POLL, ctx.now(), sql<boolean>`true`)}
    SELECT * FROM claimed ORDER BY ${DELIVERY_ORDER}
  `.execute(ctx.db);
  return result.rows;
}
