import type { Readable } from 'node:stream';
import type { SessionFileName } from '@svc/protocol';
import { BlobNotFoundError } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
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
