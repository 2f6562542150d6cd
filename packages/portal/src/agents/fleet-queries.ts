import { isIP } from 'node:net';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AgentCounts, AgentState } from '@svc/protocol';
import type { AgentsTable, Database } from '../db/schema.ts';

/**
 * The fleet listing's SQL (GET /api/health?agents=true): its filters, its pages and its counts.
 * Apart from agents/queries.ts, which holds the rest of the area's statements.
 */

type Db = Kysely<Database>;

/** The fleet listing's filters; `state` null: the registered agents (online and stale). */
export interface FleetFilter {
  /** null: every client. */
  clientIds: string[] | null;
  state: AgentState | null;
  group?: string | undefined;
  version?: string | undefined;
  /** The search term (protocol AgentsQuery.q): host name, address or agent id. */
  q?: string | undefined;
  /** Heartbeats received at or before this are stale. */
  staleBefore: Date;
}

/** Agents matching everything but the state (the counts are taken over these). */
function fleetScope(db: Db, f: FleetFilter) {
  let q = db.selectFrom('agents');
  if (f.clientIds !== null) q = q.where('agents.client_id', 'in', f.clientIds);
  if (f.version !== undefined) q = q.where('agents.version', '=', f.version);
  const group = f.group;
  if (group !== undefined)
    q = q.where(({ exists, selectFrom }) =>
      exists(
        selectFrom('agent_groups')
          .select(sql`1`.as('one'))
          .whereRef('agent_groups.client_id', '=', 'agents.client_id')
          .whereRef('agent_groups.agent_id', '=', 'agents.agent_id')
          .where('agent_groups.group_name', '=', group),
      ),
    );
  if (f.q !== undefined) q = q.where(searchMatches(f.q));
  return q;
}

/**
 * A host name containing the term, an address equal to it (a whole address) or starting with
 * it, an agent id starting with it; case aside. The term's alphabet (AGENT_SEARCH_PATTERN) has
 * no `%` or `\\`: only `_` needs escaping. Host names and addresses are read from the stored
 * telemetry, kept as the daemon sent it, so a non-array `ip_addresses` is read as none. A scan
 * of the scoped rows: 1,000 agents answer in a few milliseconds (docs/api.md, fleet search).
 */
function searchMatches(term: string) {
  const lower = term.toLowerCase();
  const like = lower.replaceAll('_', '\\_');
  const address = isIP(term) !== 0 ? sql`lower(ip) = ${lower}` : sql`lower(ip) LIKE ${`${like}%`}`;
  return sql<boolean>`(
    lower(agents.system_info->>'hostname') LIKE ${`%${like}%`}
    OR lower(agents.agent_id) LIKE ${`${like}%`}
    OR EXISTS (
      SELECT 1 FROM jsonb_array_elements_text(
        CASE WHEN jsonb_typeof(agents.system_info->'ip_addresses') = 'array'
          THEN agents.system_info->'ip_addresses' ELSE '[]'::jsonb END
      ) AS ip WHERE ${address}
    )
  )`;
}

/** Agents matching `f` in (agent_id, client_id) order, after `cursor`. */
export async function fleetPage(
  db: Db,
  f: FleetFilter,
  limit: number,
  cursor?: string,
): Promise<{ rows: Selectable<AgentsTable>[]; more: boolean }> {
  let q = fleetScope(db, f).selectAll('agents');
  if (f.state === 'deregistered') q = q.where('deregistered_at', 'is not', null);
  else q = q.where('deregistered_at', 'is', null);
  if (f.state === 'online') q = q.where('received_at', '>', f.staleBefore);
  if (f.state === 'stale') q = q.where('received_at', '<=', f.staleBefore);
  const rows = await (cursor !== undefined ? q.where('agent_id', '>', cursor) : q)
    .orderBy('agent_id')
    .orderBy('client_id')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  let more = rows.length > limit;
  // A page never ends between the clients of one agent id.
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
  return { rows: page, more };
}

/** How many agents matching `f` (state aside) are online, stale and deregistered: one scan. */
export async function fleetCounts(db: Db, f: FleetFilter): Promise<AgentCounts> {
  const row = await fleetScope(db, f)
    .select([
      sql<number>`count(*) FILTER (WHERE deregistered_at IS NULL AND received_at > ${f.staleBefore})::int`.as('online'),
      sql<number>`count(*) FILTER (WHERE deregistered_at IS NULL AND received_at <= ${f.staleBefore})::int`.as('stale'),
      sql<number>`count(*) FILTER (WHERE deregistered_at IS NOT NULL)::int`.as('deregistered'),
    ])
    .executeTakeFirstOrThrow();
  return { online: row.online, stale: row.stale, deregistered: row.deregistered };
}

/** A command an agent runs now (acked), with the agent it belongs to. */
export interface RunningRow {
  client_id: string;
  agent_id: string;
  id: string;
  command_type: string;
  acked_at: Date;
  progress_task: string | null;
  progress_percent: number | null;
  progress_at: Date | null;
  progress_stage: string | null;
}

/** The acked commands of the page's agents, oldest first: one statement over the partial index of acked commands. */
export async function runningCommands(
  db: Db,
  agents: readonly { client_id: string; agent_id: string }[],
): Promise<RunningRow[]> {
  if (agents.length === 0) return [];
  const { rows } = await sql<RunningRow>`
    SELECT c.client_id, c.agent_id, c.id, c.command_type, c.acked_at, c.progress_task, c.progress_percent, c.progress_at,
      c.progress_stage
    FROM unnest(${agents.map((a) => a.client_id)}::text[], ${agents.map((a) => a.agent_id)}::text[]) AS k(client_id, agent_id)
    JOIN agent_commands c ON c.client_id = k.client_id AND c.agent_id = k.agent_id AND c.status = 'acked'
    ORDER BY c.acked_at, c.id`.execute(db);
  return rows;
}
