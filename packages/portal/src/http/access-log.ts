import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { AccessLogMode } from '../config/index.ts';

/** What one access line says about a response: its status, its size when known up front, its time. */
function accessFields(request: FastifyRequest, reply: FastifyReply) {
  const length = Number(reply.getHeader('content-length'));
  return {
    // The `req` serializer (logging.ts) writes method, URL with secrets masked, host and address only.
    req: request,
    // Flat, not under `res`: Fastify's own `res` serializer would keep the status alone.
    statusCode: reply.statusCode,
    // The body's bytes when the answer declared them; a streamed one (a stored file, compressed) has none.
    ...(Number.isInteger(length) && length >= 0 ? { size: length } : {}),
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
  };
}

/**
 * SVC_ACCESS_LOG (docs/deployment.md#access-log): at most one line per request, written when
 * the response has gone ("request completed"), instead of Fastify's two. `errors` writes it
 * for statuses of 400 and above only, so a fleet's heartbeats write nothing; `off` never.
 * A response that failed on its way out is an error, not access logging: logged in every mode.
 * At debug level a "request received" line marks a request's start, for finding one that never ends.
 */
export class AccessLog extends LogController {
  readonly #mode: AccessLogMode;

  constructor(mode: AccessLogMode) {
    super();
    this.#mode = mode;
  }

  override incomingRequest(request: FastifyRequest): void {
    // Checked first: the line's fields are not even built unless debug is on.
    if ((request.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('debug') === false) return;
    request.log.debug({ req: request }, 'request received');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ ...accessFields(request, reply), err: error }, 'request errored');
      return;
    }
    if (this.#mode === 'off' || (this.#mode === 'errors' && reply.statusCode < 400)) return;
    reply.log.info(accessFields(request, reply), 'request completed');
  }
}
