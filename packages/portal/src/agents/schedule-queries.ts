import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { AgentSchedulesTable, Database } from '../db/schema.ts';

/**
 * The SQL of the portal's schedules (agents/portal-schedules.ts). Revisions are bumped by the
 * triggers of migration 0026, never here. A `db` parameter may be a transaction.
 */

type Db = Kysely<Database>;
export type ScheduleRow = Selectable<AgentSchedulesTable>;

export async function insertSchedule(db: Db, row: Insertable<AgentSchedulesTable>): Promise<ScheduleRow> {
  return db.insertInto('agent_schedules').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Schedules of `clientIds` (null: every client), narrowed to one client when given; by client, then name. */
export async function listSchedules(db: Db, clientIds: string[] | null, clientId?: string): Promise<ScheduleRow[]> {
  let q = db.selectFrom('agent_schedules').selectAll();
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  if (clientId !== undefined) q = q.where('client_id', '=', clientId);
  return q.orderBy('client_id').orderBy('name').orderBy('id').execute();
}

export async function scheduleById(db: Db, id: string, clientIds: string[] | null): Promise<ScheduleRow | undefined> {
  let q = db.selectFrom('agent_schedules').selectAll().where('id', '=', id);
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return q.executeTakeFirst();
}

export async function updateSchedule(
  db: Db,
  id: string,
  change: Updateable<AgentSchedulesTable>,
): Promise<ScheduleRow | undefined> {
  return db.updateTable('agent_schedules').set(change).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteSchedule(db: Db, id: string): Promise<boolean> {
  const r = await db.deleteFrom('agent_schedules').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

export async function countSchedules(db: Db, clientId: string): Promise<number> {
  const r = await db
    .selectFrom('agent_schedules')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('client_id', '=', clientId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The clients (within `clientIds`, null: all) that have a group of this name. */
export async function clientsWithGroup(db: Db, group: string, clientIds: string[] | null): Promise<string[]> {
  let q = db.selectFrom('agent_groups').select('client_id').distinct().where('group_name', '=', group);
  if (clientIds !== null) q = q.where('client_id', 'in', clientIds);
  return (await q.orderBy('client_id').limit(100).execute()).map((r) => r.client_id);
}

/** The enabled schedules an agent runs: its own and its groups', and the client's revision read with them. */
export async function schedulesOfAgent(
  db: Db,
  clientId: string,
  agentId: string,
): Promise<{ revision: number; items: ScheduleRow[] }> {
  // The revision first: items read after it are at least that new, so an agent never holds a
  // revision newer than its items (at worst it is sent the same set once more).
  const rev = await db
    .selectFrom('agent_schedule_revisions')
    .select('revision')
    .where('client_id', '=', clientId)
    .executeTakeFirst();
  const items = await db
    .selectFrom('agent_schedules')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('enabled', '=', true)
    .where((eb) =>
      eb.or([
        eb('agent_id', '=', agentId),
        eb(
          'group_name',
          'in',
          eb
            .selectFrom('agent_groups')
            .select('group_name')
            .where('client_id', '=', clientId)
            .where('agent_id', '=', agentId),
        ),
      ]),
    )
    .orderBy('id')
    .execute();
  return { revision: rev === undefined ? 0 : Number(rev.revision), items };
}
