import { DEFAULT_DUE_DAYS, type DueDays, SEVERITIES } from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { refreshDueDate } from './decide.ts';
import { type RecordRow, sameTriage, type TriageChange, triageKeyOf } from './model.ts';
import { dueDaysRow, lockTargetsOfClient, recordsOfClient, saveDueDays, writeRecords } from './queries.ts';

/**
 * Remediation due dates per client (docs/findings-of-record.md#due-dates): days from first seen
 * (or reopened) to due, per severity; the protocol's defaults until a client has its own.
 */

function parsed(v: unknown): DueDays | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  const out = { ...DEFAULT_DUE_DAYS };
  for (const s of SEVERITIES) {
    const n = o[s];
    if (n === null) out[s] = null;
    else if (typeof n === 'number' && Number.isInteger(n) && n > 0) out[s] = n;
  }
  return out;
}

export async function dueDaysOf(db: Kysely<Database>, clientId: string): Promise<{ dueDays: DueDays; own: boolean }> {
  const stored = parsed(await dueDaysRow(db, clientId));
  return stored === null ? { dueDays: DEFAULT_DUE_DAYS, own: false } : { dueDays: stored, own: true };
}

/**
 * Stores a client's due days and dates every record of the client again (in the caller's
 * transaction, each of the client's targets locked as an upload locks it). Returns the records
 * whose due date changed, by target, as triage changes: the sessions holding them count them again.
 */
export async function setDueDays(
  db: Kysely<Database>,
  c: { clientId: string; dueDays: DueDays; by: string; now: Date },
): Promise<Map<string, TriageChange[]>> {
  await lockTargetsOfClient(db, c.clientId);
  await saveDueDays(db, c);
  const records = await recordsOfClient(db, c.clientId);
  const redated: RecordRow[] = [];
  const byTarget = new Map<string, TriageChange[]>();
  for (const r of records) {
    const before = triageKeyOf(r);
    refreshDueDate(r, c.dueDays);
    const after = triageKeyOf(r);
    if (sameTriage(before, after)) continue;
    redated.push(r);
    const list = byTarget.get(r.target) ?? [];
    if (list.length === 0) byTarget.set(r.target, list);
    list.push({ fingerprint: r.fingerprint, before, after });
  }
  await writeRecords(db, redated);
  return byTarget;
}

/**
 * The one client a settings request is about: the one named (within the scope), or the only
 * one in scope. Another client's settings answer as if it had none to show (404).
 */
export function settingsClient(scope: readonly string[] | null, named: string | undefined): string {
  if (named !== undefined) {
    if (scope !== null && !scope.includes(named)) throw new DomainError('not_found.client', 'No such client');
    return named;
  }
  if (scope !== null && scope.length === 1) return scope[0]!;
  throw new DomainError(
    'invalid.client_id',
    'Missing client_id parameter: name the client whose settings are asked for',
  );
}
