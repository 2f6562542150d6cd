import { CompiledQuery } from 'kysely';
import { MAX_COMMANDS_PER_POLL } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { type ClaimedRow, POLL_SQL } from './claim-sql.ts';
import { agentForKey } from './resolve.ts';

/** GET /api/agent-commands?agent_id=: up to 50 pending commands, which become `sent`. */
export async function pollCommands(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  agentId: string,
): Promise<ClaimedRow[]> {
  const agent = await agentForKey(ctx.db, principal, agentId);
  const result = await ctx.db.executeQuery<ClaimedRow>(
    CompiledQuery.raw(POLL_SQL, [agent.client_id, agent.agent_id, MAX_COMMANDS_PER_POLL, ctx.now()]),
  );
  return result.rows;
}
