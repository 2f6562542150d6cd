import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

/** What the operations gauges read when scraped. */
export interface OperationSources {
  /** Seconds since the oldest webhook delivery still in flight was created; 0 when none is. */
  oldestDeliveryAgeSeconds: () => Promise<number>;
  /**
   * When the last `npm run backup` finished (Unix seconds), from its status file beside the data
   * directory (operations/backup/status.ts); null: no backup recorded there.
   */
  lastBackupSeconds: () => Promise<number | null>;
  /** SVC_BACKUP_MAX_AGE_HOURS in seconds. */
  backupMaxAgeSeconds: number;
}

/**
 * Gauges an operator alerts on that are read from the database or the data directory when
 * scraped: a stuck webhook delivery, and the age of the last backup (only when `watchBackups`:
 * SVC_BACKUP_MAX_AGE_HOURS=0 leaves both backup gauges out). A source that cannot answer is
 * logged and its gauge reads 0 on that scrape, never a stale number, and the rest still goes
 * out: an unreadable backup status then reads as no backup (the backup alert fires).
 */
export function operationGauges(
  registers: Registry[],
  sources: () => OperationSources | null,
  logger: Logger,
  watchBackups: boolean,
): void {
  new Gauge({
    name: 'svc_webhook_oldest_pending_delivery_age_seconds',
    help: 'Age of the oldest webhook delivery still in flight (pending, with a lease), 0 when none is; the same on every replica',
    registers,
    async collect() {
      const s = sources();
      if (s === null) return;
      try {
        this.set(await s.oldestDeliveryAgeSeconds());
      } catch (err) {
        this.set(0);
        logger.warn({ err: { message: (err as Error).message } }, 'metrics: webhook delivery age unavailable');
      }
    },
  });
  if (!watchBackups) return;
  new Gauge({
    name: 'svc_backup_last_success_timestamp_seconds',
    help: 'When the last npm run backup finished (Unix time), read from backup-status.json in SVC_DATA_DIR; 0 when none is recorded. Not exported when SVC_BACKUP_MAX_AGE_HOURS=0',
    registers,
    async collect() {
      const s = sources();
      if (s === null) return;
      try {
        this.set((await s.lastBackupSeconds()) ?? 0);
      } catch (err) {
        this.set(0);
        logger.warn({ err: { message: (err as Error).message } }, 'metrics: backup status unreadable');
      }
    },
  });
  new Gauge({
    name: 'svc_backup_max_age_seconds',
    help: 'The age past which the last backup is overdue (SVC_BACKUP_MAX_AGE_HOURS); not exported when that is 0',
    registers,
    collect() {
      const s = sources();
      if (s !== null) this.set(s.backupMaxAgeSeconds);
    },
  });
}
