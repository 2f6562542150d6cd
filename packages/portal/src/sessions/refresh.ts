import { sql } from 'kysely';
import type { SessionFileName } from '@svc/protocol';
import { scopeOf, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { StoredObject } from '../db/schema.ts';
import { conflict } from '../http/errors.ts';
import { resolveSession } from './access.ts';
import type { SessionRow } from './present.ts';

/** Optimistic-locking attempts before a refresh gives up with 409. */
export const REFRESH_ATTEMPTS = 3;

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
 * Point one display file of a session at a new, already durable object (SPEC PUT
 * /api/refresh). Only that entry of the row's `files` changes, plus the row's bookkeeping
 * (`version`, `updated_at`); review status, history, metadata and the other files stay.
 *
 * One exception, on purpose: `metadata.has_exec_summary` means "an executive summary file
 * exists" (SPEC "Summary blocks": true when one was uploaded). A refresh may add
 * exec_summary.html to a session uploaded without one, and then the flag becomes true so
 * it keeps describing the stored files; nothing derived from the scan changes.
 *
 * Concurrency: optimistic locking on `sessions.version`. The update applies only if the
 * version is still the one read, so the previous key we return is exactly the object this
 * update unreferenced, and a concurrent re-upload or remediation update is never
 * overwritten. A lost race is retried; after REFRESH_ATTEMPTS the caller gets 409.
 */
export async function replaceSessionFile(
  ctx: AppContext,
  input: { principal: Principal; sessionId: string; clientId: string; file: SessionFileName; object: StoredObject },
): Promise<ReplacedFile> {
  const { principal, sessionId, clientId, file, object } = input;
  for (let attempt = 0; attempt < REFRESH_ATTEMPTS; attempt++) {
    const row = await refreshableSession(ctx, principal, sessionId, clientId);
    const previous = row.files[file];
    const setExecSummary = file === 'exec_summary.html' && row.metadata.has_exec_summary !== true;
    const result = await ctx.db
      .updateTable('sessions')
      .set({
        files: sql<string>`jsonb_set(files, ${sql.val([file])}::text[], ${JSON.stringify(object)}::jsonb)`,
        ...(setExecSummary ? { metadata: sql<string>`jsonb_set(metadata, '{has_exec_summary}', 'true'::jsonb)` } : {}),
        version: sql<number>`version + 1`,
        updated_at: ctx.now(),
      })
      .where('client_id', '=', clientId)
      .where('session_id', '=', sessionId)
      .where('version', '=', row.version)
      .executeTakeFirst();
    if (result.numUpdatedRows === 1n) return { previousKey: previous?.key ?? null };
  }
  throw conflict('The session changed during the refresh; try again');
}
