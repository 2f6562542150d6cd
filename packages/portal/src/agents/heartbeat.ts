import { CompiledQuery } from 'kysely';
import { MAX_COMMANDS_PER_HEARTBEAT, type ReceivedHeartbeat } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import { queryPrepared } from '../db/prepared.ts';
import { type ClaimedRow, claimOf, HEARTBEAT_SQL, heartbeatValues, type ScheduleRevisionColumns } from './claim-sql.ts';
import { heartbeatSlowPath, storedState } from './first-heartbeat.ts';
import type { HeartbeatAnswer, KeyHolder } from './heartbeat-writer.ts';
import { presentClaim } from './present.ts';

/** The client and schedules revision a heartbeat statement's first row carries. */
export function schedulesOf(row: ScheduleRevisionColumns | undefined): HeartbeatAnswer['schedules'] {
  if (row === undefined || row.hb_client_id === null) return null;
  return { clientId: row.hb_client_id, revision: row.schedules_revision ?? 0 };
}

/**
 * Record a heartbeat and hand out pending commands. The common case (a known, registered
 * agent) is ONE statement and one round trip: update the agent row and claim its
 * commands together. Anything else (first heartbeat, deregistered, a legacy-registered
 * agent its client's license key takes over, a legacy agent whose daemon now reports
 * another client_id) takes the slow path, which runs the same statement under the row's lock.
 *
 * A license key acts on (its client, agent_id) only, so another client's agent with the
 * same id is simply another agent (docs/api.md#ids-are-per-client). The legacy key acts only on agents the legacy key
 * registered (docs/api.md#credentials), found by id; its daemon's reported client_id is kept and followed.
 */
export async function recordHeartbeat(
  ctx: AppContext,
  principal: KeyHolder,
  hb: ReceivedHeartbeat,
  now: Date = ctx.now(),
): Promise<HeartbeatAnswer> {
  const statement = singleStatement(principal, hb, now);
  // The hot path: a named prepared statement, planned once per connection.
  const rows = await queryPrepared<ClaimedRow & ScheduleRevisionColumns & { updated: number }>(
    ctx.pool,
    'heartbeat',
    statement,
  );
  if (rows[0]?.updated === 1)
    return { receivedAt: now, ...presentClaim(claimOf(rows)), schedules: schedulesOf(rows[0]) };
  const claimed = await heartbeatSlowPath(ctx, principal, hb, now, statement);
  return { receivedAt: now, ...presentClaim(claimed), schedules: null };
}

/** What a heartbeat writes and claims with, the same for the single statement and a batch. */
export function heartbeatFields(principal: KeyHolder, hb: ReceivedHeartbeat, now: Date) {
  return {
    ...storedState(hb),
    now,
    client_id: principal.kind === 'license' ? principal.clientId : hb.clientId,
    agent_id: hb.agentId,
    can_receive: principal.permissions.has('agent:commands'),
  };
}

/** The one-heartbeat statement (also what the slow path runs again under the row's lock). */
export function singleStatement(principal: KeyHolder, hb: ReceivedHeartbeat, now: Date): CompiledQuery {
  return CompiledQuery.raw(
    principal.kind === 'license' ? HEARTBEAT_SQL.license : HEARTBEAT_SQL.legacy,
    heartbeatValues({ ...heartbeatFields(principal, hb, now), limit: MAX_COMMANDS_PER_HEARTBEAT }),
  );
}
