import type { DestinationStream, Logger } from 'pino';
import portalPackage from '../package.json' with { type: 'json' };
import { buildApp } from './app.ts';
import { ApiKeyVerifier } from './auth/api-keys.ts';
import { createTokenVerifier } from './auth/jwt.ts';
import type { Config } from './config/index.ts';
import { LEGACY_KEY_RECOMMENDED } from './config/legacy-key.ts';
import type { App, AppContext } from './context.ts';
import { startEmbeddedPostgres, type EmbeddedServer } from './db/embedded.ts';
import { migrateToLatest } from './db/migrate.ts';
import { openDatabase } from './db/pool.ts';
import { EventBus } from './events/bus.ts';
import { HeartbeatBatcher } from './agents/heartbeat-batch.ts';
import type { HeartbeatWriter } from './agents/heartbeat-writer.ts';
import { InFlightLimit } from './domain/in-flight-limit.ts';
import { bootstrapAdmin, checkBootstrapPassword } from './identity/bootstrap.ts';
import { BenchmarkSnapshots } from './sessions/benchmark-snapshot.ts';
import { ServedIndexCache } from './vuln-feeds/serve.ts';
import { loadKeyEncryptionKey } from './identity/key-encryption.ts';
import { ensureSigningKey } from './identity/signing-keys.ts';
import { createLogger } from './logging.ts';
import { startMetricsListener } from './metrics/listener.ts';
import { commandCountsByStatus, oldestDeliveryAgeSeconds } from './metrics/queries.ts';
import { PortalMetrics } from './metrics/registry.ts';
import { lastBackupSeconds } from './operations/backup/status.ts';
import { countFailures } from './blobs/counted.ts';
import { openBlobStore } from './blobs/open.ts';
import {
  type OrphanSweepTiming,
  ORPHAN_SWEEP_TIMING,
  startOrphanSweeper,
  sweepOrphanedFiles,
} from './sessions/sweep.ts';
import { countUncountedSessions } from './sessions/due-counts-backfill.ts';
import { backfillRecords } from './sessions/records-backfill.ts';
import { INDEX_WRITER_CONNECTIONS, sweepUnpublishedIndexes } from './sessions/index-beside.ts';
import { sealStoredShareTokens, withShareLink } from './sessions/share.ts';
import { ShareTokenSeal } from './sessions/share-seal.ts';
import { sweepStaleRecords } from './records/retention.ts';
import { closeAuditHours } from './audit/queries.ts';
import { startCommandSweeper } from './agents/lifecycle-sweep.ts';
import { sweepExpiredSessions } from './sessions/retention.ts';
import { rebuildOutdatedIndex } from './vuln-feeds/upgrade.ts';
import { pruneLoginFailures } from './identity/throttle.ts';
import { WebhookDispatcher } from './webhooks/dispatcher.ts';
import { WebhookHttpClient } from './webhooks/http-client.ts';
import { encryptStoredSecrets, sealStoredBodies, WebhookSecrets } from './webhooks/secrets.ts';
import { systemResolver, type Resolver } from './webhooks/url-safety.ts';

export interface Portal {
  app: App;
  ctx: AppContext;
  /** The address the server listens on, e.g. http://127.0.0.1:8080 */
  url: string;
  /** Where SVC_METRICS_LISTEN serves GET /metrics; null when it is not set. */
  metricsUrl: string | null;
  /** Drain requests, close the pool, stop the embedded database. Idempotent. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  logDestination?: DestinationStream | undefined;
  now?: (() => Date) | undefined;
  /** DNS for webhook URLs; tests substitute one to simulate rebinding. */
  resolver?: Resolver | undefined;
  /**
   * Listen with SO_REUSEPORT: a test holds its port open until the portal listens there too, so
   * the base URL can name the port and no other process can take it in between.
   */
  reusePort?: boolean;
  /** When the orphan sweep runs and retries; tests shorten or lengthen its retries. */
  orphanSweep?: Partial<OrphanSweepTiming> | undefined;
}

/** Start everything the portal needs and listen. Returns a disposable; never exits the process. */
export async function startPortal(config: Config, opts: StartOptions = {}): Promise<Portal> {
  if (config.externalJwt === null) checkBootstrapPassword(config);
  const logger = opts.logger ?? createLogger(config.logLevel, opts.logDestination);
  let embedded: EmbeddedServer | null = null;
  const cleanup: (() => Promise<void>)[] = [];
  const { metrics: metricsConfig } = config;
  // Off unless asked for: no registry, no hook, no event-loop monitor.
  const metrics =
    metricsConfig.token !== null || metricsConfig.listen !== null
      ? new PortalMetrics({ logger, version: portalPackage.version, watchBackups: metricsConfig.backupMaxAgeHours > 0 })
      : null;
  try {
    let databaseUrl = config.databaseUrl;
    if (databaseUrl === null) {
      embedded = await startEmbeddedPostgres({
        dataDir: config.dataDir,
        port: config.embeddedPgPort,
        logger,
        supervise: true,
        onRestart: metrics ? () => metrics.embeddedRestarted() : undefined,
      });
      const server = embedded;
      cleanup.unshift(() => server.stop());
      databaseUrl = embedded.url;
    }
    const database = openDatabase(databaseUrl, {
      max: config.dbPoolMax,
      ...config.dbBounds,
      logger,
      onAcquire: metrics ? (seconds) => metrics.poolAcquired(seconds) : undefined,
    });
    cleanup.unshift(() => database.close());
    const indexWriter = openDatabase(databaseUrl, { max: INDEX_WRITER_CONNECTIONS, ...config.dbBounds, logger });
    cleanup.unshift(() => indexWriter.close());

    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ applied }, 'database migrations applied');

    // One key-encryption key for the identity provider's signing key, the webhook secrets and share tokens.
    const kek = await loadKeyEncryptionKey(config, logger);
    const signingKey = config.externalJwt ? null : await ensureSigningKey(database.db, kek);
    const webhookSecrets = new WebhookSecrets(kek);
    await encryptStoredSecrets(database.db, webhookSecrets);
    const sealedBodies = await sealStoredBodies(database.db, webhookSecrets);
    if (sealedBodies > 0)
      logger.info({ sealed: sealedBodies }, 'webhook delivery bodies with a share token in clear are now sealed');
    // Share tokens stored in clear before migration 0020 are sealed under the same key.
    const shareTokens = new ShareTokenSeal(kek);
    const sealedTokens = await sealStoredShareTokens(database.db, shareTokens);
    if (sealedTokens > 0) logger.info({ sealed: sealedTokens }, 'share tokens stored in clear are now sealed');
    // In external-provider mode admins come from that provider; a local account could never sign in.
    if (config.externalJwt === null) await bootstrapAdmin(database.db, logger, config.adminEmail, config.adminPassword);
    else if (config.adminEmail !== null)
      logger.warn('SVC_ADMIN_EMAIL is ignored: admins come from the external identity provider (SVC_JWT_JWKS_URL)');
    if (config.legacyApiKey !== null && config.legacyApiKey.length < LEGACY_KEY_RECOMMENDED)
      logger.warn(
        { length: config.legacyApiKey.length },
        `SVC_UPLOAD_API_KEY is shorter than ${LEGACY_KEY_RECOMMENDED} characters: it is easy to guess; replace it with a longer one (openssl rand -hex 32) or license keys`,
      );
    const now = opts.now ?? (() => new Date());

    const opened = await openBlobStore(config, {
      // A store that is down or silent does not stop the start: requests that need it answer 503.
      unreachable: (err) => logger.error({ err: err.cause }, 'session storage is not reachable; starting without it'),
    });
    cleanup.unshift(async () => opened.close());
    const blobs = metrics ? countFailures(opened.store, (op) => metrics.blobStoreFailed(op)) : opened.store;

    const resolver = opts.resolver ?? systemResolver;
    const { allowCidrs, caFile, maxInFlight, queueMax, queueWaitMs } = config.webhooks;
    const webhookClient = new WebhookHttpClient({
      resolver,
      allow: allowCidrs,
      caFile,
      maxInFlight,
      queueMax,
      queueWaitMs,
    });
    cleanup.unshift(() => webhookClient.close());
    const dispatcher = new WebhookDispatcher({
      db: database.db,
      logger,
      client: webhookClient,
      now,
      disableAfterFailures: config.webhooks.disableAfterFailures,
      secrets: webhookSecrets,
      lease: { seconds: config.webhooks.leaseSeconds, maxRuns: config.webhooks.maxRuns },
      onOutcome: metrics ? (outcome) => metrics.delivery(outcome) : undefined,
      restore: (event) => withShareLink(database.db, shareTokens, config.baseUrl, event),
    });
    metrics?.attach({
      pool: database.pool,
      poolMax: config.dbPoolMax,
      webhookQueue: () => webhookClient.load(),
      commandsByStatus: () => commandCountsByStatus(database.db),
      oldestDeliveryAgeSeconds: () => oldestDeliveryAgeSeconds(database.db, now()),
      lastBackupSeconds: () => lastBackupSeconds(config.dataDir),
      backupMaxAgeSeconds: metricsConfig.backupMaxAgeHours * 3600,
    });
    const ctx: AppContext = {
      config,
      logger,
      db: database.db,
      pool: database.pool,
      indexWriter,
      events: new EventBus(logger),
      blobs,
      webhooks: { dispatcher, resolver, allow: config.webhooks.allowCidrs, secrets: webhookSecrets },
      shareTokens,
      keys: new ApiKeyVerifier(database.db, config.legacyApiKey, config.keyFailuresPerMinute),
      tokens: createTokenVerifier(config, database.db, now),
      signingKey,
      version: portalPackage.version,
      metrics,
      now,
      // The batcher writes through the context it belongs to: set just below.
      heartbeats: null as unknown as HeartbeatWriter,
      // One password check per e-mail at a time, four more waiting (docs/identity.md).
      loginChecks: new InFlightLimit(1, 4),
      uploads: new InFlightLimit(config.http.uploadsPerKey),
      benchmarks: new BenchmarkSnapshots(),
      vulnIndex: new ServedIndexCache(),
    };
    ctx.heartbeats = new HeartbeatBatcher(ctx, config.heartbeatBatchMax);
    ctx.events.subscribe((event) => dispatcher.onEvent(event));
    // Deliveries whose replica stopped mid-way are taken over once their lease expires; on
    // shutdown, after the fan-outs drained, those taken over finish.
    dispatcher.start();
    cleanup.unshift(() => dispatcher.close());
    // docs/api.md#sessions housekeeping, at start and then hourly in the background: expired sessions go,
    // then failed-login counts nobody added to for a day, then the audit log's hours since the last
    // close are counted (migration 0032). Files no row references (a failed
    // delete, a writer that crashed) have their own sweep, started once the portal listens.
    let housekeeping: Promise<void> = Promise.resolve();
    const sweep = () => {
      housekeeping = sweepExpiredSessions(ctx)
        .then(async () => void (await pruneLoginFailures(database.db, now())))
        .then(async () => void (await sweepStaleRecords(database.db, config.recordRetentionDays, now())))
        .then(async () => void (await closeAuditHours(database.db)))
        .catch((err: unknown) => logger.error({ err }, 'housekeeping sweep failed'));
    };
    const sweepTimer = setInterval(sweep, 3_600_000).unref();
    sweep();
    // Commands past their expiry, or whose cancellation the agent never confirmed, end every minute.
    const commandSweeper = startCommandSweeper(ctx);
    // Sessions stored before the findings of record are indexed with them in the background.
    let stopping = false;
    const backfill = housekeeping
      .then(() => backfillRecords(ctx, () => stopping))
      .catch((err: unknown) => logger.error({ err }, 'indexing stored sessions for their findings of record failed'))
      // Then those indexed before their overdue findings were counted (migration 0043).
      .then(() => countUncountedSessions(ctx, () => stopping))
      .catch((err: unknown) => logger.error({ err }, 'counting the overdue findings of stored sessions failed'));
    // An index of an older format (an upgrade) is rebuilt from the feeds held, in the background.
    const indexRebuild = rebuildOutdatedIndex(database.pool, now, logger).catch((err: unknown) =>
      logger.error({ err }, 'rebuilding the vulnerability index failed'),
    );
    // On shutdown, let a running sweep finish before the pool closes.
    cleanup.unshift(async () => {
      clearInterval(sweepTimer);
      await commandSweeper.stop();
      stopping = true;
      await backfill;
      await housekeeping;
      await indexRebuild;
    });

    const app = await buildApp(ctx);
    cleanup.unshift(() => ctx.events.drain());
    cleanup.unshift(() => app.close());
    // First: attempts queued behind a slow receiver would hold a ping's request, and the
    // drain, up to their deadline (SVC_WEBHOOK_QUEUE_WAIT_SECONDS).
    cleanup.unshift(async () => webhookClient.shedWaiting());
    cleanup.unshift(async () => dispatcher.stopTakingOver());
    // A variable, not a literal: Fastify's listen options type omits Node's reusePort. The accept
    // queue holds a whole fleet reconnecting at once (up to SVC_MAX_CONNECTIONS, never below Node's
    // 511; the kernel caps it at net.core.somaxconn): past it, a connection waits for its SYN again.
    const listenOptions = {
      host: config.host,
      port: config.port,
      reusePort: opts.reusePort === true,
      backlog: Math.max(511, config.http.maxConnections),
    };
    await app.listen(listenOptions);
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    // After listening: listing a large or slow bucket never delays the start, and a failed pass is retried.
    const sweepTiming = { ...ORPHAN_SWEEP_TIMING, ...opts.orphanSweep };
    const sweepOnce = async (signal: AbortSignal) => {
      const indexes = await sweepUnpublishedIndexes(database.db);
      if (indexes > 0) logger.warn({ indexes }, 'dropped the findings index of uploads that never committed');
      return sweepOrphanedFiles(database.db, blobs, signal);
    };
    const orphanSweeper = startOrphanSweeper(sweepOnce, logger, sweepTiming);
    cleanup.unshift(() => orphanSweeper.stop());
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    let metricsUrl: string | null = null;
    if (metrics !== null && metricsConfig.listen !== null) {
      const listener = await startMetricsListener(metrics, metricsConfig.listen, logger);
      cleanup.unshift(() => listener.close());
      metricsUrl = listener.url;
    }

    let closing: Promise<void> | null = null;
    return {
      app,
      ctx,
      url: `http://${host}:${port}`,
      metricsUrl,
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
