import Fastify, { type FastifyBaseLogger, LogController } from 'fastify';
import type { Logger } from 'pino';
import { errorHandler, notFoundHandler } from '../http/errors.ts';
import { sendMetrics } from './http.ts';
import type { PortalMetrics } from './registry.ts';

export interface MetricsListener {
  /** Where it listens, e.g. http://10.0.0.5:9464 */
  url: string;
  close(): Promise<void>;
}

/**
 * SVC_METRICS_LISTEN: a second HTTP server, for a private network, that serves GET /metrics
 * without a token and nothing else (404 in the portal's error shape). Its requests are not
 * logged one by one: a scraper calls every few seconds.
 */
export async function startMetricsListener(
  metrics: PortalMetrics,
  at: { host: string; port: number },
  logger: Logger,
): Promise<MetricsListener> {
  const app = Fastify({
    loggerInstance: logger.child({ listener: 'metrics' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    connectionTimeout: 30_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  app.get('/metrics', async (_request, reply) => sendMetrics(metrics, reply));
  try {
    await app.listen({ host: at.host, port: at.port });
  } catch (err) {
    await app.close();
    throw new Error(`SVC_METRICS_LISTEN: cannot listen on ${at.host}:${at.port}: ${(err as Error).message}`);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : at.port;
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  const url = `http://${host}:${port}`;
  logger.info({ url: `${url}/metrics` }, 'metrics listening (SVC_METRICS_LISTEN, no token)');
  return { url, close: () => app.close() };
}
