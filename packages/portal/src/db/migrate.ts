import { type Kysely, type MigrationResultSet, Migrator } from 'kysely';
import type { Database } from './schema.ts';
import { migrations } from './migrations/index.ts';

/**
 * Bring the schema up to date. Kysely's Migrator holds a PostgreSQL advisory lock while
 * it runs, so replicas starting together apply each migration once; applied ones are skipped.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  return run(db, (migrator) => migrator.migrateToLatest());
}

/** Bring the schema up to `name` and no further (a restore recreates the schema its archive was taken at). */
export async function migrateTo(db: Kysely<Database>, name: string): Promise<string[]> {
  if (!(name in migrations)) throw new Error(`unknown migration ${name}`);
  return run(db, (migrator) => migrator.migrateTo(name));
}

/** Whether this version of the portal knows the migration (an archive of a newer one may name one it does not). */
export const knowsMigration = (name: string): boolean => name in migrations;

async function run(db: Kysely<Database>, go: (migrator: Migrator) => Promise<MigrationResultSet>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error, results } = await go(migrator);
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
