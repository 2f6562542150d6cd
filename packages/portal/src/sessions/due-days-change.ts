import type { AuditEvent, DueDays } from '@svc/protocol';
import type { Kysely } from 'kysely';
import { recordAuditEvent } from '../audit/record.ts';
import type { Database } from '../db/schema.ts';
import { setDueDays } from '../records/settings.ts';
import { applyTriageChanges } from './triage-counts-queries.ts';

/**
 * PUT /api/remediation-settings: stores a client's due days, dates its records again, moves the
 * findings of its sessions between their due counts (migration 0043), and audits the change, in
 * one transaction.
 */
export async function changeDueDays(
  db: Kysely<Database>,
  c: { clientId: string; dueDays: DueDays; by: string; now: Date },
): Promise<AuditEvent> {
  return db.transaction().execute(async (trx) => {
    const redated = await setDueDays(trx, c);
    // A due date is no part of a score: no session is scored again.
    for (const [target, changes] of redated) await applyTriageChanges(trx, { clientId: c.clientId, target }, changes);
    return recordAuditEvent(trx, {
      event_type: 'remediation_settings_changed',
      actor: c.by,
      client_id: c.clientId === '' ? null : c.clientId,
      data: { client_id: c.clientId === '' ? null : c.clientId, due_days: c.dueDays, changed_by: c.by },
    });
  });
}
