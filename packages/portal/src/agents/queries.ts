import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { CommandProgress, CommandType } from '@svc/protocol';
import type { AgentCommandResultsTable, AgentsTable, AuditEventsTable, Database } from '../db/schema.ts';
import { commandEligible } from './eligibility.ts';

/**
 * The agents area's SQL, apart from the claim statements (claim-sql.ts), the fleet listing
 * (fleet-queries.ts) and the admin command history (history-queries.ts). A `db` parameter
 * may be a transaction: the caller decides what runs together.
 */

type Db = Kysely<Database>;

export interface AgentKey {
  client_id: string;
  agent_id: string;
  license_id: string | null;
  deregistered_at: Date | null;
}

const AGENT_KEY = ['client_id', 'agent_id', 'license_id', 'deregistered_at'] as const;

// --- agents ------------------------------------------------------------------------------

/** Agents with this id within `clientIds` (null: every client), narrowed to `clientId` when given; at most 100. */
export async function agentsWithId(
  db: Db,
  agentId: string,
  clientIds: string[] | null,
  clientId?: string,
): Promise<AgentKey[]> {
  let q = db.selectFrom('agents').select(AGENT_KEY).where('agent_id', '=', agentId);
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  if (clientId !== undefined) q = q.where('client_id', '=', clientId);
  return q.orderBy('client_id').limit(100).execute();
}

/**
 * The agent of this client that a license key registered (or took over), or (clientId null)
 * the legacy key's agent with this id. `lock`: share-locked for the rest of the transaction,
 * so a takeover or move waits, or has happened and the agent is no longer the key's.
 */
export async function agentOfKey(
  db: Db,
  clientId: string | null,
  agentId: string,
  lock = false,
): Promise<AgentKey | undefined> {
  const q = db.selectFrom('agents').select(AGENT_KEY).where('agent_id', '=', agentId);
  const owned =
    clientId !== null
      ? q.where('client_id', '=', clientId).where('license_id', 'is not', null)
      : q.where('license_id', 'is', null);
  return (lock ? owned.forKeyShare() : owned).executeTakeFirst();
}

/** The agent row, locked for the rest of the transaction. */
export async function lockAgent(db: Db, clientId: string, agentId: string) {
  return db
    .selectFrom('agents')
    .select(['agent_id', 'client_id', 'license_id', 'deregistered_at'])
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .forUpdate()
    .executeTakeFirst();
}

/** Deregister: set deregistered_at and drop the agent's group memberships. */
export async function deregisterAgent(db: Db, clientId: string, agentId: string, now: Date): Promise<void> {
  await db
    .updateTable('agents')
    .set({ deregistered_at: now })
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .execute();
  await db.deleteFrom('agent_groups').where('client_id', '=', clientId).where('agent_id', '=', agentId).execute();
}

export async function reenableAgent(db: Db, clientId: string, agentId: string): Promise<void> {
  await db
    .updateTable('agents')
    .set({ deregistered_at: null })
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .execute();
}

/** The agent row; its commands, results and memberships go with it by cascade. */
export async function deleteAgent(db: Db, clientId: string, agentId: string): Promise<void> {
  await db.deleteFrom('agents').where('client_id', '=', clientId).where('agent_id', '=', agentId).execute();
}

// --- first heartbeat ---------------------------------------------------------------------

export async function registeredAgentsOfLicense(db: Db, licenseId: string): Promise<number> {
  const { n } = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('license_id', '=', licenseId)
    .where('deregistered_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** The legacy key's agent with this id, locked. */
export async function lockLegacyAgent(db: Db, agentId: string) {
  return db
    .selectFrom('agents')
    .select(['client_id', 'deregistered_at'])
    .where('agent_id', '=', agentId)
    .where('license_id', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Whether a license key registered this agent under this client (clientId), or under any client. */
export async function licenseAgentExists(db: Db, clientId: string | undefined, agentId: string): Promise<boolean> {
  let q = db
    .selectFrom('agents')
    .select('client_id')
    .where('agent_id', '=', agentId)
    .where('license_id', 'is not', null);
  if (clientId !== undefined) q = q.where('client_id', '=', clientId);
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}

/** Whether the client has any license key, active or not. */
export async function clientHasLicenses(db: Db, clientId: string): Promise<boolean> {
  const row = await db
    .selectFrom('licenses')
    .select('id')
    .where('client_id', '=', clientId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the agent has any command (with or without a result) or group membership. */
export async function agentHasHistory(db: Db, clientId: string, agentId: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`
    SELECT EXISTS (SELECT 1 FROM agent_commands WHERE client_id = ${clientId} AND agent_id = ${agentId})
        OR EXISTS (SELECT 1 FROM agent_groups WHERE client_id = ${clientId} AND agent_id = ${agentId}) AS found
  `.execute(db);
  return rows[0]?.found === true;
}

/**
 * Move a legacy agent with no commands and no memberships to another client. The foreign
 * keys still cascade on update (migration 0008), so the caller checks under the row lock
 * that nothing would follow (agentHasHistory).
 */
export async function moveAgent(db: Db, from: string, to: string, agentId: string): Promise<void> {
  await db
    .updateTable('agents')
    .set({ client_id: to })
    .where('client_id', '=', from)
    .where('agent_id', '=', agentId)
    .where('license_id', 'is', null)
    .execute();
}

/** A license key takes a legacy-registered agent over: the agent becomes that key's. */
export async function takeOverAgent(
  db: Db,
  clientId: string,
  agentId: string,
  license: { id: string; tier: AgentsTable['key_tier'] },
): Promise<void> {
  await db
    .updateTable('agents')
    .set({ license_id: license.id, key_tier: license.tier })
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .where('license_id', 'is', null)
    .execute();
}

/** Insert a new agent; false when it is there already (either unique key). */
export async function insertAgent(db: Db, row: Insertable<AgentsTable>): Promise<boolean> {
  const inserted = await db
    .insertInto('agents')
    .values(row)
    // Either key: (client_id, agent_id), or a legacy agent's id (agents_legacy_agent_key).
    .onConflict((oc) => oc.doNothing())
    .returning('agent_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

// --- groups ------------------------------------------------------------------------------

export async function groupMembers(db: Db, clientIds: string[] | null) {
  let q = db.selectFrom('agent_groups').select(['group_name', 'client_id', 'agent_id', 'created_at']);
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return q.orderBy('group_name').orderBy('agent_id').orderBy('client_id').execute();
}

/** The agent's registration, share-locked until the transaction ends (it cannot be moved or purged meanwhile). */
export async function shareLockAgent(db: Db, clientId: string, agentId: string) {
  return db
    .selectFrom('agents')
    .select(['deregistered_at'])
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .forKeyShare()
    .executeTakeFirst();
}

/** The membership's created_at, or undefined when the agent is a member already. */
export async function insertGroupMember(
  db: Db,
  clientId: string,
  group: string,
  agentId: string,
  now: Date,
): Promise<Date | undefined> {
  const row = await db
    .insertInto('agent_groups')
    .values({ client_id: clientId, group_name: group, agent_id: agentId, created_at: now })
    .onConflict((oc) => oc.columns(['client_id', 'group_name', 'agent_id']).doNothing())
    .returning('created_at')
    .executeTakeFirst();
  return row?.created_at;
}

/** Whether a membership was removed. */
export async function deleteGroupMember(db: Db, clientId: string, group: string, agentId: string): Promise<boolean> {
  const res = await db
    .deleteFrom('agent_groups')
    .where('client_id', '=', clientId)
    .where('group_name', '=', group)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

// --- commands ----------------------------------------------------------------------------

export interface NewCommand {
  type: CommandType;
  payload: Record<string, unknown>;
  priority: number;
  createdBy: string;
  now: Date;
  expiresAt: Date;
}

/** The agent a single command is for, with whether it may receive commands now. */
export async function agentForCommand(db: Db, clientId: string, agentId: string, now: Date) {
  return (
    db
      .selectFrom('agents as a')
      .select(['a.agent_id', 'a.client_id', 'a.deregistered_at'])
      .select(commandEligible(sql.ref('a.client_id'), sql.ref('a.license_id'), now).as('eligible'))
      .where('a.client_id', '=', clientId)
      .where('a.agent_id', '=', agentId)
      // Held until the command is inserted: the agent cannot be moved or purged in between.
      .forKeyShare()
      .executeTakeFirst()
  );
}

export async function insertCommand(db: Db, clientId: string, agentId: string, spec: NewCommand) {
  return db
    .insertInto('agent_commands')
    .values({
      client_id: clientId,
      agent_id: agentId,
      command_type: spec.type,
      payload: JSON.stringify(spec.payload),
      priority: spec.priority,
      created_by: spec.createdBy,
      group_target: null,
      created_at: spec.now,
      sent_at: null,
      acked_at: null,
      completed_at: null,
      expires_at: spec.expiresAt,
    })
    .returning(['id', 'agent_id', 'created_at', 'expires_at'])
    .execute();
}

interface GroupDispatchRow extends Partial<Selectable<AuditEventsTable>> {
  members: number;
  client_ids: string[] | null;
  skipped: string[] | null;
}

/**
 * A broadcast in ONE statement (atomic on its own, no transaction round trips): the members
 * are read once, eligibility is computed once per (client, registering key) rather than per
 * member, the commands inserted for those whose registering key allows agent:commands, and
 * the `command_dispatched` audit row built from the INSERT's RETURNING inside PostgreSQL.
 * Only the audit row comes back; its command_ids/agent_ids (ordered by id, i.e. by agent_id)
 * are the answer's commands, so 10,000 ids are neither sent back twice nor serialised by
 * Node. The audit row carries the client when all members belong to one. Nothing is written
 * when the group is empty, spans clients unasked, or no member may receive commands.
 * `clientId` undefined: the name under any client; `allClients`: even under several.
 */
export async function insertGroupCommands(
  db: Db,
  group: string,
  scope: { clientId: string | undefined; allClients: boolean },
  spec: NewCommand,
): Promise<GroupDispatchRow | undefined> {
  const clientFilter =
    scope.clientId === undefined ? sql<boolean>`true` : sql<boolean>`g.client_id = ${scope.clientId}`;
  const { rows } = await sql<GroupDispatchRow>`
    WITH raw AS MATERIALIZED (
      SELECT g.client_id, g.agent_id, a.license_id
      FROM agent_groups g JOIN agents a ON a.client_id = g.client_id AND a.agent_id = g.agent_id
      WHERE g.group_name = ${group} AND ${clientFilter} AND a.deregistered_at IS NULL
    ), keys AS MATERIALIZED (
      SELECT k.client_id, k.license_id, ${commandEligible(sql`k.client_id`, sql`k.license_id`, spec.now)} AS eligible
      FROM (SELECT DISTINCT client_id, license_id FROM raw) k
    ), members AS MATERIALIZED (
      SELECT r.client_id, r.agent_id, k.eligible
      FROM raw r JOIN keys k ON k.client_id = r.client_id AND COALESCE(k.license_id, '') = COALESCE(r.license_id, '')
    ), spread AS (
      SELECT array_agg(DISTINCT client_id ORDER BY client_id) AS client_ids FROM members
    ), ins AS (
      INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, group_target, created_at, expires_at)
      SELECT client_id, agent_id, ${spec.type}, ${JSON.stringify(spec.payload)}::jsonb, ${spec.priority}, ${spec.createdBy}, ${group}, ${spec.now}, ${spec.expiresAt}
      FROM members WHERE eligible AND (${scope.allClients}::boolean OR (SELECT cardinality(client_ids) FROM spread) <= 1)
      ORDER BY agent_id, client_id
      RETURNING id, client_id, agent_id
    ), summary AS (
      SELECT count(*)::int AS members,
             min(client_id) AS client_id,
             array_agg(agent_id ORDER BY agent_id) FILTER (WHERE NOT eligible) AS skipped
      FROM members
    ), cmds AS (
      SELECT count(*) AS n, jsonb_agg(id ORDER BY id) AS ids, jsonb_agg(agent_id ORDER BY id) AS agent_ids FROM ins
    ), ev AS (
      INSERT INTO audit_events (event_type, actor, client_id, data)
      SELECT 'command_dispatched', ${spec.createdBy}, CASE WHEN cardinality(sp.client_ids) = 1 THEN NULLIF(s.client_id, '') END,
             jsonb_build_object('command_ids', c.ids, 'agent_ids', c.agent_ids, 'command_type', ${spec.type}::text,
                                'group_target', ${group}::text, 'priority', ${spec.priority}::int, 'created_by', ${spec.createdBy}::text,
                                'expires_at', ${spec.expiresAt.toISOString()}::text)
      FROM summary s, spread sp, cmds c WHERE c.n > 0
      RETURNING *
    )
    SELECT s.members, sp.client_ids, s.skipped, ev.* FROM summary s CROSS JOIN spread sp LEFT JOIN ev ON true
  `.execute(db);
  return rows[0];
}

/** One of the agent's commands, locked for the status report. */
export async function lockAgentCommand(db: Db, id: string, clientId: string, agentId: string) {
  return db
    .selectFrom('agent_commands')
    .select(['id', 'status', 'command_type', 'expires_at', 'cancel_requested_by', 'cancel_reason'])
    .where('id', '=', id)
    .where('client_id', '=', clientId)
    .where('agent_id', '=', agentId)
    .forUpdate()
    .executeTakeFirst();
}

export async function markCommandAcked(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('agent_commands').set({ status: 'acked', acked_at: now }).where('id', '=', id).execute();
}

/** A progress report: the command's latest progress and when it came; nothing else changes. */
export async function recordCommandProgress(db: Db, id: string, progress: CommandProgress, now: Date): Promise<void> {
  await db
    .updateTable('agent_commands')
    .set({
      progress_task: progress.task,
      progress_percent: progress.percent,
      progress_at: now,
      progress_stage: progress.stage ?? null,
    })
    .where('id', '=', id)
    .execute();
}

export async function markCommandFinished(
  db: Db,
  id: string,
  status: 'completed' | 'failed',
  now: Date,
): Promise<void> {
  await db.updateTable('agent_commands').set({ status, completed_at: now }).where('id', '=', id).execute();
}

/**
 * Whether the session is one of this client's ('' is the legacy key's unnamed client, whose
 * sessions have no client). By session_id AND client_id: right whether sessions are keyed per
 * client or not.
 */
export async function sessionOfClient(db: Db, sessionId: string, clientId: string): Promise<boolean> {
  const session = await db
    .selectFrom('sessions')
    .select('session_id')
    .where('session_id', '=', sessionId)
    .where((eb) => (clientId === '' ? eb('client_id', 'is', null) : eb('client_id', '=', clientId)))
    .executeTakeFirst();
  return session !== undefined;
}

export async function insertCommandResult(db: Db, row: Insertable<AgentCommandResultsTable>): Promise<void> {
  await db.insertInto('agent_command_results').values(row).execute();
}
