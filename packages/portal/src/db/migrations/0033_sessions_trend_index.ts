import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add a new one instead.
//
// The overview's posture took each target's newest scored sessions with a
// window function over every scored session (400 ms at 200,000 sessions). Keyed by target,
// then newest scan first, with the trend's columns, each target's trend is the first rows of
// one index range, read from the index alone.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX sessions_trend_idx ON sessions (client_id, target, scanned_at DESC, session_id DESC)
      INCLUDE (risk_score, risk_grade) WHERE risk_score IS NOT NULL
  `.execute(db);
}
