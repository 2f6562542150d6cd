import type { Static } from '@sinclair/typebox';
import type { DbHealthResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';

export type DbHealth = Static<typeof DbHealthResponse>;

/** GET /api/db-health: size and connections, rows per table, sessions, recent activity (admins). */
export function getDbHealth(): Promise<DbHealth> {
  return apiRequest('GET', '/api/db-health');
}
