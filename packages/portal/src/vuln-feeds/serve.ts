import type pg from 'pg';
import { DomainError } from '../domain/errors.ts';
import { currentIndexVersion, feedsHeld, indexBody } from './build-queries.ts';

export interface ServedIndex {
  version: string;
  /** The index's JSON, gzip-compressed as stored. */
  gzip: Buffer;
}

/**
 * The last index this process read (AppContext.vulnIndex): a conditional GET costs one short
 * query, a full one no copy from the database.
 */
export class ServedIndexCache {
  last: ServedIndex | null = null;
}

/**
 * The index every replica serves now (the newest stored of this portal's format); a 404 before
 * the first import, a 503 while the index of an upgraded portal is being rebuilt (upgrade.ts).
 */
export async function currentIndex(pool: pg.Pool, cache: ServedIndexCache): Promise<ServedIndex> {
  const version = await currentIndexVersion(pool);
  if (version === null && (await feedsHeld(pool)))
    throw new DomainError(
      'unavailable.vuln_index',
      'The vulnerability index is being rebuilt for this portal version; retry shortly',
      { retryAfterSeconds: 30 },
    );
  if (version === null)
    throw new DomainError(
      'not_found.vuln_index',
      'No vulnerability index: the portal has no feeds imported yet (an operator runs npm run feeds:import, docs/vuln-feeds.md)',
    );
  const hit = cache.last;
  if (hit?.version === version) return hit;
  const gzip = await indexBody(pool, version);
  // Pruned between the two queries by a newer import: the next request sees the newer one.
  if (gzip === null)
    throw new DomainError('unavailable.vuln_index', 'The vulnerability index is being replaced; retry', {
      retryAfterSeconds: 1,
    });
  const served = { version, gzip };
  cache.last = served;
  return served;
}

/** Whether an If-None-Match header names this version (strong or weak, in a list, or `*`). */
export function matchesVersion(header: string | undefined, version: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === `"${version}"`;
  });
}

/** Whether Accept-Encoding takes gzip (the stored bytes as they are). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === 'x-gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}
