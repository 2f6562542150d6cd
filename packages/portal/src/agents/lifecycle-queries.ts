import { sql, type Kysely } from 'kysely';
import type { CommandStatus } from '@svc/protocol';
import type { Database } from '../db/schema.ts';

/**
 * The SQL of a command's end by the portal itself (docs/agent/commands.md, "Cancel, expiry and
 * redelivery"): cancellation, expiry, deregistration, a takeover. Apart from agents/queries.ts,
 * which is at its size ceiling. A `db` parameter may be a transaction.
 */

type Db = Kysely<Database>;

/** A command as a cancellation or a sweep decides on it. */
export interface OpenCommand {
  id: string;
  client_id: string;
  agent_id: string;
  command_type: string;
  status: CommandStatus;
  expires_at: Date;
  cancel_requested_at: Date | null;
  cancel_requested_by: string | null;
  cancel_reason: string | null;
}

const OPEN_COLUMNS = [
  'id',
  'client_id',
  'agent_id',
  'command_type',
  'status',
  'expires_at',
  'cancel_requested_at',
  'cancel_requested_by',
  'cancel_reason',
] as const;

/** One command by id, locked until the transaction ends. */
export async function lockCommand(db: Db, id: string): Promise<OpenCommand | undefined> {
  return db.selectFrom('agent_commands').select(OPEN_COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Records that an admin asked the running command's agent to stop it. */
export async function requestCancel(db: Db, id: string, at: Date, by: string, reason: string | null): Promise<void> {
  await db
    .updateTable('agent_commands')
    .set({ cancel_requested_at: at, cancel_requested_by: by, cancel_reason: reason })
    .where('id', '=', id)
    .execute();
}

/**
 * Commands not started (pending, sent) past their expiry, oldest expiry first, locked; a row
 * another replica's sweep holds is skipped (SKIP LOCKED), so no command is failed twice.
 */
export async function expiredCommands(db: Db, now: Date, limit: number): Promise<OpenCommand[]> {
  return db
    .selectFrom('agent_commands')
    .select(OPEN_COLUMNS)
    .where('status', 'in', ['pending', 'sent'])
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Running commands whose cancellation was asked at or before `askedBefore` and never confirmed, locked (SKIP LOCKED). */
export async function unconfirmedCancels(db: Db, askedBefore: Date, limit: number): Promise<OpenCommand[]> {
  return db
    .selectFrom('agent_commands')
    .select(OPEN_COLUMNS)
    .where('status', '=', 'acked')
    .where('cancel_requested_at', 'is not', null)
    .where('cancel_requested_at', '<=', askedBefore)
    .orderBy('cancel_requested_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/**
 * Fail these commands (each with its own message as the result's stderr, exit code null: no
 * process of the agent ended them) in one statement; the ids actually failed, in id order
 * (a command that ended meanwhile is left as it is).
 */
export async function failCommands(
  db: Db,
  failures: readonly { id: string; message: string }[],
  now: Date,
): Promise<string[]> {
  if (failures.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    WITH f AS (
      SELECT * FROM unnest(${failures.map((f) => f.id)}::bigint[], ${failures.map((f) => f.message)}::text[]) AS f(id, message)
    ), failed AS (
      UPDATE agent_commands c SET status = 'failed', completed_at = ${now}
      FROM f WHERE c.id = f.id AND c.status IN ('pending', 'sent', 'acked')
      RETURNING c.id, f.message
    )
    INSERT INTO agent_command_results (command_id, exit_code, stdout, stderr, session_id, completed_at)
    SELECT id, NULL, '', message, NULL, ${now} FROM failed
    RETURNING command_id AS id
  `.execute(db);
  return rows.map((r) => String(r.id)).sort((a, b) => Number(a) - Number(b));
}

/**
 * Fail the agent's commands in `statuses` with `reason` as the result's stderr, in one
 * statement; their ids in id order. Delivered and running ones (sent, acked) when a license key
 * takes the agent over; not started ones (pending, sent) when the agent is deregistered.
 */
export async function failAgentCommands(
  db: Db,
  clientId: string,
  agentId: string,
  statuses: readonly CommandStatus[],
  reason: string,
  now: Date,
): Promise<number[]> {
  const { rows } = await sql<{ id: string }>`
    WITH held AS (
      UPDATE agent_commands SET status = 'failed', completed_at = ${now}
      WHERE client_id = ${clientId} AND agent_id = ${agentId} AND status = ANY(${statuses}::text[])
      RETURNING id
    )
    INSERT INTO agent_command_results (command_id, exit_code, stdout, stderr, session_id, completed_at)
    SELECT id, NULL, '', ${reason}, NULL, ${now} FROM held
    RETURNING command_id AS id
  `.execute(db);
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}
