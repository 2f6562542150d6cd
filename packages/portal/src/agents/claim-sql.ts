/**
 * The statements that hand out an agent's pending commands, as plain SQL text with numbered
 * parameters: one definition that the portal runs (heartbeat.ts, heartbeat-batch.ts, poll.ts) and
 * bench/heartbeat.ts runs as its baseline, so the two cannot drift apart.
 *
 * The claim picks up to a limit of commands in delivery order (priority descending, then
 * oldest first) with FOR UPDATE SKIP LOCKED, so two replicas answering the same agent at once
 * never deliver one command twice, and marks them `sent` in the same statement. It picks
 * `pending` commands and `sent` ones not acknowledged within the redelivery window (the answer
 * that carried them may have been lost), never an expired one (docs/agent/commands.md, "Cancel,
 * expiry and redelivery"). The same statement lists the agent's running commands an admin
 * cancelled (`cancel`, JSON, null when none), so a heartbeat stays one round trip.
 */

import { REDELIVERY_WINDOW_SECONDS } from '@svc/protocol';

/** A cancelled running command: who cancelled it and why (present.ts words it for the agent). */
export interface CancelRow {
  id: number;
  by: string;
  reason: string | null;
}

/** A claimed command as the statements return it. */
export interface ClaimedRow {
  id: string;
  command_type: string;
  payload: Record<string, unknown>;
  priority: number;
  created_by: string;
  group_target: string | null;
  created_at: Date;
  /** The agent's cancelled running commands (every row of one answer carries the same list). */
  cancel: CancelRow[] | null;
}

/** What one answer hands the agent: the claimed commands, and the running ones to stop. */
export interface Claim {
  commands: ClaimedRow[];
  cancel: CancelRow[];
}

/** The statement's rows as an answer: a row without id is the empty claim's placeholder. */
export function claimOf(rows: readonly ClaimedRow[]): Claim {
  return { commands: rows.filter((r) => r.id !== null), cancel: rows[0]?.cancel ?? [] };
}

/** Delivered now: pending, or sent and not acknowledged for the redelivery window; in both cases not expired. */
function deliverable(now: string): string {
  return `(c.status = 'pending' OR (c.status = 'sent' AND c.sent_at <= ${now}::timestamptz - interval '${REDELIVERY_WINDOW_SECONDS} seconds'))
      AND c.expires_at > ${now}`;
}

/** The agent's acked commands with a cancellation asked (`agent` on alias `c`), as a JSON array or null. */
function cancelList(agent: string, guard: string): string {
  return `(SELECT jsonb_agg(jsonb_build_object('id', c.id, 'by', c.cancel_requested_by, 'reason', c.cancel_reason) ORDER BY c.id)
      FROM agent_commands c
      WHERE ${agent} AND c.status = 'acked' AND c.cancel_requested_at IS NOT NULL AND ${guard})`;
}

/** `agent` selects the agent's commands on alias `c`; `guard` gates the claim. */
function claimCtes(p: { agent: string; guard: string; limit: string; now: string }): string {
  return `picked AS (
    SELECT c.id FROM agent_commands c
    WHERE ${p.agent} AND ${deliverable(p.now)} AND ${p.guard}
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
 * The agent's client's portal schedules revision (null: none yet), read by primary key in the
 * heartbeat's own statement: the answer carries the schedules only when it differs from the
 * revision the agent holds (agents/portal-schedules.ts).
 */
const SCHEDULES_REVISION =
  '(SELECT r.revision FROM agent_schedule_revisions r WHERE r.client_id = (SELECT client_id FROM hb))::float8';

/** What the heartbeat statements add to each row: the agent's client and its schedules revision. */
export interface ScheduleRevisionColumns {
  hb_client_id: string | null;
  schedules_revision: number | null;
}

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
  SELECT (SELECT count(*) FROM hb)::int AS updated, (SELECT client_id FROM hb) AS hb_client_id,
    ${SCHEDULES_REVISION} AS schedules_revision, claimed.*,
    ${cancelList(claimAgent, '$10::boolean AND EXISTS (SELECT 1 FROM hb)')} AS cancel
  FROM (SELECT 1) AS one LEFT JOIN claimed ON true
  ORDER BY ${DELIVERY_ORDER}`;
}

export const HEARTBEAT_SQL = {
  /**
   * A license key acts on (its client, agent_id) only (docs/security.md#tenant-boundaries-agents-groups-and-the-legacy-key), and only once a license key
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

/** The agent poll: $1 client_id, $2 agent_id, $3 limit, $4 now. One row without id when nothing is claimed. */
export const POLL_SQL = `WITH ${claimCtes({ agent: 'c.client_id = $1 AND c.agent_id = $2', guard: 'true', limit: '$3', now: '$4' })}
  SELECT claimed.*, ${cancelList('c.client_id = $1 AND c.agent_id = $2', 'true')} AS cancel
  FROM (SELECT 1) AS one LEFT JOIN claimed ON true
  ORDER BY ${DELIVERY_ORDER}`;

/** One heartbeat of a batch: the license-key heartbeat statement's values but the limit. */
export type BatchedHeartbeat = Record<Exclude<HeartbeatParameter, 'limit'>, unknown>;

/**
 * The license-key heartbeat statement for many agents at once (at most one heartbeat per
 * agent): one UPDATE of every registered agent's row and one claim per agent, in one
 * statement and one commit. `i` is the heartbeat's position in the batch; a heartbeat
 * whose agent was not updated (unknown, deregistered, legacy-registered) has no row and
 * takes the single statement's slow path. Rows come per heartbeat in delivery order.
 * `locked` takes the agents' row locks in one order, (client_id, agent_id), whatever the
 * batch's order: two replicas' batches holding some of the same agents (a daemon's retry
 * reaching the other replica) then wait for each other instead of deadlocking.
 * $1 is the positions, $2..$11 one array per HEARTBEAT_PARAMETERS column but the limit, $12 the limit.
 */
export const HEARTBEAT_BATCH_SQL = `WITH v AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::text[], $5::float8[], $6::jsonb[],
      $7::jsonb[], $8::timestamptz[], $9::text[], $10::text[], $11::boolean[])
      AS v(i, version, sent_at, status, uptime_seconds, schedules, system_info, now, client_id, agent_id, can_receive)
  ), locked AS MATERIALIZED (
    SELECT a.client_id, a.agent_id FROM agents a JOIN v ON a.client_id = v.client_id AND a.agent_id = v.agent_id
    WHERE a.license_id IS NOT NULL AND a.deregistered_at IS NULL
    ORDER BY a.client_id, a.agent_id
    FOR UPDATE OF a
  ), hb AS (
    UPDATE agents a SET version = v.version, sent_at = v.sent_at, status = v.status, uptime_seconds = v.uptime_seconds,
      schedules = v.schedules, system_info = v.system_info, received_at = v.now
    FROM v JOIN locked l ON l.client_id = v.client_id AND l.agent_id = v.agent_id
    WHERE a.client_id = l.client_id AND a.agent_id = l.agent_id AND a.license_id IS NOT NULL AND a.deregistered_at IS NULL
    RETURNING v.i, v.client_id, v.agent_id, v.can_receive, v.now
  ), picked AS (
    SELECT hb.i, hb.now, p.id FROM hb CROSS JOIN LATERAL (
      SELECT c.id FROM agent_commands c
      WHERE c.client_id = hb.client_id AND c.agent_id = hb.agent_id AND ${deliverable('hb.now')} AND hb.can_receive
      ORDER BY c.priority DESC, c.created_at, c.id
      LIMIT $12
      FOR UPDATE OF c SKIP LOCKED
    ) p
  ), claimed AS (
    UPDATE agent_commands c SET status = 'sent', sent_at = picked.now
    FROM picked WHERE c.id = picked.id
    RETURNING picked.i, c.id, c.command_type, c.payload, c.priority, c.created_by, c.group_target, c.created_at
  )
  SELECT hb.i, claimed.id, claimed.command_type, claimed.payload, claimed.priority, claimed.created_by,
    claimed.group_target, claimed.created_at, hb.client_id AS hb_client_id, sr.revision::float8 AS schedules_revision,
    ${cancelList('c.client_id = hb.client_id AND c.agent_id = hb.agent_id', 'hb.can_receive')} AS cancel
  FROM hb LEFT JOIN claimed ON claimed.i = hb.i LEFT JOIN agent_schedule_revisions sr ON sr.client_id = hb.client_id
  ORDER BY hb.i, ${DELIVERY_ORDER}`;

const BATCHED_COLUMNS = HEARTBEAT_PARAMETERS.filter((p) => p !== 'limit');

/** The batch statement's parameters: positions, one array per column, then the limit. */
export function heartbeatBatchValues(beats: readonly BatchedHeartbeat[], limit: number): unknown[] {
  return [
    beats.map((_, i) => i),
    ...BATCHED_COLUMNS.map((c) => beats.map((b) => b[c as keyof BatchedHeartbeat])),
    limit,
  ];
}
