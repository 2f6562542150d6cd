import fs from 'node:fs/promises';
import path from 'node:path';
import { replaceFile } from '@svc/protocol/node';

/**
 * `npm run backup` records its last success here, in the portal's data directory, and the portal
 * exports its time as svc_backup_last_success_timestamp_seconds (metrics/operation-gauges.ts): a
 * file rather than a database row, so the record needs no migration and a restore never brings
 * back an older one.
 */
export const STATUS_FILE = 'backup-status.json';

export interface BackupStatus {
  /** ISO 8601: when the archive was linked into place. */
  completed_at: string;
  archive: string;
  bytes: number;
}

/**
 * Replaced whole: a scrape never reads half a file. Not durably: a record lost to a power cut
 * reads as no backup (or a damaged file, 0 as well), so the age alert fires and says to look.
 */
export async function recordBackup(dataDir: string, status: BackupStatus): Promise<void> {
  await replaceFile(path.join(dataDir, STATUS_FILE), `${JSON.stringify(status, null, 2)}\n`, {
    durable: false,
    mode: 0o600,
  });
}

/** Unix seconds of the last recorded backup; null when none is recorded; a damaged file throws. */
export async function lastBackupSeconds(dataDir: string): Promise<number | null> {
  const file = path.join(dataDir, STATUS_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const at = Date.parse((JSON.parse(text) as Partial<BackupStatus>).completed_at ?? '');
  if (Number.isNaN(at)) throw new Error(`${file} has no valid completed_at`);
  return at / 1000;
}
