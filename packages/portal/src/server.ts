import type { DestinationStream, Logger } from 'pino';
import portalPackage from '../package.json' with { type: 'json' };
import { buildApp } from './app.ts';
import { ApiKeyVerifier } from './auth/api-keys.ts';
import { createTokenVerifier } from './auth/jwt.ts';
import type { Config } from './config/index.ts';
import type { App, AppContext } from './context.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.ts';
import { migrateToLatest } from './db/migrate.ts';
import { openDatabase } from './db/pool.ts';
import { EventBus } from './events/bus.ts';
import { bootstrapAdmin } from './identity/bootstrap.ts';
import { ensureSigningKey } from './identity/signing-keys.ts';
import { createLogger } from './logging.ts';

export interface Portal {
  app: App;
  ctx: AppContext;
  /** The address the server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Drain requests, close the pool, stop the embedded database. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  logDestination?: DestinationStream;
  now?: () => Date;
}

/** Start everything the portal needs and listen. Returns a disposable; never exits the process. */
export async function startPortal(config: Config, opts: StartOptions = {}): Promise<Portal> {
  const logger = opts.logger ?? createLogger(config.logLevel, opts.logDestination);
  let embedded: EmbeddedServer | null = null;
  const cleanup: (() => Promise<void>)[] = [];
  try {
    let databaseUrl = config.databaseUrl;
    if (databaseUrl === null) {
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPgPort, logger });
      const server = embedded;
      cleanup.unshift(() => server.stop());
      databaseUrl = embedded.url;
    }
    const database = openDatabase(databaseUrl, { max: config.dbPoolMax, logger });
    cleanup.unshift(() => database.close());

    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ applied }, 'database migrations applied');

    const signingKey = config.externalJwt ? null : await ensureSigningKey(database.db);
    await bootstrapAdmin(database.db, logger, config.adminEmail, config.adminPassword);

    const ctx: AppContext = {
      config,
      logger,
      db: database.db,
      events: new EventBus(logger),
      keys: new ApiKeyVerifier(database.db, config.legacyApiKey),
      tokens: createTokenVerifier(config, database.db),
      signingKey,
      version: portalPackage.version,
      now: opts.now ?? (() => new Date()),
    };
    const app = await buildApp(ctx);
    cleanup.unshift(() => ctx.events.drain());
    cleanup.unshift(() => app.close());
    await app.listen({ host: config.host, port: config.port });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;

    let closing: Promise<void> | null = null;
    return {
      app,
      ctx,
      url: `http://${host}:${port}`,
      close: () => (closing ??= runAll(cleanup, logger)),
    };
  } catch (err) {
    await runAll(cleanup, logger);
    throw err;
  }
}

async function runAll(steps: (() => Promise<void>)[], logger: Logger): Promise<void> {
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      logger.error({ err }, 'shutdown step failed');
    }
  }
}
