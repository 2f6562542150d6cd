import { sql } from 'kysely';
import { queryPrepared } from '../db/prepared.ts';
import { MAX_COMMANDS_PER_HEARTBEAT, type DeliveredCommand } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { forbidden } from '../errors.ts';
import { claimCtes, DELIVERY_ORDER, presentDelivered, type ClaimedRow } from './claim.ts';
import type { HeartbeatInput } from './heartbeat-input.ts';
import { registerAgent } from './register.ts';

export const AGENT_UNREGISTERED = 'Agent unregistered: this agent was deregistered on the portal; re-enable it there to resume';
export const AGENT_OTHER_CLIENT = 'Agent belongs to another client';

type KeyHolder = LicensePrincipal | LegacyPrincipal;

/**
 * Record a heartbeat and hand out pending commands. The common case (a known, registered
 * agent) is ONE statement and one round trip: update the agent row and claim its
 * commands together. Anything else (first heartbeat, deregistered, another client's
 * agent id) takes the slower path.
 */
export async function recordHeartbeat(ctx: AppContext, principal: KeyHolder, hb: HeartbeatInput): Promise<{ receivedAt: Date; commands: DeliveredCommand[] }> {
  const now = ctx.now();
  const canReceive = principal.permissions.has('agent:commands');
  const anyClient = principal.kind === 'legacy';
  const keyClient = principal.kind === 'license' ? principal.clientId : null;

  for (let attempt = 0; attempt < 2; attempt++) {
    const result = await sql<ClaimedRow & { updated: number }>`
      WITH hb AS (
        UPDATE agents SET
          version = ${hb.version}, sent_at = ${hb.sentAt}, status = ${hb.status}, uptime_seconds = ${hb.uptimeSeconds},
          schedules = ${hb.schedules === null ? null : JSON.stringify(hb.schedules)}::jsonb,
          system_info = ${hb.systemInfo === null ? null : JSON.stringify(hb.systemInfo)}::jsonb,
          received_at = ${now}, key_tier = ${principal.tier},
          -- The legacy key has no client of its own: the daemon's reported client_id is kept,
          -- and follows the daemon's config, for agents not bound to a license.
          client_id = CASE WHEN ${anyClient}::boolean AND license_id IS NULL THEN COALESCE(${hb.clientId}::text, client_id) ELSE client_id END
        WHERE agent_id = ${hb.agentId} AND deregistered_at IS NULL
          AND (${anyClient}::boolean OR client_id IS NOT DISTINCT FROM ${keyClient})
        RETURNING agent_id
      ), ${claimCtes(hb.agentId, MAX_COMMANDS_PER_HEARTBEAT, now, sql<boolean>`${canReceive}::boolean AND EXISTS (SELECT 1 FROM hb)`)}
      SELECT (SELECT count(*) FROM hb)::int AS updated, claimed.* FROM (SELECT 1) AS one LEFT JOIN claimed ON true
      ORDER BY ${DELIVERY_ORDER}
    `.compile(ctx.db);
    // The hot path: a named prepared statement, planned once per connection.
    const rows = await queryPrepared<ClaimedRow & { updated: number }>(ctx.pool, 'heartbeat', result);
    if (rows[0]?.updated === 1) {
      const claimed = rows.filter((r) => r.id !== null);
      return { receivedAt: now, commands: claimed.map(presentDelivered) };
    }

    const existing = await ctx.db.selectFrom('agents').select(['client_id', 'deregistered_at']).where('agent_id', '=', hb.agentId).executeTakeFirst();
    if (existing?.deregistered_at) throw forbidden(AGENT_UNREGISTERED);
    if (existing && !anyClient) throw forbidden(AGENT_OTHER_CLIENT);
    if (!existing && (await registerAgent(ctx, principal, hb, now))) return { receivedAt: now, commands: [] };
    // Lost a race with a concurrent first heartbeat of the same agent: go round again.
  }
  throw new Error(`heartbeat for ${hb.agentId} could not be recorded`);
}
