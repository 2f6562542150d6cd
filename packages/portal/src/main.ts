import { ConfigError, loadConfig, type Config } from './config/index.ts';
import { createLogger } from './logging.ts';
import type { Portal } from './server.ts';

// The only place that handles signals and exits the process.
let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}

const logger = createLogger(config.logLevel);
let portal: Portal | null = null;
let stopRequested = false;

function shutdown(running: Portal): void {
  logger.info('shutting down: draining requests');
  // A client that never finishes its request must not hold the shutdown (and the
  // embedded database) hostage until the supervisor's SIGKILL: after the grace period the
  // remaining connections are closed, so PostgreSQL is still stopped cleanly.
  const grace = setTimeout(() => {
    logger.warn(
      { grace_seconds: config.shutdownGraceSeconds },
      'shutdown grace period over: closing the remaining connections',
    );
    running.app.server.closeAllConnections();
  }, config.shutdownGraceSeconds * 1000);
  grace.unref();
  running.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

// Installed before the (possibly long: initdb) start, so a signal during start-up still
// stops the embedded PostgreSQL instead of killing the process and orphaning the server.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopRequested) return;
    stopRequested = true;
    logger.info(
      { signal },
      portal === null ? 'signal received during start-up: stopping once started' : 'signal received',
    );
    if (portal !== null) shutdown(portal);
  });
}

try {
  // Loaded after the configuration is checked, so a bad setting is reported at once, before the
  // server's whole module graph is compiled.
  const { startPortal } = await import('./server.ts');
  portal = await startPortal(config, { logger });
} catch (err) {
  // A configuration the start-up found wrong (e.g. a key that does not decrypt the signing
  // key) is exit 2 like any configuration error: restarting cannot help.
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error('The portal failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
}
portal.ctx.logger.info({ url: portal.url, database: config.databaseUrl ? 'external' : 'embedded' }, 'portal listening');
if (stopRequested) shutdown(portal);
