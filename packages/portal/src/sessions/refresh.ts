import type { SessionFileName } from '@svc/protocol';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { PutResult } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import type { StoredObject } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession } from './access.ts';
import { CONTENT_TYPES } from './files.ts';
import { enforceStorageLimits, lockForStorageLimit } from './storage-quota.ts';
import { replaceFileAtVersion, type SessionRow } from './queries.ts';
import { discardObjects, type Log } from './storage.ts';

/** Optimistic-locking attempts before a refresh gives up with 409. */
const REFRESH_ATTEMPTS = 3;

/** The session a refresh would change, checked before anything is written: 404 (missing or another client's), 409 (ambiguous). */
export function refreshableSession(
  ctx: AppContext,
  principal: Principal,
  sessionId: string,
  clientId?: string,
): Promise<SessionRow> {
  return resolveSession(ctx, scopeOf(principal), sessionId, clientId);
}

export interface ReplacedFile {
  /** The object the file pointed to before, to delete once nothing references it; null when the file is new. */
  previousKey: string | null;
}

/**
 * Point one display file of a session at a new, already durable object (PUT
 * /api/refresh). Only that entry of the row's `files` changes, plus the row's bookkeeping
 * (`version`, `updated_at`); review status, history, metadata and the other files stay.
 *
 * One exception, on purpose: `metadata.has_exec_summary` means "an executive summary file
 * exists" (docs/session-file.md#computed-blocks: true when one was uploaded). A refresh may add
 * exec_summary.html to a session uploaded without one, and then the flag becomes true so
 * it keeps describing the stored files; nothing derived from the scan changes.
 *
 * Concurrency: optimistic locking on `sessions.version`. The update applies only if the
 * version is still the one read, so the previous key we return is exactly the object this
 * update unreferenced, and a concurrent re-upload or remediation update is never
 * overwritten. A lost race is retried; after REFRESH_ATTEMPTS the caller gets 409.
 */
async function replaceSessionFile(
  ctx: AppContext,
  input: { principal: Principal; sessionId: string; clientId: string; file: SessionFileName; object: StoredObject },
): Promise<ReplacedFile> {
  const { principal, sessionId, clientId, file, object } = input;
  for (let attempt = 0; attempt < REFRESH_ATTEMPTS; attempt++) {
    const row = await refreshableSession(ctx, principal, sessionId, clientId);
    const previous = row.files[file];
    const setExecSummary = file === 'exec_summary.html' && row.metadata.has_exec_summary !== true;
    const applied = await ctx.db.transaction().execute(async (trx) => {
      await lockForStorageLimit(trx, ctx.config);
      const done = await replaceFileAtVersion(trx, {
        ref: { clientId, sessionId },
        version: row.version,
        file,
        object,
        setExecSummary,
        now: ctx.now(),
      });
      if (done && object.size > (previous?.size ?? 0)) await enforceStorageLimits(trx, ctx.config, clientId);
      return done;
    });
    if (applied) return { previousKey: previous?.key ?? null };
  }
  throw new DomainError('conflict.session_changed', 'The session changed during the refresh; try again');
}

interface RefreshInput {
  principal: Principal;
  sessionId: string;
  clientId: string;
  file: SessionFileName;
  /** The new file, already durable in the blob store. */
  put: PutResult;
  logger: Log;
}

/**
 * PUT /api/refresh once the new object is written: point the row at it, then delete the
 * old object. Any failure before the row points at it deletes the new object again; an old
 * object that cannot be deleted is an orphan for the sweep.
 */
export async function refreshSessionFile(ctx: AppContext, input: RefreshInput): Promise<ReplacedFile> {
  const { put, logger } = input;
  const object: StoredObject = { ...put, content_type: CONTENT_TYPES[input.file] };
  let previousKey: string | null;
  try {
    if (put.size === 0) throw new DomainError('invalid.empty_body', 'Empty body: send the file as text/html');
    ({ previousKey } = await replaceSessionFile(ctx, { ...input, object }));
  } catch (err) {
    await discardObjects(ctx, [put.key], logger, 'could not remove the file of a failed refresh');
    throw err;
  }
  if (previousKey !== null && previousKey !== put.key)
    await discardObjects(ctx, [previousKey], logger, 'could not delete the replaced file');
  return { previousKey };
}
