import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AuditEvent,
  dualScoreOf,
  exceptionSummaryOf,
  type ExceptionSummary,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type RemediationSummary,
} from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, scopeOf, type UserPrincipal } from '../auth/principal.ts';
import { BlobNotFoundError } from '../blobs/store.ts';
import type { AppContext } from '../context.ts';
import type { StoredObject } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession } from './access.ts';
import { defaultRemediationSummary, remediationSummaryOf } from './derive.ts';
import { blobPrefix, CONTENT_TYPES } from './files.ts';
import { indexRemediatedFile } from './findings.ts';
import { fingerprintOfFinding } from '@svc/protocol/node';
import { clientIdOut } from './present.ts';
import { filesOf, type SessionRef, writeRemediationAtVersion } from './queries.ts';
import type { ExceptionChange, RemediationChange, RemediationOutcome } from './results.ts';
import { openFindingsOf } from './scan-facts.ts';
import { storageFailure } from './storage.ts';

/**
 * Remediation tracking (docs/api.md#sessions, PATCH /api/remediation-update).
 * The truth is the stored session file: its `.remediation[]` (open items) and
 * `.remediation_resolved[]` (resolved items). An update rewrites that file as a new blob
 * object and points the session row at it under optimistic locking, so downloads see the
 * update (docs/api.md#sessions) and the row's `metadata.remediation_summary` always matches the file.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStatus = (v: unknown): v is RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v);

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

const FINGERPRINT = /^[0-9a-f]{64}$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A real calendar day written YYYY-MM-DD. */
function isDay(v: string): boolean {
  const m = DAY.exec(v);
  if (!m) return false;
  const d = new Date(`${v}T00:00:00.000Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

interface RequestItem {
  title?: string | undefined;
  fingerprint?: string | undefined;
  status?: string | undefined;
  note?: string | undefined;
  exception?: { reason: string; expiry: string } | null | undefined;
}

/**
 * Check a request's items (the schema leaves these rules to this function so that each
 * message can name the bad value and the item): exactly one of title and fingerprint, a
 * known status, something to change, and an exception only by fingerprint, with a reason
 * and an expiry that is a real day not before `today` (YYYY-MM-DD, UTC).
 */
export function parseRemediationItems(items: readonly RequestItem[], today: string): RemediationChange[] {
  return items.map((item, i) => {
    const bad = (why: string) => new RemediationInputError(`Invalid items[${i}]: ${why}`);
    if ((item.title === undefined) === (item.fingerprint === undefined))
      throw bad('give exactly one of title and fingerprint');
    if (item.fingerprint !== undefined && !FINGERPRINT.test(item.fingerprint))
      throw bad('fingerprint must be 64 lower-case hex characters');
    if (item.status === undefined && item.note === undefined && item.exception === undefined)
      throw bad('nothing to change: give status, note or exception');
    const name = JSON.stringify(item.title ?? item.fingerprint);
    if (item.status !== undefined && !isStatus(item.status)) {
      throw new RemediationInputError(
        `Invalid status ${JSON.stringify(item.status)} for items[${i}] (${name}): must be one of ${REMEDIATION_STATUSES.join(', ')}`,
      );
    }
    const out: RemediationChange =
      item.title !== undefined ? { title: item.title } : { fingerprint: item.fingerprint as string };
    if (item.status !== undefined) out.status = item.status as RemediationStatus;
    if (item.note !== undefined) out.note = item.note;
    if (item.exception !== undefined) {
      if (item.title !== undefined) throw bad('an exception is set per finding: use fingerprint, not title');
      if (item.exception !== null) {
        const reason = item.exception.reason.trim();
        if (reason === '') throw bad('the exception reason must not be blank');
        const { expiry } = item.exception;
        if (!isDay(expiry))
          throw new RemediationInputError(
            `Invalid exception expiry ${JSON.stringify(expiry)} for items[${i}]: must be a date YYYY-MM-DD`,
          );
        if (expiry < today)
          throw new RemediationInputError(
            `Invalid exception expiry ${expiry} for items[${i}]: must be today (${today}) or later`,
          );
        out.exception = { reason, expiry };
      } else out.exception = null;
    }
    return out;
  });
}

/**
 * The fingerprint of a remediation entry: its own, else its finding's (by finding_id, else
 * the only finding of its title on its host), stored or computed from rule, host, port and
 * protocol. Undefined when no finding identifies it.
 */
function fingerprintResolver(doc: Obj): (entry: Obj) => string | undefined {
  const findings = (Array.isArray(doc['findings']) ? doc['findings'] : []).filter(isObj);
  const ofFinding = fingerprintOfFinding;
  return (entry) => {
    if (typeof entry['fingerprint'] === 'string') return entry['fingerprint'];
    if (typeof entry['finding_id'] === 'string') {
      const f = findings.find((x) => x['id'] === entry['finding_id']);
      return f === undefined ? undefined : ofFinding(f);
    }
    const same = findings.filter(
      (f) => f['title'] === entry['title'] && (f['host'] ?? f['ip']) === entry['host'] && entry['host'] !== undefined,
    );
    return same.length === 1 ? ofFinding(same[0] as Obj) : undefined;
  };
}

/** What an applied exception change did, for the audit event. */
export interface ExceptionAudit {
  fingerprint: string;
  action: 'created' | 'changed' | 'withdrawn';
  reason: string | null;
  expiry: string | null;
}

export interface ApplyResult {
  /** The updated document; the input is never mutated (untouched parts are shared). */
  doc: Obj;
  /** Entries whose status changed, moves between the two arrays included. */
  changed: number;
  /** Entries whose note changed. */
  notesUpdated: number;
  /** Requested titles and fingerprints (each once, in request order) that match no entry. */
  unmatched: string[];
  /** Per request item: how many entries it matched. */
  matched: number[];
  exceptions: ExceptionAudit[];
  /** True when `doc` differs from the input (a status, a note or an exception changed). */
  modified: boolean;
  summary: RemediationSummary;
  /** Recomputed when an exception changed (as the upload derives it), else undefined. */
  exceptionSummary: ExceptionSummary | undefined;
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
export function applyRemediationUpdates(
  doc: unknown,
  items: readonly RemediationChange[],
  now: Date,
  approver = '',
): ApplyResult {
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
  const matched: number[] = [];
  const exceptions: ExceptionAudit[] = [];
  const fingerprintOf = fingerprintResolver(doc);
  const fingerprints = new Map<unknown, string | undefined>();
  const fpOf = (e: Obj) => {
    if (!fingerprints.has(e)) fingerprints.set(e, fingerprintOf(e));
    return fingerprints.get(e);
  };

  for (const item of items) {
    const key = item.fingerprint ?? item.title ?? '';
    const hit = (e: unknown): e is Obj =>
      isObj(e) && (item.fingerprint !== undefined ? fpOf(e) === item.fingerprint : e['title'] === item.title);
    // Collect first: moving an entry must not make the scan skip or revisit one.
    const matches: { entry: Obj; inResolved: boolean }[] = [];
    for (const e of open) if (hit(e)) matches.push({ entry: e, inResolved: false });
    for (const e of resolved) if (hit(e)) matches.push({ entry: e, inResolved: true });
    matched.push(matches.length);
    if (matches.length === 0) {
      if (!unmatched.includes(key)) unmatched.push(key);
      continue;
    }
    for (const { entry, inResolved } of matches) {
      const current: RemediationStatus = inResolved ? 'resolved' : isStatus(entry['status']) ? entry['status'] : 'new';
      const target = item.status ?? current;
      const toResolved = target === 'resolved';
      if (item.exception !== undefined && toResolved)
        throw new RemediationInputError(
          `Cannot set an exception on the resolved finding ${key}: exceptions apply to open findings`,
        );
      const statusChange = current !== target || inResolved !== toResolved;
      const noteChange = item.note !== undefined && entry['note'] !== item.note;
      const exception = item.exception === undefined ? null : exceptionUpdate(entry, item.exception, now, approver);
      if (!statusChange && !noteChange && exception === null) continue;
      const next: Obj = { ...entry };
      if (exception !== null) {
        Object.assign(next, exception.fields);
        exceptions.push({ fingerprint: key, ...exception.audit });
        // A fingerprint found through the finding is written down, so the next match is direct.
        if (typeof next['fingerprint'] !== 'string') next['fingerprint'] = key;
      }
      if (statusChange) {
        next['status'] = target;
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
  if (exceptions.length > 0) out['summary'] = rescored(out, now);
  return {
    doc: out,
    changed,
    notesUpdated,
    unmatched,
    matched,
    exceptions,
    modified: changed > 0 || notesUpdated > 0 || exceptions.length > 0,
    summary: remediationSummaryOf(out['remediation'], out['remediation_resolved']),
    exceptionSummary: exceptions.length > 0 ? exceptionSummaryOf(out) : undefined,
  };
}

const EXCEPTION_KEYS = ['exception_reason', 'exception_approver', 'exception_approved_at', 'exception_expiry'] as const;

/**
 * The fields an exception request writes on an entry, or null when it changes nothing
 * (withdrawing where there is none). Withdrawing clears the five fields to null and
 * exception_expired to false.
 */
function exceptionUpdate(
  entry: Obj,
  change: ExceptionChange | null,
  now: Date,
  approver: string,
): { fields: Obj; audit: Omit<ExceptionAudit, 'fingerprint'> } | null {
  const had = entry['exception_status'] === 'accepted' || entry['exception_status'] === 'expired';
  if (change === null) {
    if (!had && EXCEPTION_KEYS.every((k) => entry[k] === undefined || entry[k] === null)) return null;
    const fields: Obj = { exception_status: null, exception_expired: false };
    for (const k of EXCEPTION_KEYS) fields[k] = null;
    return { fields, audit: { action: 'withdrawn', reason: null, expiry: null } };
  }
  return {
    fields: {
      exception_status: 'accepted',
      exception_reason: change.reason,
      exception_approver: approver,
      exception_approved_at: now.toISOString(),
      exception_expiry: change.expiry,
      exception_expired: false,
    },
    audit: { action: had ? 'changed' : 'created', reason: change.reason, expiry: change.expiry },
  };
}

/**
 * The file's summary with the dual scoring recomputed from the open entries, the way the
 * scanner derives it at scan time (protocol score.ts); the other summary fields stay.
 */
function rescored(doc: Obj, now: Date): Obj {
  const summary = isObj(doc['summary']) ? doc['summary'] : {};
  const entries = (Array.isArray(doc['remediation']) ? doc['remediation'] : []).filter(isObj);
  const scores = dualScoreOf(entries, now.toISOString().slice(0, 10));
  return { ...summary, ...scores };
}

/**
 * "optimistic locking on writes with at most 3 retries; exhausted retries return
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
    const result = applyRemediationUpdates(parsed, items, now, actor);
    if (!result.modified) {
      // Nothing to write, nothing to audit: answer with what is stored.
      return {
        changed: 0,
        unmatched: result.unmatched,
        matched: result.matched,
        summary: row.metadata.remediation_summary ?? defaultRemediationSummary(),
      };
    }

    const body = Buffer.from(JSON.stringify(result.doc, null, 2), 'utf8');
    const put = await ctx.blobs.put(blobPrefix(ref.clientId, now), [body]).catch((err: unknown) => {
      throw storageFailure(err, 'Storage failure: the update was not stored', ctx.logger, { session_id: sessionId });
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
          exceptionSummary: result.exceptionSummary,
          openFindings: openFindingsOf(result.doc),
          now,
        });
        if (!applied) return null;
        await indexRemediatedFile(trx, ref, {
          beforeKey: stored.key,
          before: parsed,
          afterKey: put.key,
          after: result.doc,
        });
        return recordAuditEvent(trx, {
          event_type: 'remediation_updated',
          actor,
          session_id: sessionId,
          client_id: clientIdOut(row.client_id),
          data: {
            session_id: sessionId,
            changed: result.changed,
            items: items.map(({ title, fingerprint, status }, i) => ({
              ...(fingerprint === undefined ? { title } : { fingerprint }),
              ...(status === undefined ? {} : { status }),
              matched: result.matched[i],
            })),
            ...(result.exceptions.length > 0 ? { exceptions: result.exceptions } : {}),
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
    return { changed: result.changed, unmatched: result.unmatched, matched: result.matched, summary: result.summary };
  }
  throw new DomainError('conflict.remediation_changed', REMEDIATION_CONFLICT_MESSAGE);
}
