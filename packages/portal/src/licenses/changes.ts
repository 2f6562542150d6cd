import type { Kysely } from 'kysely';
import type { AuditEvent } from '@svc/protocol';
import type { Database } from '../db/schema.ts';

/** What a change to the licenses needs: the database, and who hears of it after commit. */
export interface LicenseChangeDeps {
  db: Kysely<Database>;
  /** The key cache, which must not keep answering from a key as it was before the change. */
  keys: { invalidate(): void };
  events: { publish(event: AuditEvent): void };
}

/** After commit: drop cached key lookups, then let subscribers (webhooks) hear of the audited change. */
/** Who makes a change, and the one instant it is stamped and judged with. */
export interface LicenseChangeBy {
  actor: string;
  now: Date;
}

export function announceLicenseChange(deps: LicenseChangeDeps, event: AuditEvent): void {
  deps.keys.invalidate();
  deps.events.publish(event);
}
