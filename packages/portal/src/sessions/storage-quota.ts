import fs from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { clientStoredBytes, lockStorageTotal, totalStoredBytes } from './queries.ts';

const MB = 1024 * 1024;

type Limits = Pick<AppContext['config'], 'storageLimitMb' | 'clientStorageLimitMb' | 'minFreeDiskMb' | 'dataDir'>;

const clientFull = (limitMb: number) =>
  new DomainError(
    'too_large.client_storage',
    `Storage limit of this client reached: its sessions may take at most ${limitMb} MB (SVC_CLIENT_STORAGE_LIMIT_MB); delete old sessions first`,
  );
const portalFull = (limitMb: number) =>
  new DomainError(
    'insufficient_storage.portal_limit',
    `The portal's storage limit is reached (${limitMb} MB, SVC_STORAGE_LIMIT_MB): the upload was not stored`,
  );
const diskFull = (minMb: number) =>
  new DomainError(
    'insufficient_storage.disk',
    `The portal's disk is nearly full (less than ${minMb} MB free): the upload was not stored`,
  );

/**
 * Before a body is read: refuse at once when the client or the portal is already full, or
 * the disk is nearly so, instead of taking up to 25 MB first. Not a guarantee (nothing is
 * locked): `enforceStorageLimits` at commit is.
 */
export async function refuseWhenFull(ctx: AppContext, clientId: string | null): Promise<void> {
  const limits: Limits = ctx.config;
  if (limits.minFreeDiskMb > 0) {
    const stats = await fs.statfs(limits.dataDir).catch(() => null);
    if (stats !== null && stats.bavail * stats.bsize < limits.minFreeDiskMb * MB) throw diskFull(limits.minFreeDiskMb);
  }
  if (clientId !== null && limits.clientStorageLimitMb !== null) {
    if ((await clientStoredBytes(ctx.db, clientId)) >= limits.clientStorageLimitMb * MB)
      throw clientFull(limits.clientStorageLimitMb);
  }
  if (limits.storageLimitMb !== null && (await totalStoredBytes(ctx.db)) >= limits.storageLimitMb * MB)
    throw portalFull(limits.storageLimitMb);
}

/** First thing in a transaction that may add files, when the portal-wide limit is set. */
export async function lockForStorageLimit(trx: Kysely<Database>, limits: Limits): Promise<void> {
  if (limits.storageLimitMb !== null) await lockStorageTotal(trx);
}

/**
 * After the transaction wrote the row whose files grew: the counts already include them (the
 * trigger of migration 0012), and the trigger's row lock (the portal-wide lock, for the total)
 * makes concurrent writers wait, so two uploads cannot both take the last room. Throwing rolls
 * the row back; the caller then removes the files it stored.
 */
export async function enforceStorageLimits(trx: Kysely<Database>, limits: Limits, clientId: string): Promise<void> {
  if (limits.clientStorageLimitMb !== null) {
    if ((await clientStoredBytes(trx, clientId)) > limits.clientStorageLimitMb * MB)
      throw clientFull(limits.clientStorageLimitMb);
  }
  if (limits.storageLimitMb !== null && (await totalStoredBytes(trx)) > limits.storageLimitMb * MB)
    throw portalFull(limits.storageLimitMb);
}
