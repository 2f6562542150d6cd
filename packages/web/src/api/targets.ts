import type { TargetChangesQuery, TargetChangesResponse, TargetsResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';
import type { QueryOf } from './query-of.ts';

/** The scanned targets of the caller's clients (docs/findings-of-record.md). */

/** GET /api/targets: one client's targets, or every one the caller sees (`clientId` null). */
export function listTargets(clientId: string | null): Promise<TargetsResponse> {
  return apiRequest('GET', '/api/targets', { query: { client_id: clientId } });
}

/** GET /api/targets/changes: per target, what its latest scan changed (docs/findings-of-record.md#what-changed). */
export function listTargetChanges(query: QueryOf<TargetChangesQuery>): Promise<TargetChangesResponse> {
  return apiRequest('GET', '/api/targets/changes', { query });
}
