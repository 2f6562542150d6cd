import type { Selectable } from 'kysely';
import { STALE_THRESHOLD_SECONDS, type AgentView } from '@svc/protocol';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { AgentsTable } from '../db/schema.ts';
import { clientOut } from './resolve.ts';

export function presentAgent(row: Selectable<AgentsTable>, now: Date): AgentView {
  const age = Math.max(0, Math.floor((now.getTime() - row.received_at.getTime()) / 1000));
  return {
    agent_id: row.agent_id,
    version: row.version,
    timestamp: row.sent_at.toISOString(),
    status: row.status,
    uptime_seconds: row.uptime_seconds,
    client_id: clientOut(row.client_id),
    schedules: row.schedules,
    system_info: row.system_info,
    received_at: row.received_at.toISOString(),
    first_seen_at: row.first_seen_at.toISOString(),
    deregistered_at: row.deregistered_at?.toISOString() ?? null,
    is_stale: age > STALE_THRESHOLD_SECONDS,
    age_seconds: age,
  };
}

/**
 * The fleet view: registered agents only, in (agent_id, client_id) order, paged by agent_id.
 * One agent id may exist under several clients (D17): a page never ends between them, so
 * it may run over `limit` by the number of clients sharing its last id.
 */
export async function listAgents(
  ctx: AppContext,
  user: UserPrincipal,
  limit: number,
  cursor?: string,
): Promise<{ agents: AgentView[]; next_cursor: string | null }> {
  let q = ctx.db.selectFrom('agents').selectAll().where('deregistered_at', 'is', null);
  if (user.clientIds !== null) {
    if (user.clientIds.length === 0) return { agents: [], next_cursor: null };
    q = q.where('client_id', 'in', user.clientIds);
  }
  const rows = await (cursor !== undefined ? q.where('agent_id', '>', cursor) : q)
    .orderBy('agent_id')
    .orderBy('client_id')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  let more = rows.length > limit;
  if (more && last !== undefined && rows[limit]?.agent_id === last.agent_id) {
    page.push(
      ...(await q
        .where('agent_id', '=', last.agent_id)
        .where('client_id', '>', last.client_id)
        .orderBy('client_id')
        .execute()),
    );
    more = (await q.where('agent_id', '>', last.agent_id).select('agent_id').limit(1).executeTakeFirst()) !== undefined;
  }
  const now = ctx.now();
  return { agents: page.map((r) => presentAgent(r, now)), next_cursor: more ? (last?.agent_id ?? null) : null };
}
