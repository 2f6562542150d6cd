import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { keyHolderOf } from '../../auth/guards.ts';
import type { AppContext } from '../../context.ts';
import { DomainError } from '../../domain/errors.ts';
import { HttpError, STATUS_OF_KIND, tooManyRequests } from '../../http/errors.ts';
import type { StorageRefusal } from '../../metrics/registry.ts';

/** What a key over its limit of uploads in progress is told to wait: about one upload of a few MB on a slow link. */
const BUSY_RETRY_SECONDS = 30;

/**
 * SVC_UPLOADS_PER_KEY: uploads in progress per key at most, counted in this process
 * (AppContext.uploads); the legacy key is one key. A slot is held until the answer is out or
 * the connection is gone.
 */
export function limitUploadsPerKey(ctx: AppContext): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const principal = keyHolderOf(request);
    const key = principal.kind === 'license' ? `license:${principal.license.id}` : 'legacy';
    const release = ctx.uploads.tryEnter(key);
    if (release === null)
      throw tooManyRequests(
        `Too many uploads in progress for this key (${ctx.config.http.uploadsPerKey}), try again later`,
        BUSY_RETRY_SECONDS,
      );
    reply.raw.once('close', release);
  };
}

/** The refusals for room (sessions/storage-quota.ts) by their reason in svc_uploads_refused_total. */
const ROOM_REFUSALS: Record<string, StorageRefusal> = {
  'insufficient_storage.disk': 'disk',
  'insufficient_storage.portal_limit': 'portal_limit',
  'too_large.client_storage': 'client_limit',
};

/**
 * A session the limits cannot take is logged once, at info, with what its answer says: the
 * size limit (413), the client's or the portal's storage (413, 507), the disk's floor (507),
 * the key's sessions (403) or uploads in progress (429); refusals for room are counted in the
 * metrics. Other refusals (a bad key, a bad file) are the caller's and are not logged here.
 */
export function recordLimitRefusal(ctx: AppContext, request: FastifyRequest, err: Error): void {
  const reason = err instanceof DomainError ? ROOM_REFUSALS[err.code] : undefined;
  if (reason !== undefined) ctx.metrics?.uploadRefused(reason);
  const status = err instanceof HttpError ? err.statusCode : err instanceof DomainError ? STATUS_OF_KIND[err.kind] : 0;
  const limited = status === 413 || status === 429 || status === 507;
  if (!limited && !(err instanceof DomainError && err.code === 'forbidden.session_limit')) return;
  const p = request.principal;
  request.log.info(
    {
      status,
      error: err.message,
      declared_bytes: Number(request.headers['content-length']) || undefined,
      client_id: p?.kind === 'license' ? p.clientId : undefined,
    },
    'upload refused: over a limit',
  );
}
