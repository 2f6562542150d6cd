import type { Config } from '../config/index.ts';
import { type EmbeddedServer, startEmbeddedPostgres } from '../db/embedded.ts';
import { runningEmbeddedUrl } from '../db/embedded-running.ts';
import { type DatabaseHandle, openDatabase } from '../db/pool.ts';
import { createLogger } from '../logging.ts';

/**
 * The portal's database, as its configuration names it (DATABASE_URL or the embedded server
 * under SVC_DATA_DIR), for the length of `run`: what the operator commands (backup, restore,
 * feeds import) work on. A running portal's embedded server is used as it is; otherwise one is
 * started for the command.
 */
export async function withDatabase<T>(config: Config, run: (database: DatabaseHandle) => Promise<T>): Promise<T> {
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  let embedded: EmbeddedServer | null = null;
  let url = config.databaseUrl ?? (await runningEmbeddedUrl(config.dataDir));
  if (url === null) {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort, logger });
    url = embedded.url;
  }
  const database = openDatabase(url, { max: 2, ...config.dbBounds, logger });
  try {
    return await run(database);
  } finally {
    await database.close();
    // Kysely ends the pool only once it has used it; a command may read through the pool alone.
    if (!database.pool.ended) await database.pool.end();
    await embedded?.stop();
  }
}
