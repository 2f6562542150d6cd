import type { Kysely } from 'kysely';
import { migrateTo } from '../../src/db/migrate.ts';
import { migrations } from '../../src/db/migrations/index.ts';
import type { Database } from '../../src/db/schema.ts';

/**
 * Apply every migration named before `name` (a prefix such as '0029' will do) and none after:
 * the schema a portal of that time left, for a test to plant its rows in before the migration runs.
 */
export async function migrateBefore(db: Kysely<unknown> | Kysely<Database>, name: string): Promise<void> {
  const last = Object.keys(migrations)
    .filter((n) => n < name)
    .sort()
    .at(-1);
  if (last === undefined) throw new Error(`no migration before ${name}`);
  await migrateTo(db as Kysely<Database>, last);
}
