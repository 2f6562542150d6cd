import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A long run_scan reports how far it has got (docs/api.md#agents-and-commands,
// "Progress reports"). A command keeps only its latest progress, so three columns on the
// command itself rather than a table of reports: the task (one line, at most 64 characters,
// checked by the protocol package), the percent and when the portal stored it. All null
// until the first report; a report never touches the command's status or times.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE agent_commands
      ADD COLUMN progress_task text,
      ADD COLUMN progress_percent double precision,
      ADD COLUMN progress_at timestamptz,
      ADD CONSTRAINT agent_commands_progress_whole CHECK (
        (progress_task IS NULL) = (progress_percent IS NULL) AND (progress_task IS NULL) = (progress_at IS NULL)
      );
  `.execute(db);
}
