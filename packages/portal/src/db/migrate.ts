import { Migrator, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import { migrations } from './migrations/index.ts';

/**
 * Bring the schema up to date. Kysely's Migrator holds a PostgreSQL advisory lock while
 * it runs, so replicas starting together apply each migration once; applied ones are skipped.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
