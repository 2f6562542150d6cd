import multipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import {
  parseSessionJson,
  UPLOAD_FIELDS,
  UploadResponse,
  uploadTooLargeMessage,
  type SessionFileName,
  NO_CLIENT,
} from '@svc/protocol';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import type { StoredObject } from '../../db/schema.ts';
import { DomainError } from '../../domain/errors.ts';
import { badRequest, HttpError, STATUS_OF_KIND, tooManyRequests } from '../../http/errors.ts';
import { findInputProblem, inputProblemMessage } from '../../http/input-rules.ts';
import { clientError, discardRestOfBody, fieldBytes, partsOf } from '../../http/multipart-body.ts';
import { responses } from '../../http/responses.ts';
import type { StorageRefusal } from '../../metrics/registry.ts';
import { uploadWasCut } from '../../http/timeouts.ts';
import { commitSession } from '../../sessions/commit.ts';
import { scanFactsOf } from '../../sessions/scan-facts.ts';
import { fileClientId } from '../../sessions/derive.ts';
import { blobPrefix, CONTENT_TYPES } from '../../sessions/files.ts';
import { presentUpload } from '../../sessions/present.ts';
import { discardObjects, storeObject, type StoreOptions } from '../../sessions/storage.ts';
import { refuseWhenFull } from '../../sessions/storage-quota.ts';
import { acceptSessionFile } from '../../sessions/upload.ts';

/** 413 naming the limit (SVC_UPLOAD_MAX_MB) and its bytes, so a client can tell which limit it met. */
const tooLargeFor = (limitBytes: number) => () =>
  new HttpError(413, uploadTooLargeMessage(limitBytes), { extra: { limit_bytes: limitBytes } });
const clientAborted = () => badRequest('The upload was interrupted before the end of the request');
const NOT_STORED = 'Storage failure: the upload was not stored';
/** What a key over its limit of uploads in progress is told to wait: about one upload of a few MB on a slow link. */
const BUSY_RETRY_SECONDS = 30;

/**
 * SVC_UPLOADS_PER_KEY: uploads in progress per key at most, counted in
 * this process (AppContext.uploads); the legacy key is one key. A slot is held until the answer is out or the
 * connection is gone.
 */
function limitUploadsPerKey(ctx: AppContext): preHandlerAsyncHookHandler {
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

/**
 * A session the limits cannot take is logged once, at info, with what its answer says: the
 * size limit (413), the client's or the portal's storage (413, 507), the disk's floor (507),
 * the key's sessions (403) or uploads in progress (429). Other refusals (a bad key, a bad
 * file) are the caller's and are not logged here.
 */
function logLimitRefusal(request: FastifyRequest, err: Error): void {
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

/** The refusals for room (sessions/storage-quota.ts) by their reason in svc_uploads_refused_total. */
const ROOM_REFUSALS: Record<string, StorageRefusal> = {
  'insufficient_storage.disk': 'disk',
  'insufficient_storage.portal_limit': 'portal_limit',
  'too_large.client_storage': 'client_limit',
};

/**
 * POST /api/upload (multipart/form-data): `session_json` (required), `pipeline_log`,
 * `report_html`, `exec_summary_html`. Files stream to the blob store as they arrive; only
 * the session JSON is held in memory, because it has to be parsed. The 25 MB limit counts
 * the whole request body: exactly 25 x 1024 x 1024 bytes pass, one more is a 413 and
 * nothing is kept. Unknown fields are ignored (newer scanners may send more).
 */
export default function register(app: App, ctx: AppContext): void {
  // The multipart parser in this route's own context: its plugin adds an async onResponse hook
  // (removing saved temp files, which this route never makes) that every other request would pay.
  void app.register(async (scope: App) => {
    await scope.register(multipart, {
      // Per-part limits only; the route counts the whole body against SVC_UPLOAD_MAX_MB.
      limits: {
        fileSize: ctx.config.uploads.maxBytes,
        fieldSize: ctx.config.uploads.maxBytes,
        files: 8,
        fields: 8,
        parts: 16,
        headerPairs: 50,
      },
    });
    registerUpload(scope, ctx);
  });
}

function registerUpload(app: App, ctx: AppContext): void {
  const limitBytes = ctx.config.uploads.maxBytes;
  const tooLarge = tooLargeFor(limitBytes);
  app.post(
    '/upload',
    {
      preHandler: [requireKey(ctx, { permission: 'upload' }), limitUploadsPerKey(ctx)],
      // Every refusal, whenever it comes (a bad key in the preHandler, a 413 declared or
      // counted, a field sent twice, a storage failure), leaves the rest of the body on its
      // way: it is read and dropped for a while so the client gets to see the answer, then
      // The socket goes. Otherwise a client that stops sending after the answer would keep
      // The request open and hold the portal's shutdown until keep-alive gave up.
      onSend: async (request, reply) => {
        if (reply.statusCode >= 400) discardRestOfBody(request.raw, reply.raw);
      },
      onError: async (request, _reply, err) => {
        logLimitRefusal(request, err);
        const reason = err instanceof DomainError ? ROOM_REFUSALS[err.code] : undefined;
        if (reason !== undefined) ctx.metrics?.uploadRefused(reason);
      },
      schema: {
        operationId: 'uploadSession',
        tags: ['sessions'],
        summary: 'Upload a scan session',
        security: [{ apiKey: [] }],
        consumes: ['multipart/form-data'],
        response: responses({ 200: UploadResponse }, 400, 403, 409, 413, 429, 500, 503, 507),
      },
    },
    async (request) => {
      const principal = keyHolderOf(request);
      const declared = Number(request.headers['content-length']);
      // Refused before reading (the onSend hook reads the rest away so the client sees it).
      if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();
      if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a session_json part');
      // Disk room for the whole body (the limit when its length is not declared), held until the answer.
      const reservation = await refuseWhenFull(
        ctx,
        principal.clientId,
        Number.isFinite(declared) ? declared : limitBytes,
      );

      // Count the raw body, framing included, whatever the parts are.
      let received = 0;
      const count = (chunk: Buffer) => {
        received += chunk.length;
      };
      request.raw.on('data', count);
      const over = () => received > limitBytes;

      // A client that goes away mid-body (the socket closes before the request is complete)
      // is neither a storage nor a database problem: the wait for more parts is cut and the
      // event logged once as what it is.
      let clientGone = false;
      let reading: MultipartFile['file'] | null = null;
      let onClose = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onClose = () => {
          if (request.raw.complete) return;
          clientGone = true;
          const err = clientAborted();
          reading?.destroy(err);
          reject(err);
        };
        request.raw.once('close', onClose);
      });
      aborted.catch(() => undefined);
      const guarded = async function* (file: MultipartFile['file']) {
        reading = file;
        try {
          for await (const chunk of file as AsyncIterable<Buffer>) {
            if (over()) throw tooLarge();
            yield chunk;
          }
        } catch (err) {
          throw over() ? tooLarge() : clientGone ? clientAborted() : clientError(err);
        } finally {
          reading = null;
        }
      };

      const storing: StoreOptions = { failure: NOT_STORED, logger: request.log };
      const staged: Partial<Record<SessionFileName, StoredObject>> = {};
      let json: Buffer | null = null;
      // The parsed session_json; undefined until it arrives, null when it is not JSON.
      let parsed: { doc: unknown } | null | undefined;
      // docs/api.md#ids-are-per-client: files are stored under their client. A key's client is known at once; the
      // legacy key's comes from session_json (our client sends it first), before which
      // files go under a `legacy` directory.
      let storeUnder: string | null = principal.clientId;
      let committed = false;
      try {
        for await (const part of partsOf(request, aborted)) {
          if (over()) throw tooLarge();
          const name = UPLOAD_FIELDS[part.fieldname];
          if (name === undefined || (name === 'session_results.json' ? json !== null : staged[name] !== undefined)) {
            if (name !== undefined) throw badRequest(`Field ${part.fieldname} was sent twice`);
            if (part.type === 'file') for await (const _ of guarded(part.file));
            continue;
          }
          if (name === 'session_results.json') {
            const chunks: Buffer[] = [];
            if (part.type === 'file') for await (const chunk of guarded(part.file)) chunks.push(chunk);
            else chunks.push(fieldBytes(part));
            json = Buffer.concat(chunks);
            const read = parseSessionJson(json.toString('utf8'));
            parsed = 'doc' in read ? read : null;
            if (principal.clientId === null && parsed) storeUnder = fileClientId(parsed.doc) ?? NO_CLIENT;
            continue;
          }
          const source = part.type === 'file' ? guarded(part.file) : [fieldBytes(part)];
          const put = await storeObject(ctx, blobPrefix(storeUnder, ctx.now()), source, {
            ...storing,
            isCallerError: (err) => err instanceof HttpError,
          });
          staged[name] = { ...put, content_type: CONTENT_TYPES[name] };
          reservation.written += put.size;
        }
        if (over()) throw tooLarge();
        // The parts end early when the client goes away: never commit a partial request.
        if (!request.raw.complete) throw clientAborted();
        if (json === null || json.length === 0) throw badRequest('Missing session_json');
        if (!parsed) throw badRequest('session_json is not valid JSON');
        const doc = parsed.doc;
        // The depth rule of every JSON body (app.ts), before anything walks the document. NUL
        // and lone surrogates stay allowed here: the file is stored as sent and the metadata
        // derived from it drops such strings (sessions/derive.ts, `storable`).
        const problem = findInputProblem(doc, ctx.config.http.maxJsonDepth, { strings: false });
        if (problem !== null) throw badRequest(inputProblemMessage('session_json', problem));
        const { metadata, body } = acceptSessionFile({
          doc,
          json,
          keyClientId: principal.clientId,
          hasExecSummary: staged['exec_summary.html'] !== undefined,
        });
        const put = await storeObject(ctx, blobPrefix(metadata.client_id ?? NO_CLIENT, ctx.now()), [body], storing);
        reservation.written += put.size;
        staged['session_results.json'] = { ...put, content_type: CONTENT_TYPES['session_results.json'] };

        const result = await commitSession(ctx, { principal, metadata, files: staged, facts: scanFactsOf(doc), doc });
        committed = true;
        return presentUpload(result, ctx.config.baseUrl);
      } catch (err) {
        if (!clientGone) throw err;
        // Cut for its time or rate: already logged as such.
        if (!uploadWasCut(request.raw)) request.log.info({ received_bytes: received }, 'upload aborted by the client');
        throw clientAborted();
      } finally {
        reservation.release();
        request.raw.off('data', count);
        ctx.metrics?.uploadBytes(received, committed);
        request.raw.off('close', onClose);
        if (!committed) {
          const keys = Object.values(staged).map((f) => f.key);
          await discardObjects(ctx, keys, request.log, 'could not remove files of a failed upload');
        }
      }
    },
  );
}
