import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppContext } from '../context.ts';
import { hasNoBody } from './request-body.ts';

/** The route whose body may be 25 MB over a slow link: it has its own bounds, not the request timeout. */
const UPLOAD_ROUTE = '/api/upload';

/** A raw 408: the request pipeline is still waiting on the body, so the answer cannot go through Fastify. */
function timeoutResponse(message: string): string {
  const body = JSON.stringify({ error: `Request timeout: ${message}` });
  return (
    'HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

const REQUEST_TIMEOUT_RESPONSE = timeoutResponse('the request was not received in time');

/** Uploads cut by their time or rate bound; the route does not log them as a client that went away. */
const cutUploads = new WeakSet<IncomingMessage>();

export function uploadWasCut(raw: IncomingMessage): boolean {
  return cutUploads.has(raw);
}

/** Uploads whose socket idle timeout is lifted while they are processed; it returns for their answer. */
const processing = new WeakSet<IncomingMessage>();
/** Uploads whose answer has begun: the idle timeout stays on them. */
const answering = new WeakSet<IncomingMessage>();

/**
 * The idle timeout bounds a body that stops arriving, not the work after it.
 * Once an upload's whole body is in, storing it (100,000 findings: about 20 s, more on a busy
 * host) must not close the connection with the answer still to come; nothing would be logged
 * and the client would never learn whether its session was stored. The socket's idle timeout
 * is lifted until the answer starts (onSend puts it back); the work itself is bounded by the
 * database, and the answer says how it ended.
 */
function liftIdleTimeoutAfterBody(request: FastifyRequest, reply: FastifyReply): void {
  const lift = () => {
    if (reply.raw.headersSent || answering.has(request.raw) || request.raw.destroyed) return;
    processing.add(request.raw);
    request.raw.socket.setTimeout(0);
  };
  if (request.raw.complete) lift();
  else request.raw.once('end', lift);
}

/**
 * Fastify/Node options for the connection-level limits:
 * - headers: Node's headersTimeout (checked every second) closes a connection whose
 *   headers are still incomplete after SVC_HEADERS_TIMEOUT_SECONDS, with a 408;
 * - idle: the socket timeout closes a connection on which nothing moved for
 *   SVC_BODY_IDLE_TIMEOUT_SECONDS: a body that stopped arriving, whatever the route (an
 *   upload's is lifted once its body is in, until its answer: liftIdleTimeoutAfterBody);
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
 *
 * An upload instead has SVC_UPLOAD_TIMEOUT_SECONDS for its whole body,
 * and must bring at least SVC_UPLOAD_MIN_BYTES_PER_SECOND over each window of
 * SVC_UPLOAD_RATE_WINDOW_SECONDS (the first window is the grace period). Bytes are counted
 * on the socket, as they are read.
 */
export function installRequestTimeout(app: App, ctx: AppContext): void {
  const { requestTimeoutSeconds, uploadTimeoutSeconds, uploadMinBytesPerSecond, uploadRateWindowSeconds } =
    ctx.config.http;
  const rateTooLow = timeoutResponse(
    `the upload arrived too slowly (less than ${uploadMinBytesPerSecond} bytes per second)`,
  );
  const tooLong = timeoutResponse(`the upload was not received within ${uploadTimeoutSeconds} seconds`);

  const idleMs = ctx.config.http.idleTimeoutSeconds * 1000;
  // The upload route's own hooks are its own (added to it alone): no other request pays for them.
  app.addHook('onRoute', (route) => {
    if (route.url !== UPLOAD_ROUTE) return;
    // First, as the app-level hooks they were ran before the route's own.
    route.onSend = [
      (request, _reply, payload, done) => {
        answering.add(request.raw);
        const socket = request.raw.socket as Socket | null;
        if (processing.delete(request.raw) && socket !== null && !socket.destroyed) socket.setTimeout(idleMs);
        done(null, payload);
      },
      ...hooksOf(route.onSend),
    ];
    route.onRequest = [
      (request, reply, done) => {
        liftIdleTimeoutAfterBody(request, reply);
        if (!request.raw.complete) bound(request, reply, true);
        done();
      },
      ...hooksOf(route.onRequest),
    ];
  });

  // Every other request: a callback hook that returns at once when there is no body (a GET) or it is all in.
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.raw.complete && !hasNoBody(request.raw) && request.routeOptions.url !== UPLOAD_ROUTE)
      bound(request, reply, false);
    done();
  });

  /** The request timeout, or an upload's total and rate bounds, until its body is all in. */
  function bound(request: FastifyRequest, reply: FastifyReply, upload: boolean): void {
    const socket = request.raw.socket;
    const startedWith = socket.bytesRead;
    const timers: NodeJS.Timeout[] = [];
    const clear = () => {
      for (const t of timers) clearTimeout(t);
    };
    const cut = (response: string) => {
      clear();
      if (reply.raw.headersSent) socket.destroy();
      else socket.end(response, () => socket.destroy());
    };

    if (!upload) {
      const ms = requestTimeoutSeconds * 1000;
      const timer = setTimeout(() => {
        if (request.raw.complete || request.raw.destroyed) return;
        request.log.info({ timeout_seconds: requestTimeoutSeconds }, 'request body not received in time');
        cut(REQUEST_TIMEOUT_RESPONSE);
      }, ms);
      timers.push(timer.unref());
    } else {
      const cutUpload = (reason: 'total' | 'rate', response: string, fields: Record<string, number>) => {
        if (request.raw.complete || request.raw.destroyed) return;
        cutUploads.add(request.raw);
        const p = request.principal;
        request.log.info(
          {
            reason,
            received_bytes: socket.bytesRead - startedWith,
            client_id: p?.kind === 'license' ? p.clientId : undefined,
            ...fields,
          },
          'upload too slow',
        );
        cut(response);
      };
      const total = setTimeout(
        () => cutUpload('total', tooLong, { timeout_seconds: uploadTimeoutSeconds }),
        uploadTimeoutSeconds * 1000,
      );
      timers.push(total.unref());
      if (uploadMinBytesPerSecond > 0) {
        let mark = socket.bytesRead;
        let markAt = Date.now();
        const rate = setInterval(() => {
          // Against the time really elapsed: a late timer does not raise the bar.
          const now = Date.now();
          const needed = (uploadMinBytesPerSecond * (now - markAt)) / 1000;
          if (socket.bytesRead - mark < needed) {
            cutUpload('rate', rateTooLow, {
              min_bytes_per_second: uploadMinBytesPerSecond,
              window_seconds: uploadRateWindowSeconds,
            });
            return;
          }
          mark = socket.bytesRead;
          markAt = now;
        }, uploadRateWindowSeconds * 1000);
        timers.push(rate.unref());
      }
    }
    request.raw.once('end', clear);
    request.raw.once('close', clear);
    reply.raw.once('finish', clear);
  }
}

/** A route's hooks of one kind as an array (Fastify takes one function or an array). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
