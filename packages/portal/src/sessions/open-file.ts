import type { Readable } from 'node:stream';
import { type SessionFileName, UPLOAD_LIMIT_BYTES } from '@svc/protocol';
import { BlobNotFoundError, BlobStoreUnavailableError } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { sessionNotFound } from './access.ts';
import { CONTENT_TYPES } from './files.ts';
import { findSession, type SessionRow } from './queries.ts';

interface OpenedFile {
  stream: Readable;
  size: number;
  /** The row the object was found through (re-read when the first one was stale). */
  row: SessionRow;
}

/**
 * Open one stored file of a session for reading. Objects are immutable and a refresh or
 * re-upload deletes the old object right after committing the new one, so a row read a
 * moment ago may point at an object that is already gone: then the row is read again and
 * the current object opened (once open, a later delete does not cut the stream short).
 * Returns null when the session or file no longer exists, or the session changed hands
 * in between; a committed row whose object is missing is a storage failure.
 */
export async function openSessionFile(
  ctx: AppContext,
  session: SessionRow,
  file: SessionFileName,
): Promise<OpenedFile | null> {
  let row = session;
  for (let attempt = 0; attempt < 3; attempt++) {
    const entry = row.files[file];
    if (entry === undefined) return null;
    try {
      const blob = await ctx.blobs.get(entry.key);
      return { ...blob, row };
    } catch (err) {
      // Unreachable: a 503 (the caller may retry); the cause is for the log only.
      if (err instanceof BlobStoreUnavailableError) ctx.logger.warn({ err: err.cause }, 'blob store unavailable');
      if (!(err instanceof BlobNotFoundError)) throw err;
    }
    const fresh = await findSession(ctx.db, { clientId: row.client_id, sessionId: row.session_id });
    if (fresh === undefined || fresh.client_id !== session.client_id) return null;
    if (fresh.files[file]?.key === entry.key) break;
    row = fresh;
  }
  ctx.logger.error({ session_id: session.session_id, file }, 'stored file of a committed session is missing');
  throw new DomainError('internal.storage', 'Storage failure: the file could not be read');
}

/** A file to serve: its stream, length and our content type (never the uploader's). A missing file is a 404. */
export async function fileToServe(
  ctx: AppContext,
  session: SessionRow,
  file: SessionFileName,
): Promise<{ stream: Readable; size: number; contentType: string }> {
  const opened = await openSessionFile(ctx, session, file);
  if (opened === null) throw new DomainError('not_found.file', `File not found: ${file}`);
  return { stream: opened.stream, size: opened.size, contentType: CONTENT_TYPES[file] };
}

/**
 * A stored file is at most an upload plus what remediation updates added; anything beyond is
 * refused unread. The larger of the default and the configured limit: a file stored before
 * SVC_UPLOAD_MAX_MB was lowered still opens.
 */
const maxStoredBytes = (ctx: AppContext) => 2 * Math.max(UPLOAD_LIMIT_BYTES, ctx.config.uploads.maxBytes);

const storedFileProblem = (message: string) => new DomainError('internal.session_file', message);

/** The parsed session_results.json of a session and the object it was read from (404 when gone). */
export async function readSessionDocument(
  ctx: AppContext,
  session: SessionRow,
): Promise<{ doc: unknown; key: string }> {
  const opened = await openSessionFile(ctx, session, 'session_results.json');
  if (opened === null) throw sessionNotFound();
  const key = opened.row.files['session_results.json']?.key ?? '';
  const maxBytes = maxStoredBytes(ctx);
  if (opened.size > maxBytes) {
    opened.stream.destroy();
    throw storedFileProblem('The stored session file is larger than any upload');
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of opened.stream) {
    total += (chunk as Buffer).length;
    // The size is the store's word; a stream longer than it is cut off rather than trusted.
    if (total > maxBytes) {
      opened.stream.destroy();
      throw storedFileProblem('The stored session file is larger than any upload');
    }
    chunks.push(chunk as Buffer);
  }
  try {
    const doc: unknown = JSON.parse(
      Buffer.concat(chunks, total)
        .toString('utf8')
        .replace(/^\uFEFF/, ''),
    );
    return { doc, key };
  } catch {
    throw storedFileProblem('The stored session file is not valid JSON');
  }
}
