import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// A target's row is for a target that has records (migration 0017). Before this version, asking
// for the latest state of a target never uploaded (every scanner does before its first scan of
// one), or an upload refused after its target was looked up, left an empty row, which the
// target lists, the portfolio and the changes view then showed. Those rows go: no record and no
// session names their target. A row kept for a target that has sessions but no records (its
// newest file could not be read when it was seeded) stays.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DELETE FROM finding_targets t
    WHERE NOT EXISTS (SELECT 1 FROM finding_records r WHERE r.client_id = t.client_id AND r.target = t.target)
      AND NOT EXISTS (
        SELECT 1 FROM sessions s WHERE s.client_id = t.client_id AND btrim(COALESCE(s.target, '')) = t.target
      )
  `.execute(db);
}
