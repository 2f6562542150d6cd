import type { AuditEventType, LICENSE_ACTIONS } from '@svc/protocol';
import { recordAuditEvent } from '../audit/record.ts';
import { DomainError } from '../domain/errors.ts';
import { announceLicenseChange, type LicenseChangeBy, type LicenseChangeDeps } from './changes.ts';
import type { LicenseRow } from './present.ts';
import { deleteLicenseRow, lockLicense, updateLicense } from './queries.ts';

export type LicenseAction = (typeof LICENSE_ACTIONS)[number];

const EVENT: Record<LicenseAction, AuditEventType> = {
  revoke: 'license_revoked',
  deactivate: 'license_deactivated',
  activate: 'license_activated',
};

const licenseNotFound = () => new DomainError('not_found.license', 'License not found');

/**
 * docs/api.md#licenses: revoke (one-way), deactivate (active to inactive) or activate (inactive to active). A
 * revoked key never changes again; an action that finds the key already in that state is a conflict.
 */
export async function changeLicenseState(
  deps: LicenseChangeDeps,
  id: string,
  action: LicenseAction,
  { actor, now }: LicenseChangeBy,
): Promise<LicenseRow> {
  const { row, event } = await deps.db.transaction().execute(async (trx) => {
    const current = await lockLicense(trx, id);
    if (!current) throw licenseNotFound();
    if (current.revoked_at !== null) throw new DomainError('conflict.license_revoked', 'License key has been revoked');
    if (action === 'deactivate' && !current.is_active)
      throw new DomainError('conflict.license_inactive', 'License key is already inactive');
    if (action === 'activate' && current.is_active)
      throw new DomainError('conflict.license_active', 'License key is already active');
    const row = await updateLicense(
      trx,
      id,
      action === 'revoke'
        ? { revoked_at: now, updated_at: now }
        : { is_active: action === 'activate', updated_at: now },
    );
    const event = await recordAuditEvent(trx, {
      event_type: EVENT[action],
      actor,
      client_id: row.client_id,
      data: { license_id: row.id, key_prefix: row.key_prefix, tier: row.tier },
    });
    return { row, event };
  });
  announceLicenseChange(deps, event);
  return row;
}

/** docs/api.md#licenses: only a revoked key may be deleted. */
export async function deleteLicense(deps: LicenseChangeDeps, id: string, actor: string): Promise<void> {
  const event = await deps.db.transaction().execute(async (trx) => {
    const current = await lockLicense(trx, id);
    if (!current) throw licenseNotFound();
    if (current.revoked_at === null)
      throw new DomainError('conflict.license_not_revoked', 'Only a revoked license key can be deleted');
    await deleteLicenseRow(trx, id);
    return recordAuditEvent(trx, {
      event_type: 'license_deleted',
      actor,
      client_id: current.client_id,
      data: { license_id: id, key_prefix: current.key_prefix, tier: current.tier },
    });
  });
  announceLicenseChange(deps, event);
}
