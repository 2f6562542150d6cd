import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseBusy, isDatabaseUnavailable } from '../db/pool.ts';
import { DomainError, type DomainErrorKind } from '../domain/errors.ts';

/** The one place a domain error's kind becomes an HTTP status. */
export const STATUS_OF_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  too_large: 413,
  insufficient_storage: 507,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

/** A domain error as the HTTP answer it becomes: status, headers and body. */
export function httpErrorOf(err: DomainError): HttpError {
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(err.retryAfterSeconds)));
  }
  return new HttpError(STATUS_OF_KIND[err.kind], err.message, { headers, extra: err.extra });
}

/**
 * The error catalog. Route handlers throw `HttpError` (request-shape problems found at the
 * edge) or let a domain code's `DomainError` through; the edge (`errorHandler`) turns every
 * error into the `{"error": "<message>"}` body. Anything unexpected becomes a 500 whose
 * body never carries internals.
 */
export class HttpError extends Error {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;
  constructor(
    statusCode: number,
    message: string,
    opts: { headers?: Record<string, string> | undefined; extra?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.statusCode = statusCode;
    this.headers = opts.headers ?? {};
    this.extra = opts.extra ?? {};
  }
}

export const UNAUTHORIZED_MESSAGE = 'Unauthorized';

export const badRequest = (message: string) => new HttpError(400, message);
/** The one plain 401 for JWT failures: identical whatever was wrong with the credential. */
export const unauthorized = (message = UNAUTHORIZED_MESSAGE) => new HttpError(401, message);
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });

/** Fastify's own error codes mapped to messages a client can act on. */
function describeFrameworkError(err: FastifyError): { status: number; message: string } | null {
  if (err.validation) {
    const ctx = err.validationContext ?? 'request';
    const first = err.validation[0];
    const where = first?.instancePath
      ? first.instancePath.replace(/^\//, '').replaceAll('/', '.')
      : (first?.params as { missingProperty?: string } | undefined)?.missingProperty;
    const types =
      first?.keyword === 'type' ? String((first.params as { type: string | string[] }).type).split(',') : null;
    const message = types ? `must be ${types.join(' or ')}` : (first?.message ?? 'is invalid');
    const detail =
      first?.keyword === 'required'
        ? `missing required field ${(first.params as { missingProperty: string }).missingProperty}`
        : `${where ?? ctx} ${message}`;
    const allowed =
      first?.keyword === 'additionalProperties'
        ? ` (${(first.params as { additionalProperty: string }).additionalProperty})`
        : '';
    return { status: 400, message: `Invalid ${ctx === 'querystring' ? 'query' : ctx}: ${detail}${allowed}` };
  }
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, message: 'Request body is not valid JSON' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, message: 'Request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, message: 'Unsupported Content-Type' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, message: 'Content-Length does not match the body' };
    default:
      break;
  }
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, message: err.message };
  }
  return null;
}

export function errorHandler(
  err: FastifyError | HttpError | DomainError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (err instanceof DomainError) err = httpErrorOf(err);
  if (err instanceof HttpError) {
    void reply
      .code(err.statusCode)
      .headers(err.headers)
      .send({ ...err.extra, error: err.message });
    return;
  }
  // The client went away before its request was complete: a reset socket (ECONNRESET,
  // "aborted") is the client's doing, not the database's. Nobody is left to answer.
  if (!request.raw.complete && request.raw.destroyed) {
    request.log.info({ reason: err.message }, 'request aborted by the client');
    void reply.code(400).send({ error: 'The request was interrupted before its end' });
    return;
  }
  // A full pool frees up within moments, a database that is down within seconds: the
  // Retry-After says which, and the console retries a GET once after it (packages/web/src/api/retry.ts).
  if (isDatabaseBusy(err)) {
    request.log.warn({ err: { message: err.message } }, 'database busy');
    void reply.code(503).header('retry-after', '1').send({ error: 'Database busy, try again shortly' });
    return;
  }
  if (isDatabaseUnavailable(err)) {
    request.log.warn({ err: { message: err.message, code: (err as { code?: string }).code } }, 'database unavailable');
    void reply.code(503).header('retry-after', '5').send({ error: 'Database unavailable, try again shortly' });
    return;
  }
  const known = describeFrameworkError(err as FastifyError);
  if (known) {
    void reply.code(known.status).send({ error: known.message });
    return;
  }
  request.log.error({ err }, 'unhandled error');
  void reply.code(500).send({ error: 'Internal server error' });
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(404).send({ error: `Not found: ${request.method} ${request.url.split('?')[0]}` });
}
