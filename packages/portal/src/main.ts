import { ConfigError, loadConfig } from './config/index.ts';
import { startPortal } from './server.ts';

// The only place that handles signals and exits the process.
let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  throw err;
}

const portal = await startPortal(config).catch((err: unknown) => {
  console.error('The portal failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
portal.ctx.logger.info({ url: portal.url, database: config.databaseUrl ? 'external' : 'embedded' }, 'portal listening');

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    portal.ctx.logger.info({ signal }, 'shutting down: draining requests');
    portal.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
