import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A scheduled rescan rewrites every record of its target and changes none of the columns its
// 16 indexes name, so PostgreSQL can keep the new version on the same page and skip every
// index (a HOT update) when the page has room. With full pages it had none: each rescan wrote
// 16 index entries per record. 30 % free per page leaves that room (bench/README.md, "Sessions
// of many findings"). Pages written before this keep their fill until rewritten.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE finding_records SET (fillfactor = 70)`.execute(db);
}
