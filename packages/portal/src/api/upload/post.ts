import type { Multipart, MultipartFile, MultipartValue } from '@fastify/multipart';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { UPLOAD_FIELDS, UPLOAD_LIMIT_BYTES, UploadResponse, type SessionFileName } from '@svc/protocol';
import { keyHolderOf, requireKey } from '../../auth/guards.ts';
import type { App, AppContext } from '../../context.ts';
import type { StoredObject } from '../../db/schema.ts';
import { badRequest, HttpError } from '../../http/errors.ts';
import { findInputProblem, inputProblemMessage } from '../../http/input-rules.ts';
import { responses } from '../../http/responses.ts';
import { commitSession } from '../../sessions/commit.ts';
import { fileClientId } from '../../sessions/derive.ts';
import { blobPrefix, CONTENT_TYPES } from '../../sessions/files.ts';
import { presentUpload } from '../../sessions/present.ts';
import { NO_CLIENT } from '../../sessions/queries.ts';
import { discardObjects, storeObject, type StoreOptions } from '../../sessions/storage.ts';
import { acceptSessionFile } from '../../sessions/upload.ts';

const tooLarge = () => new HttpError(413, 'Upload exceeds 25 MB');
const clientAborted = () => badRequest('The upload was interrupted before the end of the request');
const NOT_STORED = 'Storage failure: the upload was not stored';

/** How much of the rest of a refused body is read and thrown away, once the 413 is sent, before the connection is cut. */
const LINGER_BYTES = UPLOAD_LIMIT_BYTES;
const LINGER_MS = 10_000;

/**
 * After a 413 (or any refusal before the body was read to its end) the rest of the body is
 * read and discarded, within a bound, instead of the connection being closed at once, or
 * left half read (a "lingering close"). A socket closed with unread data
 * makes the kernel answer with a reset, and a client still sending its body then sees
 * EPIPE/ECONNRESET instead of the 413 it was sent. The bound counts from the moment the
 * answer is out (the client needs a chance to read it); within it the request ends
 * normally and the connection stays usable, past it (an endless body) it is cut.
 */
function discardRestOfBody(raw: IncomingMessage, res: ServerResponse): void {
  if (raw.complete || raw.destroyed) return;
  const socket = raw.socket;
  raw.unpipe();
  let discardedAfterAnswer = 0;
  let timer: NodeJS.Timeout | undefined;
  const cut = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  if (!res.shouldKeepAlive) {
    // The client asked for `Connection: close`: Node would destroy the socket right after
    // the answer, with the rest of the body unread. Close our side only (FIN, as RFC 9112
    // 9.6 wants) and keep reading; the socket goes once the body has ended or the bound hits.
    socket.destroySoon = () => void socket.end();
    raw.once('end', () => socket.destroy());
  }
  res.once('finish', () => {
    if (!raw.complete) timer = setTimeout(cut, LINGER_MS).unref();
  });
  raw.on('data', (chunk: Buffer) => {
    if (!res.writableFinished) return;
    discardedAfterAnswer += chunk.length;
    if (discardedAfterAnswer > LINGER_BYTES) cut();
  });
  raw.once('end', () => clearTimeout(timer));
  raw.once('close', () => clearTimeout(timer));
  raw.resume();
}

/**
 * An error while reading the multipart body is the client's: a malformed or truncated
 * body, a broken connection, a JSON field that is not JSON. Without this it would surface
 * as a 500 (busboy's errors carry no status) or as the plugin's 406 for a bad JSON field.
 */
function clientError(err: unknown): Error {
  if (err instanceof HttpError) return err;
  const e = err as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (e.code === 'FST_INVALID_JSON_FIELD_ERROR') return badRequest('session_json is not valid JSON');
  // The plugin's own limit errors (413) and prototype-name refusal (400) keep their status.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 && e.statusCode !== 406)
    return err as Error;
  return badRequest(`Malformed multipart body: ${typeof e.message === 'string' ? e.message : 'unreadable'}`);
}

/** The parts of the request, with parse errors turned into client errors. */
async function* partsOf(request: FastifyRequest, aborted: Promise<never>): AsyncGenerator<Multipart> {
  const it = request.parts();
  try {
    for (;;) {
      let next: IteratorResult<Multipart>;
      try {
        // The parser waits for more parts forever once the client has gone: race the abort.
        next = await Promise.race([it.next(), aborted]);
      } catch (err) {
        throw clientError(err);
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await it.return?.(undefined).catch(() => undefined);
  }
}

/**
 * The bytes of a plain (non-file) field. @fastify/multipart parses a field sent with
 * `Content-Type: application/json` into a value; serialise it back to JSON text.
 */
function fieldBytes(part: MultipartValue): Buffer {
  const v: unknown = part.value;
  return Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8');
}

/**
 * POST /api/upload (multipart/form-data): `session_json` (required), `pipeline_log`,
 * `report_html`, `exec_summary_html`. Files stream to the blob store as they arrive; only
 * the session JSON is held in memory, because it has to be parsed. The 25 MB limit counts
 * the whole request body: exactly 25 x 1024 x 1024 bytes pass, one more is a 413 and
 * nothing is kept. Unknown fields are ignored (newer scanners may send more).
 */
export default function register(app: App, ctx: AppContext): void {
  app.post(
    '/upload',
    {
      preHandler: requireKey(ctx, { permission: 'upload' }),
      // Every refusal, whenever it comes (a bad key in the preHandler, a 413 declared or
      // counted, a field sent twice, a storage failure), leaves the rest of the body on its
      // way: it is read and dropped for a while so the client gets to see the answer, then
      // the socket goes. Otherwise a client that stops sending after the answer would keep
      // the request open and hold the portal's shutdown until keep-alive gave up.
      onSend: async (request, reply) => {
        if (reply.statusCode >= 400) discardRestOfBody(request.raw, reply.raw);
      },
      schema: {
        tags: ['sessions'],
        summary: 'Upload a scan session',
        security: [{ apiKey: [] }],
        consumes: ['multipart/form-data'],
        response: responses({ 200: UploadResponse }, 400, 403, 413, 500),
      },
    },
    async (request) => {
      const principal = keyHolderOf(request);
      const declared = Number(request.headers['content-length']);
      // Refused before reading (the onSend hook reads the rest away so the client sees it).
      if (Number.isFinite(declared) && declared > UPLOAD_LIMIT_BYTES) throw tooLarge();
      if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a session_json part');

      // Count the raw body, framing included, whatever the parts are.
      let received = 0;
      const count = (chunk: Buffer) => {
        received += chunk.length;
      };
      request.raw.on('data', count);
      const over = () => received > UPLOAD_LIMIT_BYTES;

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
      // D17: files are stored under their client. A key's client is known at once; the
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
            try {
              parsed = { doc: JSON.parse(json.toString('utf8').replace(/^\uFEFF/, '')) as unknown };
            } catch {
              parsed = null;
            }
            if (principal.clientId === null && parsed) storeUnder = fileClientId(parsed.doc) ?? NO_CLIENT;
            continue;
          }
          const source = part.type === 'file' ? guarded(part.file) : [fieldBytes(part)];
          const put = await storeObject(ctx, blobPrefix(storeUnder, ctx.now()), source, {
            ...storing,
            isCallerError: (err) => err instanceof HttpError,
          });
          staged[name] = { ...put, content_type: CONTENT_TYPES[name] };
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
        staged['session_results.json'] = { ...put, content_type: CONTENT_TYPES['session_results.json'] };

        const result = await commitSession(ctx, { principal, metadata, files: staged });
        committed = true;
        return presentUpload(result, ctx.config.baseUrl);
      } catch (err) {
        if (!clientGone) throw err;
        request.log.info({ received_bytes: received }, 'upload aborted by the client');
        throw clientAborted();
      } finally {
        request.raw.off('data', count);
        request.raw.off('close', onClose);
        if (!committed) {
          const keys = Object.values(staged).map((f) => f.key);
          await discardObjects(ctx, keys, request.log, 'could not remove files of a failed upload');
        }
      }
    },
  );
}
