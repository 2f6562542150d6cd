import type { Readable } from 'node:stream';
import {
  REFRESHABLE_FILES,
  RefreshQuery,
  RefreshResponse,
  UPLOAD_LIMIT_SETTING,
  type SessionFileName,
} from '@svc/protocol';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import { responses } from '../../http/responses.ts';
import { parseSessionId } from '../../sessions/access.ts';
import { blobPrefix } from '../../sessions/files.ts';
import { presentRefresh } from '../../sessions/present.ts';
import { refreshableSession, refreshSessionFile } from '../../sessions/refresh.ts';
import { storeObject } from '../../sessions/storage.ts';

/** The upload limit applies to each refreshed file as well (SVC_UPLOAD_MAX_MB). */
const tooLargeFor = (limitBytes: number) => () =>
  new HttpError(
    413,
    `File exceeds ${limitBytes / 1024 / 1024} MB (the portal's upload limit, ${UPLOAD_LIMIT_SETTING})`,
    {
      headers: { connection: 'close' },
      extra: { limit_bytes: limitBytes },
    },
  );

/**
 * PUT /api/refresh?session=<id>&file=<name>: replace one display file of an
 * existing session. Body: the raw file, Content-Type text/html, at most the upload limit
 * (SVC_UPLOAD_MAX_MB, 25 MB by default); it streams to the blob store and is never held in memory.
 *
 * Checklist: key (401 missing/invalid, before the body is read) → `session` and `file`
 * (400: missing, or file not report.html / exec_summary.html) → the session of that id
 * under the key's client (404 when there is none, whoever else has that id; the legacy key
 * may refresh any, naming `client_id` when the id is ambiguous, 409) → write the new
 * object → point the row at it and delete the old one (sessions/refresh.ts). Other methods
 * on this path answer 405 (not-allowed.ts). Another content type is a 415.
 */
export default function register(app: App, ctx: AppContext): void {
  const limitBytes = ctx.config.uploads.maxBytes;
  const tooLarge = tooLargeFor(limitBytes);
  // A child context whose only body parser is text/html, handing the request stream to the
  // handler unread; any other content type (JSON, text/plain, forms) is a 415 here.
  void app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/html', (_request, payload, done) => done(null, payload));
    scope.put(
      '/refresh',
      {
        onRequest: requireKey(ctx, { permission: 'upload', failStatus: 401 }),
        schema: {
          operationId: 'replaceSessionDisplayFile',
          tags: ['sessions'],
          summary: 'Replace a display file (report.html, exec_summary.html) of a session',
          security: [{ apiKey: [] }],
          querystring: RefreshQuery,
          consumes: ['text/html'],
          response: responses({ 200: RefreshResponse }, 400, 401, 403, 404, 409, 413, 415, 500, 503, 507),
        },
      },
      async (request) => {
        const principal = keyHolderOf(request);
        const { session, file: fileParam, client_id: clientIdParam } = request.query;
        const sessionId = parseSessionId(session);
        if (fileParam === undefined || fileParam === '') throw badRequest('Missing file parameter');
        if (!(REFRESHABLE_FILES as readonly string[]).includes(fileParam))
          throw badRequest(`Invalid file parameter: must be one of ${REFRESHABLE_FILES.join(', ')}`);
        const file = fileParam as SessionFileName;
        const declared = Number(request.headers['content-length']);
        if (Number.isFinite(declared) && declared > limitBytes) throw tooLarge();

        // 404 (409) before anything is written; checked again when the row is updated.
        const { client_id: clientId } = await refreshableSession(ctx, principal, sessionId, clientIdParam);
        const body = request.body as Readable | undefined;
        if (body === undefined || body === null || typeof body.pipe !== 'function')
          throw badRequest('Missing body: send the file as text/html');

        let received = 0;
        const guarded = async function* () {
          for await (const chunk of body as AsyncIterable<Buffer>) {
            received += chunk.length;
            if (received > limitBytes) throw tooLarge();
            yield chunk;
          }
        };
        const put = await storeObject(ctx, blobPrefix(clientId, ctx.now()), guarded(), {
          failure: 'Storage failure: the file was not stored',
          logger: request.log,
          isCallerError: (err) => err instanceof HttpError,
        });
        const { previousKey } = await refreshSessionFile(ctx, {
          principal,
          sessionId,
          clientId,
          file,
          put,
          logger: request.log,
        });
        return presentRefresh(sessionId, file, previousKey);
      },
    );
  });
}
