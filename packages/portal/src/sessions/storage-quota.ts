import fs from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Database } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { clientStoredBytes, lockStorageTotal, totalStoredBytes } from './queries.ts';

const MB = 1024 * 1024;
/** The default floor (SVC_MIN_FREE_DISK_MB unset): this share of the disk, at most DEFAULT_FLOOR_CAP_MB. */
const DEFAULT_FLOOR_SHARE = 0.05;
const DEFAULT_FLOOR_CAP_MB = 1024;

type Limits = Pick<AppContext['config'], 'storageLimitMb' | 'clientStorageLimitMb' | 'uploads' | 'dataDir'>;

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
const mb = (bytes: number) => Number((bytes / MB).toFixed(1));
const sizeOf = (bytes: number) => (bytes < MB ? `${bytes} bytes` : `${mb(bytes)} MB`);
const diskFull = (floorBytes: number, uploadBytes: number) =>
  new DomainError(
    'insufficient_storage.disk',
    `The portal's disk is nearly full: this upload (up to ${sizeOf(uploadBytes)}) and those in progress would leave less than ${mb(floorBytes)} MB free (SVC_MIN_FREE_DISK_MB): the upload was not stored`,
    { extra: { limit: 'SVC_MIN_FREE_DISK_MB' } },
  );

/** The free space the disk keeps: SVC_MIN_FREE_DISK_MB, else 5 % of the disk and at most 1,024 MB. */
function diskFloorBytes(minFreeDiskMb: number | null, diskBytes: number): number {
  if (minFreeDiskMb !== null) return minFreeDiskMb * MB;
  return Math.min(DEFAULT_FLOOR_CAP_MB * MB, Math.floor(diskBytes * DEFAULT_FLOOR_SHARE));
}

/** Room an upload in flight holds on the disk: what it may still write, until its answer is out. */
export interface DiskReservation {
  /** Bytes it may write at most (its declared length, else the upload limit). */
  readonly bytes: number;
  /** Bytes handed to the blob store so far: from then on statfs sees them. */
  written: number;
  release(): void;
}

/** The reservations of each data directory's uploads in flight, in this process. */
const inFlight = new Map<string, Set<DiskReservation>>();

const stillToWrite = (set: Set<DiskReservation> | undefined) => {
  let sum = 0;
  for (const r of set ?? []) sum += Math.max(0, r.bytes - r.written);
  return sum;
};

/**
 * Before a body is read: refuse at once when the client or the portal is already full, or
 * the disk would be, instead of taking the body first. The disk check reserves `bytes` for
 * this upload against free space, beside what the uploads already in flight may still write,
 * so two uploads cannot together take the disk below its floor (in this process; replicas on
 * one disk each count their own). The storage limits are not a guarantee here (nothing is
 * locked): `enforceStorageLimits` at commit is. Returns the reservation, released by the caller
 * once the upload is answered.
 */
export async function refuseWhenFull(
  ctx: AppContext,
  clientId: string | null,
  bytes: number,
): Promise<DiskReservation> {
  const limits: Limits = ctx.config;
  const reservation = await reserveDisk(limits, bytes);
  try {
    if (clientId !== null && limits.clientStorageLimitMb !== null) {
      if ((await clientStoredBytes(ctx.db, clientId)) >= limits.clientStorageLimitMb * MB)
        throw clientFull(limits.clientStorageLimitMb);
    }
    if (limits.storageLimitMb !== null && (await totalStoredBytes(ctx.db)) >= limits.storageLimitMb * MB)
      throw portalFull(limits.storageLimitMb);
  } catch (err) {
    reservation.release();
    throw err;
  }
  return reservation;
}

async function reserveDisk(limits: Limits, bytes: number): Promise<DiskReservation> {
  const dir = limits.dataDir;
  const stats = limits.uploads.minFreeDiskMb === 0 ? null : await fs.statfs(dir).catch(() => null);
  // Checked and added in one synchronous step after the await: no other upload of this process
  // can pass between the two.
  if (stats !== null) {
    const floor = diskFloorBytes(limits.uploads.minFreeDiskMb, stats.blocks * stats.bsize);
    if (stats.bavail * stats.bsize - stillToWrite(inFlight.get(dir)) - bytes < floor) throw diskFull(floor, bytes);
  }
  const set = inFlight.get(dir) ?? new Set<DiskReservation>();
  inFlight.set(dir, set);
  const reservation: DiskReservation = {
    bytes,
    written: 0,
    release() {
      set.delete(reservation);
      if (set.size === 0 && inFlight.get(dir) === set) inFlight.delete(dir);
    },
  };
  set.add(reservation);
  return reservation;
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
