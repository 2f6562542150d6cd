import type { Multipart, MultipartValue } from '@fastify/multipart';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { badRequest, HttpError } from './errors.ts';

/** Reading a multipart upload body: its parts, its errors, and what is left of it after a refusal. */

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
export function discardRestOfBody(raw: IncomingMessage, res: ServerResponse): void {
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
export function clientError(err: unknown): Error {
  if (err instanceof HttpError) return err;
  const e = err as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (e.code === 'FST_INVALID_JSON_FIELD_ERROR') return badRequest('session_json is not valid JSON');
  // The plugin's own limit errors (413) and prototype-name refusal (400) keep their status.
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500 && e.statusCode !== 406)
    return err as Error;
  return badRequest(`Malformed multipart body: ${typeof e.message === 'string' ? e.message : 'unreadable'}`);
}

/** The parts of the request, with parse errors turned into client errors. */
export async function* partsOf(request: FastifyRequest, aborted: Promise<never>): AsyncGenerator<Multipart> {
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
export function fieldBytes(part: MultipartValue): Buffer {
  const v: unknown = part.value;
  return Buffer.from(typeof v === 'string' ? v : JSON.stringify(v), 'utf8');
}
