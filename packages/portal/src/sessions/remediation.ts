import { setTimeout as sleep } from 'node:timers/promises';
import { type AuditEvent, REMEDIATION_STATUSES, type RemediationStatus, type RemediationSummary } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, scopeOf, type UserPrincipal } from '../auth/principal.ts';
import { BlobNotFoundError } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import type { StoredObject } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession } from './access.ts';
import { defaultRemediationSummary, remediationSummaryOf } from './derive.ts';
import { blobPrefix, CONTENT_TYPES } from './files.ts';
import { clientIdOut } from './present.ts';
import { filesOf, type SessionRef, writeRemediationAtVersion } from './queries.ts';

/**
 * Remediation tracking (SPEC "Remediation status changes", PATCH /api/remediation-update).
 * The truth is the stored session file: its `.remediation[]` (open items) and
 * `.remediation_resolved[]` (resolved items). An update rewrites that file as a new blob
 * object and points the session row at it under optimistic locking, so downloads see the
 * update (D7) and the row's `metadata.remediation_summary` always matches the file.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStatus = (v: unknown): v is RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v);

export interface RemediationChange {
  title: string;
  status: RemediationStatus;
  /** Replaces the matched entries' `note`; a note alone is written but is not a status change. */
  note?: string;
}

export class RemediationInputError extends DomainError {
  constructor(message: string) {
    super('invalid.remediation_item', message);
    this.name = 'RemediationInputError';
  }
}

/** The stored file is not a JSON object: nothing a request can fix. */
export class RemediationDocumentError extends DomainError {
  constructor(message: string) {
    super('internal.session_file', message);
    this.name = 'RemediationDocumentError';
  }
}

const storedFileProblem = (message: string) => new DomainError('internal.session_file', message);

/**
 * Check the statuses of a request's items (the schema only says "string" so that this
 * message can name the bad value and the item).
 */
export function parseRemediationItems(
  items: readonly { title: string; status: string; note?: string | undefined }[],
): RemediationChange[] {
  return items.map((item, i) => {
    if (!isStatus(item.status)) {
      throw new RemediationInputError(
        `Invalid status ${JSON.stringify(item.status)} for items[${i}] (${JSON.stringify(item.title)}): must be one of ${REMEDIATION_STATUSES.join(', ')}`,
      );
    }
    return item.note === undefined
      ? { title: item.title, status: item.status }
      : { title: item.title, status: item.status, note: item.note };
  });
}

export interface ApplyResult {
  /** The updated document; the input is never mutated (untouched parts are shared). */
  doc: Obj;
  /** Entries whose status changed, moves between the two arrays included. */
  changed: number;
  /** Entries whose note changed. */
  notesUpdated: number;
  /** Requested titles (each once, in request order) that match no entry. */
  unmatched: string[];
  /** True when `doc` differs from the input (a status or a note changed). */
  modified: boolean;
  summary: RemediationSummary;
}

/**
 * Apply status changes to a session file, in request order (a title listed twice ends with
 * its last status). Every entry whose `title` equals an item's title is updated, in either
 * array. An entry's current status is what remediation_summary counts: `resolved` for an
 * entry of `.remediation_resolved[]`, else its `status` (`new` when missing or unknown).
 *
 * - `resolved` moves an open entry to the end of `.remediation_resolved[]`;
 * - any other status moves a resolved entry back to the end of `.remediation[]`;
 * - otherwise the entry is updated where it is.
 *
 * A change sets `status` and `status_changed` (now, ISO 8601) and leaves every other field
 * of the entry as it was; the same status again changes nothing. The arrays are created
 * only when an entry moves into a missing one.
 */
export function applyRemediationUpdates(doc: unknown, items: readonly RemediationChange[], now: Date): ApplyResult {
  if (!isObj(doc)) throw new RemediationDocumentError('The stored session file is not a JSON object');
  const changedAt = now.toISOString();
  const open: unknown[] = Array.isArray(doc['remediation']) ? [...(doc['remediation'] as unknown[])] : [];
  const resolved: unknown[] = Array.isArray(doc['remediation_resolved'])
    ? [...(doc['remediation_resolved'] as unknown[])]
    : [];
  let touchedOpen = false;
  let touchedResolved = false;
  let changed = 0;
  let notesUpdated = 0;
  const unmatched: string[] = [];

  for (const item of items) {
    // Collect first: moving an entry must not make the scan skip or revisit one.
    const matches: { entry: Obj; inResolved: boolean }[] = [];
    for (const e of open) if (isObj(e) && e['title'] === item.title) matches.push({ entry: e, inResolved: false });
    for (const e of resolved) if (isObj(e) && e['title'] === item.title) matches.push({ entry: e, inResolved: true });
    if (matches.length === 0) {
      if (!unmatched.includes(item.title)) unmatched.push(item.title);
      continue;
    }
    const toResolved = item.status === 'resolved';
    for (const { entry, inResolved } of matches) {
      const current: RemediationStatus = inResolved ? 'resolved' : isStatus(entry['status']) ? entry['status'] : 'new';
      const statusChange = current !== item.status || inResolved !== toResolved;
      const noteChange = item.note !== undefined && entry['note'] !== item.note;
      if (!statusChange && !noteChange) continue;
      const next: Obj = { ...entry };
      if (statusChange) {
        next['status'] = item.status;
        next['status_changed'] = changedAt;
        changed++;
      }
      if (noteChange) {
        next['note'] = item.note;
        notesUpdated++;
      }
      const from = inResolved ? resolved : open;
      const index = from.indexOf(entry);
      if (inResolved !== toResolved) {
        // Only a status change can get here: the same status means the same array.
        from.splice(index, 1);
        (toResolved ? resolved : open).push(next);
        touchedOpen = touchedResolved = true;
      } else {
        from[index] = next;
        if (inResolved) touchedResolved = true;
        else touchedOpen = true;
      }
    }
  }

  const out: Obj = { ...doc };
  if (touchedOpen) out['remediation'] = open;
  if (touchedResolved) out['remediation_resolved'] = resolved;
  return {
    doc: out,
    changed,
    notesUpdated,
    unmatched,
    modified: changed > 0 || notesUpdated > 0,
    summary: remediationSummaryOf(out['remediation'], out['remediation_resolved']),
  };
}

export interface RemediationOutcome {
  changed: number;
  unmatched: string[];
  summary: RemediationSummary;
}

/**
 * SPEC: "optimistic locking on writes with at most 3 retries; exhausted retries return
 * 409". We read that as one first attempt plus up to 3 retries: 4 attempts in total.
 */
export const REMEDIATION_MAX_RETRIES = 3;
export const REMEDIATION_CONFLICT_MESSAGE = `Concurrent updates to this session: gave up after ${REMEDIATION_MAX_RETRIES} retries, try again`;

async function readAll(ctx: AppContext, key: string): Promise<Buffer> {
  const { stream } = await ctx.blobs.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The blob key the row references for the session file, or undefined when there is no such row. */
async function currentJsonKey(ctx: AppContext, ref: SessionRef): Promise<string | undefined> {
  const files = await filesOf(ctx.db, ref);
  return files?.['session_results.json']?.key;
}

/**
 * Update the remediation status of a session's items (the route has checked the
 * credential and its `remediation:update` permission). Each attempt: read the row (version
 * and file key), read and parse the file, apply, write the result as a new blob object,
 * then `UPDATE … WHERE version = <read version>` together with the audit event. When
 * another writer got there first (0 rows), the new object is deleted and the attempt
 * starts again from the read. After the commit the previous object is deleted.
 */
export async function updateRemediation(
  ctx: AppContext,
  principal: UserPrincipal,
  target: { sessionId: string; clientId: string | undefined },
  items: readonly RemediationChange[],
): Promise<RemediationOutcome> {
  const actor = actorOf(principal);
  const { sessionId } = target;
  let clientId = target.clientId;
  for (let attempt = 0; attempt <= REMEDIATION_MAX_RETRIES; attempt++) {
    // A random pause (under 50, 100, 200 ms) so that writers that just collided do not
    // collide again in step; without it most of a burst of concurrent updates ends in 409.
    if (attempt > 0) await sleep(Math.random() * 25 * 2 ** attempt);

    // 404 (missing, or another client's), 409 (ambiguous); then the same session on every retry.
    const row = await resolveSession(ctx, scopeOf(principal), sessionId, clientId);
    clientId = row.client_id;
    const ref: SessionRef = { clientId, sessionId };
    const stored = row.files['session_results.json'];
    if (stored === undefined) throw storedFileProblem('The session has no stored session_results.json');

    let raw: Buffer;
    try {
      raw = await readAll(ctx, stored.key);
    } catch (err) {
      if (!(err instanceof BlobNotFoundError)) throw err;
      // Normal when a concurrent update committed and deleted it since our read: try again.
      // Still referenced means the store lost it.
      if ((await currentJsonKey(ctx, ref)) === stored.key)
        throw storedFileProblem('The stored session file is missing');
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw.toString('utf8').replace(/^\uFEFF/, ''));
    } catch {
      throw storedFileProblem('The stored session file is not valid JSON');
    }
    const now = ctx.now();
    const result = applyRemediationUpdates(parsed, items, now);
    if (!result.modified) {
      // Nothing to write, nothing to audit: answer with what is stored.
      return {
        changed: 0,
        unmatched: result.unmatched,
        summary: row.metadata.remediation_summary ?? defaultRemediationSummary(),
      };
    }

    const body = Buffer.from(JSON.stringify(result.doc, null, 2), 'utf8');
    const put = await ctx.blobs.put(blobPrefix(ref.clientId, now), [body]).catch((err: unknown) => {
      ctx.logger.error({ err, session_id: sessionId }, 'blob write failed');
      throw new DomainError('internal.storage', 'Storage failure: the update was not stored');
    });
    const file: StoredObject = { ...put, content_type: stored.content_type || CONTENT_TYPES['session_results.json'] };
    let event: AuditEvent | null;
    try {
      event = await ctx.db.transaction().execute(async (trx) => {
        const applied = await writeRemediationAtVersion(trx, {
          ref,
          version: row.version,
          file,
          summary: result.summary,
          now,
        });
        if (!applied) return null;
        return recordAuditEvent(trx, {
          event_type: 'remediation_updated',
          actor,
          session_id: sessionId,
          client_id: clientIdOut(row.client_id),
          data: {
            session_id: sessionId,
            changed: result.changed,
            items: items.map(({ title, status }) => ({ title, status })),
            remediation_summary: result.summary,
          },
        });
      });
    } catch (err) {
      // The outcome of a failed COMMIT is unknown: delete the new object only when the row
      // certainly does not reference it; otherwise it is left for the orphan sweep.
      const referenced = await currentJsonKey(ctx, ref).catch(() => put.key);
      if (referenced !== put.key) await ctx.blobs.delete([put.key]).catch(() => undefined);
      throw err;
    }
    if (event === null) {
      // Lost the race: this attempt leaves no trace (or, should the delete fail, an orphan for the sweep).
      await ctx.blobs
        .delete([put.key])
        .catch((err: unknown) => ctx.logger.warn({ err }, 'could not delete the file of a lost update'));
      continue;
    }
    await ctx.blobs
      .delete([stored.key])
      .catch((err: unknown) => ctx.logger.warn({ err }, 'could not delete the replaced session file'));
    ctx.events.publish(event);
    return { changed: result.changed, unmatched: result.unmatched, summary: result.summary };
  }
  throw new DomainError('conflict.remediation_changed', REMEDIATION_CONFLICT_MESSAGE);
}
