/**
 * The statements that hand out an agent's pending commands, as plain SQL text with numbered
 * parameters: one definition that the portal runs (heartbeat.ts, poll.ts) and
 * bench/heartbeat.ts runs as its baseline, so the two cannot drift apart.
 *
 * The claim picks up to a limit of commands in delivery order (priority descending, then
 * oldest first) with FOR UPDATE SKIP LOCKED, so two replicas answering the same agent at once
 * never deliver one command twice, and marks them `sent` in the same statement.
 */

/** A claimed command as the statements return it. */
export interface ClaimedRow {
  id: string;
  command_type: string;
  payload: Record<string, unknown>;
  priority: number;
  created_by: string;
  group_target: string | null;
  created_at: Date;
}

/** `agent` selects the agent's commands on alias `c`; `guard` gates the claim. */
function claimCtes(p: { agent: string; guard: string; limit: string; now: string }): string {
  return `picked AS (
    SELECT c.id FROM agent_commands c
    WHERE ${p.agent} AND c.status = 'pending' AND ${p.guard}
    ORDER BY c.priority DESC, c.created_at, c.id
    LIMIT ${p.limit}
    FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE agent_commands c SET status = 'sent', sent_at = ${p.now}
    FROM picked WHERE c.id = picked.id
    RETURNING c.id, c.command_type, c.payload, c.priority, c.created_by, c.group_target, c.created_at
  )`;
}

/**
 * UPDATE ... RETURNING has no order: the statement that reads `claimed` restores delivery
 * order itself. In SQL, not in JavaScript: created_at has microseconds, a Date only
 * milliseconds, and the answer must follow the same order the LIMIT picked by.
 */
const DELIVERY_ORDER = 'claimed.priority DESC, claimed.created_at, claimed.id';

/** The heartbeat statement's parameters, in $n order. */
export const HEARTBEAT_PARAMETERS = [
  'version',
  'sent_at',
  'status',
  'uptime_seconds',
  /** JSON text or null. */
  'schedules',
  /** JSON text or null. */
  'system_info',
  'now',
  /** A license key: its client. The legacy key: the client_id its daemon reports, or null. */
  'client_id',
  'agent_id',
  /** The key holds agent:commands. */
  'can_receive',
  'limit',
] as const;
export type HeartbeatParameter = (typeof HEARTBEAT_PARAMETERS)[number];

/**
 * Update the agent row and claim its commands in one statement and one round trip. `updated`
 * is 1 when the agent was there and registered; with 0 nothing was claimed either.
 */
function heartbeatStatement(agentRow: string, claimAgent: string): string {
  return `WITH hb AS (
    UPDATE agents SET version = $1, sent_at = $2, status = $3, uptime_seconds = $4,
      schedules = $5::jsonb, system_info = $6::jsonb, received_at = $7
    WHERE ${agentRow} AND deregistered_at IS NULL
    RETURNING client_id
  ), ${claimCtes({ agent: claimAgent, guard: '$10::boolean AND EXISTS (SELECT 1 FROM hb)', limit: '$11', now: '$7' })}
  SELECT (SELECT count(*) FROM hb)::int AS updated, claimed.* FROM (SELECT 1) AS one LEFT JOIN claimed ON true
  ORDER BY ${DELIVERY_ORDER}`;
}

export const HEARTBEAT_SQL = {
  /**
   * A license key acts on (its client, agent_id) only (README "Tenant boundaries: agents, groups and the legacy key"), and only once a license key
   * registered or took over the agent: a legacy-registered row takes the slow path.
   */
  license: heartbeatStatement(
    'client_id = $8 AND agent_id = $9 AND license_id IS NOT NULL',
    'c.client_id = $8 AND c.agent_id = $9',
  ),
  /** The legacy key acts on the agents it registered, found by id, following the reported client_id (docs/api.md#credentials). */
  legacy: heartbeatStatement(
    'agent_id = $9 AND license_id IS NULL AND client_id = COALESCE($8::text, client_id)',
    'c.client_id = (SELECT client_id FROM hb) AND c.agent_id = $9',
  ),
} as const;

export function heartbeatValues(values: Record<HeartbeatParameter, unknown>): unknown[] {
  return HEARTBEAT_PARAMETERS.map((name) => values[name]);
}

/** The agent poll: $1 client_id, $2 agent_id, $3 limit, $4 now. */
export const POLL_SQL = `WITH ${claimCtes({ agent: 'c.client_id = $1 AND c.agent_id = $2', guard: 'true', limit: '$3', now: '$4' })}
  SELECT * FROM claimed ORDER BY ${DELIVERY_ORDER}`;
