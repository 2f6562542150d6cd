import { tierAllows, type Tier } from '@svc/protocol';
import type { AppContext } from '../context.ts';
import {
  ensureTargetRow,
  insertHistory,
  lockTarget,
  setLastSession,
  targetRow,
  writeRecords,
} from '../records/queries.ts';
import { seedFromDocument } from '../records/seed.ts';
import { dueDaysOf } from '../records/settings.ts';
import { readSessionDocument } from './open-file.ts';
import { newestSessionOfRecordTarget } from './record-target-queries.ts';

/**
 * Today's triage read into records the first time a target is used after the upgrade
 * (docs/findings-of-record.md#migration): from its newest stored session (records/seed.ts). The
 * file is read outside any transaction; the records are written under the target's lock only
 * if no one seeded it meanwhile. A target without stored sessions gets no row here: its first
 * upload's merge makes it (records-merge.ts), so a read or a refused upload leaves none behind.
 */
export async function ensureSeeded(ctx: AppContext, clientId: string, target: string): Promise<void> {
  const t = { clientId, target };
  if ((await targetRow(ctx.db, t)) !== undefined) return;
  const newest = await newestSessionOfRecordTarget(ctx.db, clientId, target);
  if (newest === undefined) return;
  const doc = (await readSessionDocument(ctx, newest).catch(() => null))?.doc;
  const now = ctx.now();
  await ctx.db.transaction().execute(async (trx) => {
    await lockTarget(trx, t);
    if ((await targetRow(trx, t)) !== undefined) return;
    await ensureTargetRow(trx, t, now);
    if (doc === null || doc === undefined) return;
    const { dueDays } = await dueDaysOf(trx, clientId);
    const tier = newest.key_tier as Tier | null;
    const seeded = seedFromDocument(clientId, target, doc, {
      sessionId: newest.session_id,
      scannedAt: newest.scanned_at,
      now,
      uploader: {
        actor: newest.license_id === null ? 'legacy-key' : `license:${newest.license_id}`,
        // The legacy key holds every permission; a deleted key is not trusted with one.
        mayDecide: newest.license_id === null || (tier !== null && tierAllows(tier, 'remediation:update')),
      },
      dueDays,
    });
    await writeRecords(trx, seeded.rows);
    await insertHistory(trx, t, seeded.history);
    await setLastSession(trx, t, {
      sessionId: newest.session_id,
      scannedAt: newest.scanned_at,
      coverage: null,
      now,
    });
  });
}
