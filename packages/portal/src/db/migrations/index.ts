import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';

/**
 * Every migration, listed explicitly and in order. Names sort lexically; a migration
 * is frozen once it has shipped.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
};
