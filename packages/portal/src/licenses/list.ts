import type { License } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import type { Kysely } from 'kysely';
import { presentLicense } from './present.ts';
import { selectLicenses } from './queries.ts';

/** The admin list, newest first. The status is derived from the clock, so its filter runs after the read. */
export async function listLicenses(
  db: Kysely<Database>,
  filter: { client_id?: string | undefined; status?: License['status'] | undefined },
  now: Date,
): Promise<License[]> {
  const licenses = (await selectLicenses(db, filter.client_id)).map((row) => presentLicense(row, now));
  return filter.status ? licenses.filter((l) => l.status === filter.status) : licenses;
}
