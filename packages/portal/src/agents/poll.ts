import { CompiledQuery } from 'kysely';
import { MAX_COMMANDS_PER_POLL } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { type Claim, type ClaimedRow, claimOf, POLL_SQL } from './claim-sql.ts';
import { agentForKey } from './resolve.ts';

/** GET /api/agent-commands?agent_id=: up to 50 pending commands, which become `sent`, and the running ones to stop. */
export async function pollCommands(
  ctx: AppContext,
  principal: LicensePrincipal | LegacyPrincipal,
  agentId: string,
): Promise<Claim> {
  return ctx.db.transaction().execute(async (trx) => {
    // Locked: a license key taking a legacy agent over waits for this poll, or this poll for
    // the takeover (and then finds no agent), so the legacy key never claims after it.
    const agent = await agentForKey(trx, principal, agentId, { lock: true });
    const result = await trx.executeQuery<ClaimedRow>(
      CompiledQuery.raw(POLL_SQL, [agent.client_id, agent.agent_id, MAX_COMMANDS_PER_POLL, ctx.now()]),
    );
    return claimOf(result.rows);
  });
}
