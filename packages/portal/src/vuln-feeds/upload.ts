import { Readable } from 'node:stream';
import { recordAuditEvent } from '../audit/record.ts';
import { actorOf, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { DomainError } from '../domain/errors.ts';
import { FEED_NAMES, type Feed } from './input.ts';
import { type ImportReport, importFeeds } from './import.ts';

/**
 * Largest feed file taken through the API, as sent (gzip or not): a KEV catalogue, a day's
 * EPSS scores, the Debian tracker's JSON or one NVD file comfortably; the whole NVD goes through `npm run feeds:import`
 * on the portal's host. The body is read whole before the import starts, so a slow import never
 * holds a request open on a half-read body.
 */
export const MAX_UPLOADED_FEED_BYTES: Record<Feed, number> = {
  nvd: 100 * 1024 ** 2,
  kev: 16 * 1024 ** 2,
  epss: 64 * 1024 ** 2,
  debian: 64 * 1024 ** 2,
};

const tooLarge = (feed: Feed) =>
  new DomainError(
    'too_large.vuln_feed',
    `${FEED_NAMES[feed]} larger than ${MAX_UPLOADED_FEED_BYTES[feed] / 1024 ** 2} MB: import it with npm run feeds:import on the portal's host`,
  );

/** The request body, whole, refused once past the feed's limit (a declared length is checked first). */
export async function readFeedBody(
  feed: Feed,
  body: AsyncIterable<Buffer> | Iterable<Buffer>,
  declared: number,
): Promise<Buffer> {
  if (Number.isFinite(declared) && declared > MAX_UPLOADED_FEED_BYTES[feed]) throw tooLarge(feed);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > MAX_UPLOADED_FEED_BYTES[feed]) throw tooLarge(feed);
    chunks.push(chunk);
  }
  if (total === 0)
    throw new DomainError('invalid.vuln_feed', `Missing body: send the ${FEED_NAMES[feed]} file (gzip allowed)`);
  return Buffer.concat(chunks);
}

/** One feed file imported by an admin through the API, audited as `vuln_feed_imported`. */
export async function importUploadedFeed(
  ctx: AppContext,
  admin: UserPrincipal,
  feed: Feed,
  bytes: Buffer,
): Promise<ImportReport> {
  const source = { label: `${feed} feed`, open: () => Readable.from([bytes]) };
  const report = await importFeeds(ctx.pool, feed === 'nvd' ? { nvd: [source] } : { [feed]: source }, ctx.now);
  const event = await recordAuditEvent(ctx.db, {
    event_type: 'vuln_feed_imported',
    actor: actorOf(admin),
    data: {
      feed,
      bytes: bytes.length,
      records: report.nvd?.read ?? report.kev?.records ?? report.epss?.records ?? report.debian?.packages ?? 0,
      index_version: report.index.version,
      index_changed: report.index.changed,
    },
  });
  ctx.events.publish(event);
  return report;
}
