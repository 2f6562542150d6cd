import type { Selectable } from 'kysely';
import { STALE_THRESHOLD_SECONDS, type AgentView } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { AgentsTable } from '../db/schema.ts';

export function presentAgent(row: Selectable<AgentsTable>, now: Date): AgentView {
  const age = Math.max(0, Math.floor((now.getTime() - row.received_at.getTime()) / 1000));
  return {
    agent_id: row.agent_id,
    version: row.version,
    timestamp: row.sent_at.toISOString(),
    status: row.status,
    uptime_seconds: row.uptime_seconds,
    client_id: row.client_id,
    schedules: row.schedules,
    system_info: row.system_info,
    received_at: row.received_at.toISOString(),
    first_seen_at: row.first_seen_at.toISOString(),
    deregistered_at: row.deregistered_at?.toISOString() ?? null,
    is_stale: age > STALE_THRESHOLD_SECONDS,
    age_seconds: age,
  };
}

/** The fleet view: registered agents only, in agent_id order, paged by agent_id. */
export async function listAgents(ctx: AppContext, user: UserPrincipal, limit: number, cursor?: string): Promise<{ agents: AgentView[]; next_cursor: string | null }> {
  let q = ctx.db.selectFrom('agents').selectAll().where('deregistered_at', 'is', null);
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return { agents: [], next_cursor: null };
    q = q.where('client_id', 'in', user.clientIds);
  }
  if (cursor !== undefined) q = q.where('agent_id', '>', cursor);
  const rows = await q.orderBy('agent_id').limit(limit + 1).execute();
  const now = ctx.now();
  const page = rows.slice(0, limit);
  return { agents: page.map((r) => presentAgent(r, now)), next_cursor: rows.length > limit ? (page.at(-1)?.agent_id ?? null) : null };
}
