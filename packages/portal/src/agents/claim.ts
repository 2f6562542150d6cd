import { sql, type RawBuilder } from 'kysely';
import type { CommandType, DeliveredCommand } from '@svc/protocol';

export interface ClaimedRow {
  id: string;
  command_type: string;
  payload: Record<string, unknown>;
  priority: number;
  created_by: string;
  group_target: string | null;
  created_at: Date;
}

/**
 * The two CTEs that hand out an agent's pending commands: pick up to `limit` in
 * delivery order (priority descending, then oldest first) with FOR UPDATE SKIP LOCKED,
 * so two replicas answering the same agent at once never deliver one command twice,
 * and mark them `sent` in the same statement. `agent` selects the agent's commands by
 * its key (client_id, agent_id) on alias `c`; `guard` gates the claim (the key must hold
 * agent:commands).
 */
export function claimCtes(
  agent: RawBuilder<boolean>,
  limit: number,
  now: Date,
  guard: RawBuilder<boolean>,
): RawBuilder<unknown> {
  return sql`picked AS (
      SELECT c.id FROM agent_commands c
      WHERE ${agent} AND c.status = 'pending' AND ${guard}
      ORDER BY c.priority DESC, c.created_at, c.id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE agent_commands c SET status = 'sent', sent_at = ${now}
      FROM picked WHERE c.id = picked.id
      RETURNING c.id, c.command_type, c.payload, c.priority, c.created_by, c.group_target, c.created_at
    )`;
}

/**
 * UPDATE ... RETURNING has no order: the statement that reads `claimed` restores delivery
 * order itself. In SQL, not in JavaScript: created_at has microseconds, a Date only
 * milliseconds, and the answer must follow the same order the LIMIT picked by.
 */
export const DELIVERY_ORDER = sql`claimed.priority DESC, claimed.created_at, claimed.id`;

export function presentDelivered(row: ClaimedRow): DeliveredCommand {
  return {
    id: Number(row.id),
    command_type: row.command_type as CommandType,
    payload: row.payload,
    priority: row.priority,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
  };
}
