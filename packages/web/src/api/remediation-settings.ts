import type { DueDays, RemediationSettingsResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** GET /api/remediation-settings: the client's due days per severity (the defaults until it has its own). */
export function getDueDays(clientId: string): Promise<RemediationSettingsResponse> {
  return apiRequest('GET', '/api/remediation-settings', { query: { client_id: clientId } });
}

/** PUT /api/remediation-settings: the client's due days; every finding of the client is dated again. */
export function putDueDays(clientId: string, dueDays: DueDays): Promise<RemediationSettingsResponse> {
  return apiRequest('PUT', '/api/remediation-settings', { body: { client_id: clientId, due_days: dueDays } });
}
