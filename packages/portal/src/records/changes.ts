import { TARGET_CHANGES_PAGE_DEFAULT, type TargetChangesQuery, type TargetChangesResponse } from '@svc/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { cursorFields, encodeCursor, isStorableText } from '../domain/cursor.ts';
import { DomainError } from '../domain/errors.ts';
import { type TargetPosition, targetChangesOf } from './changes-queries.ts';
import { presentTargetChanges } from './present.ts';

/**
 * "What changed" per target (GET /api/targets/changes, docs/findings-of-record.md#what-changed):
 * a page of the targets in the caller's scope, by client and target, paged by a keyset cursor.
 */

const BAD_CURSOR = 'Invalid cursor parameter: use next_cursor of the previous page';

/** Only a cursor this listing wrote: [client id as stored, target] (domain/cursor.ts). */
function positionOf(value: string | undefined): TargetPosition | undefined {
  if (value === undefined || value === '') return undefined;
  const fields = cursorFields(value);
  const [client, target] = fields ?? [];
  if (
    fields?.length !== 2 ||
    !isStorableText(client) ||
    !isStorableText(target) ||
    client.length > 128 ||
    target.length > 512
  )
    throw new DomainError('invalid.cursor', BAD_CURSOR);
  return [client, target];
}

export async function targetChangesPage(
  db: Kysely<Database>,
  scope: readonly string[] | null,
  q: TargetChangesQuery,
): Promise<TargetChangesResponse> {
  const limit = q.limit ?? TARGET_CHANGES_PAGE_DEFAULT;
  const after = positionOf(q.cursor);
  const rows = await targetChangesOf(
    db,
    scope,
    { clientId: q.client_id, target: q.target },
    { after, limit: limit + 1 },
  );
  // A client or target named that the caller has no target of: not found, another client's alike.
  if (rows.length === 0 && after === undefined && (q.client_id !== undefined || q.target !== undefined))
    throw new DomainError('not_found.target', 'Target not found');
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    targets: page.map(presentTargetChanges),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor([last.client_id, last.target]) : null,
  };
}
