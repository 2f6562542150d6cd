import type { AuditQuery, AuditResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** GET /api/audit: the newest events of a window, by type and session (admins). */
export function listAuditEvents(query: AuditQuery): Promise<AuditResponse> {
  return apiRequest('GET', '/api/audit', { query });
}
