import type { FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.ts';

/** Routes whose body may take as long as it takes, as long as it keeps coming (25 MB over a slow link). */
const NO_TOTAL_TIMEOUT = new Set(['/api/upload']);

const REQUEST_TIMEOUT_BODY = JSON.stringify({ error: 'Request timeout: the request was not received in time' });
const REQUEST_TIMEOUT_RESPONSE =
  'HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json; charset=utf-8\r\n' +
  `content-length: ${Buffer.byteLength(REQUEST_TIMEOUT_BODY)}\r\nconnection: close\r\n\r\n${REQUEST_TIMEOUT_BODY}`;

/**
 * Fastify/Node options for the connection-level limits (issue 11, point 9):
 * - headers: Node's headersTimeout (checked every second) closes a connection whose
 *   headers are still incomplete after SVC_HEADERS_TIMEOUT_SECONDS, with a 408;
 * - idle: the socket timeout closes a connection on which nothing moved for
 *   SVC_BODY_IDLE_TIMEOUT_SECONDS: a body that stopped arriving, whatever the route;
 * - keep-alive: a connection idle between requests is closed after
 *   SVC_KEEP_ALIVE_TIMEOUT_SECONDS (announced in `Keep-Alive: timeout=`; Node adds a
 *   second's margin). Fastify's default is 72 s, which replaces the idle timeout on such
 *   sockets, so it is always set, at or below the idle timeout;
 * - Node's own requestTimeout is off, because it would cut uploads too; the total
 *   timeout is `installRequestTimeout`, which has its own rules for uploads.
 */
export function serverOptions(ctx: AppContext) {
  const { headersTimeoutSeconds, idleTimeoutSeconds, keepAliveTimeoutSeconds } = ctx.config.http;
  return {
    connectionTimeout: idleTimeoutSeconds * 1000,
    keepAliveTimeout: keepAliveTimeoutSeconds * 1000,
    requestTimeout: 0,
    http: { headersTimeout: headersTimeoutSeconds * 1000, connectionsCheckingInterval: 1000 },
  };
}

/**
 * SVC_REQUEST_TIMEOUT_SECONDS: a request (other than an upload) whose body is not all in
 * that long after its headers gets a 408 and its connection closed. A trickle of a byte
 * now and then defeats the idle timeout; this one bounds it.
 */
export function installRequestTimeout(app: App, ctx: AppContext): void {
  const ms = ctx.config.http.requestTimeoutSeconds * 1000;
  app.addHook('onRequest', async (request: FastifyRequest, reply) => {
    if (request.raw.complete || NO_TOTAL_TIMEOUT.has(request.routeOptions.url ?? '')) return;
    const timer = setTimeout(() => {
      if (request.raw.complete || request.raw.destroyed) return;
      request.log.info({ timeout_seconds: ms / 1000 }, 'request body not received in time');
      const socket = request.raw.socket;
      if (reply.raw.headersSent) socket.destroy();
      else socket.end(REQUEST_TIMEOUT_RESPONSE, () => socket.destroy());
    }, ms).unref();
    const clear = () => clearTimeout(timer);
    request.raw.once('end', clear);
    request.raw.once('close', clear);
    reply.raw.once('finish', clear);
  });
}
