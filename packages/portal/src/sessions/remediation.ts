import { isFingerprint, REMEDIATION_STATUSES, type RemediationStatus } from '@svc/protocol';
import { DomainError } from '../domain/errors.ts';
import type { PersonChange } from '../records/triage.ts';
import type { RemediationChange } from './results.ts';

/**
 * The items of PATCH /api/remediation-update (docs/api.md#sessions): what a request may ask of
 * a session's findings. The change itself is made on the findings of record (remediation-update.ts).
 */

const isStatus = (v: unknown): v is RemediationStatus =>
  typeof v === 'string' && (REMEDIATION_STATUSES as readonly string[]).includes(v);

export class RemediationInputError extends DomainError {
  constructor(message: string) {
    super('invalid.remediation_item', message);
    this.name = 'RemediationInputError';
  }
}

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
  disposition?: { disposition: string; reason: string } | null | undefined;
}

/**
 * Check a request's items (the schema leaves these rules to this function so that each
 * message can name the bad value and the item): exactly one of title and fingerprint, a
 * known status, something to change, an exception only by fingerprint, with a reason and an
 * expiry that is a real day not before `today` (YYYY-MM-DD, UTC), and a false-positive
 * disposition only by fingerprint, with a reason.
 */
export function parseRemediationItems(items: readonly RequestItem[], today: string): RemediationChange[] {
  return items.map((item, i) => {
    const bad = (why: string) => new RemediationInputError(`Invalid items[${i}]: ${why}`);
    if ((item.title === undefined) === (item.fingerprint === undefined))
      throw bad('give exactly one of title and fingerprint');
    if (item.fingerprint !== undefined && !isFingerprint(item.fingerprint))
      throw bad('fingerprint must be 64 lower-case hex characters');
    if (
      item.status === undefined &&
      item.note === undefined &&
      item.exception === undefined &&
      item.disposition === undefined
    )
      throw bad('nothing to change: give status, note, exception or disposition');
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
      out.exception = exceptionChange(item.exception, today, `items[${i}]`);
    }
    if (item.disposition !== undefined) {
      if (item.title !== undefined) throw bad('a disposition is set per finding: use fingerprint, not title');
      out.falsePositive = dispositionChange(item.disposition, `items[${i}]`);
    }
    return out;
  });
}

/** An exception to set (reason not blank, expiry a real day not before `today`) or withdraw (null). */
function exceptionChange(
  e: { reason: string; expiry: string } | null,
  today: string,
  where: string,
): { reason: string; expiry: string } | null {
  if (e === null) return null;
  const reason = e.reason.trim();
  if (reason === '') throw new RemediationInputError(`Invalid ${where}: the exception reason must not be blank`);
  if (!isDay(e.expiry))
    throw new RemediationInputError(
      `Invalid exception expiry ${JSON.stringify(e.expiry)} for ${where}: must be a date YYYY-MM-DD`,
    );
  if (e.expiry < today)
    throw new RemediationInputError(
      `Invalid exception expiry ${e.expiry} for ${where}: must be today (${today}) or later`,
    );
  return { reason, expiry: e.expiry };
}

/** A false positive to mark (reason not blank) or unmark (null). */
function dispositionChange(
  d: { disposition: string; reason: string } | null,
  where: string,
): { reason: string } | null {
  if (d === null) return null;
  const reason = d.reason.trim();
  if (reason === '') throw new RemediationInputError(`Invalid ${where}: a false positive needs a reason`);
  return { reason };
}

/** The change of a bulk request (POST /api/findings/bulk), by the same rules as an item's. */
export function parseBulkChange(c: Omit<RequestItem, 'title' | 'fingerprint'>, today: string): PersonChange {
  if (c.status === undefined && c.note === undefined && c.exception === undefined && c.disposition === undefined)
    throw new RemediationInputError('Invalid change: give status, note, exception or disposition');
  if (c.status !== undefined && !isStatus(c.status))
    throw new RemediationInputError(
      `Invalid status ${JSON.stringify(c.status)}: must be one of ${REMEDIATION_STATUSES.join(', ')}`,
    );
  return {
    status: c.status as RemediationStatus | undefined,
    note: c.note,
    exception: c.exception === undefined ? undefined : exceptionChange(c.exception, today, 'change'),
    falsePositive: c.disposition === undefined ? undefined : dispositionChange(c.disposition, 'change'),
  };
}
