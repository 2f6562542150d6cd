import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { BlobStore } from '../blobs/store.ts';
import type { Database } from '../db/schema.ts';
import { filesOfAllSessions } from './queries.ts';

/** At start: remove unfinished uploads and files no session row references. */
export async function sweepOrphanedFiles(db: Kysely<Database>, blobs: BlobStore, logger: Logger): Promise<void> {
  const rows = await filesOfAllSessions(db);
  const referenced = new Set(rows.flatMap((r) => Object.values(r.files).map((f) => f.key)));
  const { removed } = await blobs.sweep((key) => referenced.has(key));
  if (removed > 0) logger.info({ removed }, 'removed orphaned session files');
}
