import multipart from '@fastify/multipart';
import { NO_CLIENT, UploadResponse } from '@svc/protocol';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest } from '../../http/errors.ts';
import { findInputProblem, inputProblemMessage } from '../../http/input-rules.ts';
import { discardRestOfBody } from '../../http/multipart-body.ts';
import { responses } from '../../http/responses.ts';
import { uploadWasCut } from '../../http/timeouts.ts';
import { clientAborted, tooLargeFor, UploadBodyWatch } from '../../http/upload-body.ts';
import type { StoredObject } from '../../db/schema.ts';
import { commitSession } from '../../sessions/commit.ts';
import { blobPrefix, CONTENT_TYPES } from '../../sessions/files.ts';
import { presentUpload } from '../../sessions/present.ts';
import { scanFactsOf } from '../../sessions/scan-facts.ts';
import { discardObjects, type StoreOptions, storeObject } from '../../sessions/storage.ts';
import { refuseWhenFull } from '../../sessions/storage-quota.ts';
import { acceptSessionFile } from '../../sessions/upload.ts';
import { limitUploadsPerKey, recordLimitRefusal } from './limits.ts';
import { type StagedUpload, stageParts } from './stage-parts.ts';

const NOT_STORED = 'Storage failure: the upload was not stored';

/**
 * POST /api/upload (multipart/form-data): `session_json` (required), `pipeline_log`,
 * `report_html`, `exec_summary_html` (api/upload/stage-parts.ts reads them). The 25 MB limit
 * counts the whole request body: exactly 25 x 1024 x 1024 bytes pass, one more is a 413 and
 * nothing is kept.
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
  app.post(
    '/upload',
    {
      preHandler: [requireKey(ctx, { permission: 'upload' }), limitUploadsPerKey(ctx)],
      // Every refusal, whenever it comes (a bad key in the preHandler, a 413 declared or
      // counted, a field sent twice, a storage failure), leaves the rest of the body on its
      // way: it is read and dropped for a while so the client gets to see the answer, then
      // the socket goes. Otherwise a client that stops sending after the answer would keep
      // the request open and hold the portal's shutdown until keep-alive gave up.
      onSend: async (request, reply) => {
        if (reply.statusCode >= 400) discardRestOfBody(request.raw, reply.raw);
      },
      onError: async (request, _reply, err) => recordLimitRefusal(ctx, request, err),
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
      if (Number.isFinite(declared) && declared > limitBytes) throw tooLargeFor(limitBytes)();
      if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a session_json part');
      // Disk room for the whole body (the limit when its length is not declared), held until the answer.
      const reservation = await refuseWhenFull(
        ctx,
        principal.clientId,
        Number.isFinite(declared) ? declared : limitBytes,
      );
      const watch = new UploadBodyWatch(request, limitBytes);
      const storing: StoreOptions = { failure: NOT_STORED, logger: request.log };
      const staged: StagedUpload = { json: null, parsed: undefined, files: {} };
      let results: Promise<StoredObject> | undefined;
      let committed = false;
      try {
        await stageParts(ctx, request, { keyClientId: principal.clientId, watch, reservation, storing }, staged);
        watch.checkLimit();
        // The parts end early when the client goes away: never commit a partial request.
        if (!request.raw.complete) throw clientAborted();
        if (staged.json === null || staged.json.length === 0) throw badRequest('Missing session_json');
        if (!staged.parsed) throw badRequest('session_json is not valid JSON');
        const doc = staged.parsed.doc;
        // The depth rule of every JSON body (app.ts), before anything walks the document. NUL
        // and lone surrogates stay allowed here: the file is stored as sent and the metadata
        // derived from it drops such strings (sessions/derive.ts, `storable`).
        const problem = findInputProblem(doc, ctx.config.http.maxJsonDepth, { strings: false });
        if (problem !== null) throw badRequest(inputProblemMessage('session_json', problem));
        const { metadata, body } = acceptSessionFile({
          doc,
          json: staged.json,
          keyClientId: principal.clientId,
          hasExecSummary: staged.files['exec_summary.html'] !== undefined,
        });
        // Written and synced while a large session's transaction merges its findings (sessions/commit.ts).
        results = storeObject(ctx, blobPrefix(metadata.client_id ?? NO_CLIENT, ctx.now()), [body], storing).then(
          (put) => {
            reservation.written += put.size;
            return { ...put, content_type: CONTENT_TYPES['session_results.json'] };
          },
        );
        // Reported by commitSession's await, or settled in `finally` when the commit fails first.
        results.catch(() => undefined);
        const facts = scanFactsOf(doc);
        const result = await commitSession(ctx, { principal, metadata, files: staged.files, results, facts, doc });
        committed = true;
        return presentUpload(result, ctx.config.baseUrl);
      } catch (err) {
        if (!watch.clientGone) throw err;
        // Cut for its time or rate: already logged as such.
        if (!uploadWasCut(request.raw))
          request.log.info({ received_bytes: watch.received }, 'upload aborted by the client');
        throw clientAborted();
      } finally {
        // Its write has ended, one way or the other, before the disk room is given back.
        const json = await results?.catch(() => undefined);
        reservation.release();
        watch.stop();
        ctx.metrics?.uploadBytes(watch.received, committed);
        if (!committed) {
          const keys = [...Object.values(staged.files), ...(json === undefined ? [] : [json])].map((f) => f.key);
          await discardObjects(ctx, keys, request.log, 'could not remove files of a failed upload');
        }
      }
    },
  );
}
