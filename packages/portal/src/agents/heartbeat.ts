import { sql } from 'kysely';
import { queryPrepared } from '../db/prepared.ts';
import { MAX_COMMANDS_PER_HEARTBEAT, type DeliveredCommand } from '@svc/protocol';
import type { LegacyPrincipal, LicensePrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { claimCtes, DELIVERY_ORDER, presentDelivered, type ClaimedRow } from './claim.ts';
import type { HeartbeatInput } from './heartbeat-input.ts';
import { registerAgent } from './register.ts';

export { AGENT_UNREGISTERED } from './resolve.ts';

type KeyHolder = LicensePrincipal | LegacyPrincipal;

/**
 * Record a heartbeat and hand out pending commands. The common case (a known, registered
 * agent) is ONE statement and one round trip: update the agent row and claim its
 * commands together. Anything else (first heartbeat, deregistered, a legacy agent whose
 * daemon now reports another client_id) takes the slower path, then the statement again.
 *
 * A license key acts on (its client, agent_id) only, so another client's agent with the
 * same id is simply another agent (D17). The legacy key acts only on agents the legacy key
 * registered (D18), found by id; its daemon's reported client_id is kept and followed.
 */
export async function recordHeartbeat(
  ctx: AppContext,
  principal: KeyHolder,
  hb: HeartbeatInput,
): Promise<{ receivedAt: Date; commands: DeliveredCommand[] }> {
  const now = ctx.now();
  const canReceive = principal.permissions.has('agent:commands');
  const set = sql`version = ${hb.version}, sent_at = ${hb.sentAt}, status = ${hb.status}, uptime_seconds = ${hb.uptimeSeconds},
          schedules = ${hb.schedules === null ? null : JSON.stringify(hb.schedules)}::jsonb,
          system_info = ${hb.systemInfo === null ? null : JSON.stringify(hb.systemInfo)}::jsonb,
          received_at = ${now}`;
  const update =
    principal.kind === 'license'
      ? sql`UPDATE agents SET ${set}
        WHERE client_id = ${principal.clientId} AND agent_id = ${hb.agentId} AND deregistered_at IS NULL
        RETURNING client_id`
      : sql`UPDATE agents SET ${set}
        WHERE agent_id = ${hb.agentId} AND license_id IS NULL AND client_id = COALESCE(${hb.clientId}::text, client_id) AND deregistered_at IS NULL
        RETURNING client_id`;
  const agent =
    principal.kind === 'license'
      ? sql<boolean>`c.client_id = ${principal.clientId} AND c.agent_id = ${hb.agentId}`
      : sql<boolean>`c.client_id = (SELECT client_id FROM hb) AND c.agent_id = ${hb.agentId}`;

  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await sql<ClaimedRow & { updated: number }>`
      WITH hb AS (
        ${update}
      ), ${claimCtes(agent, MAX_COMMANDS_PER_HEARTBEAT, now, sql<boolean>`${canReceive}::boolean AND EXISTS (SELECT 1 FROM hb)`)}
      SELECT (SELECT count(*) FROM hb)::int AS updated, claimed.* FROM (SELECT 1) AS one LEFT JOIN claimed ON true
      ORDER BY ${DELIVERY_ORDER}
    `.compile(ctx.db);
    // The hot path: a named prepared statement, planned once per connection.
    const rows = await queryPrepared<ClaimedRow & { updated: number }>(ctx.pool, 'heartbeat', result);
    if (rows[0]?.updated === 1) {
      const claimed = rows.filter((r) => r.id !== null);
      return { receivedAt: now, commands: claimed.map(presentDelivered) };
    }
    // Registered now (first heartbeat), or the row is there (a sibling registered it, or a
    // legacy agent moved to its new client_id): run the statement again. Refusals throw.
    if ((await registerAgent(ctx, principal, hb, now)) === 'registered') return { receivedAt: now, commands: [] };
  }
  throw new Error(`heartbeat for ${hb.agentId} could not be recorded`);
}
