import type {
  BulkChange,
  BulkResponse,
  DueDays,
  ExportFormat,
  FindingDetailResponse,
  FindingsQuery,
  FindingsResponse,
  RemediationSettingsResponse,
  SessionBlocksResponse,
} from '@svc/protocol';
import { apiBlob, apiRequest } from '../api/client.ts';
import type { SessionRef } from '../api/sessions.ts';

const path = (ref: SessionRef) => `/api/sessions/${encodeURIComponent(ref.session)}`;

/** GET /api/sessions/{id}/findings: one page of the session's findings from the portal's index. */
export function listFindings(ref: SessionRef, query: Omit<FindingsQuery, 'client_id'>): Promise<FindingsResponse> {
  return apiRequest('GET', `${path(ref)}/findings`, { query: { ...query, client_id: ref.clientId } });
}

/** One finding with evidence, references and history, for the detail panel. */
export function getFinding(ref: SessionRef, index: number): Promise<FindingDetailResponse> {
  return apiRequest('GET', `${path(ref)}/findings/${index}`, { query: { client_id: ref.clientId } });
}

/** The file's topology and ORC 9.64 blocks, without downloading the file. */
export function getSessionBlocks(ref: SessionRef): Promise<SessionBlocksResponse> {
  return apiRequest('GET', `${path(ref)}/blocks`, { query: { client_id: ref.clientId } });
}

/** GET /api/sessions/{id}/export: the findings as CSV, SARIF or DefectDojo JSON, fetched with the user's token. */
export function exportFindings(ref: SessionRef, format: ExportFormat): Promise<Blob> {
  return apiBlob(`${path(ref)}/export`, { format, client_id: ref.clientId });
}

/** Whose findings of record a session's findings are: its client ('' without one) and its target. */
export interface RecordScope {
  clientId: string;
  target: string;
}

/**
 * POST /api/findings/bulk: one change for many findings of record, by fingerprint within the
 * session's client and target, in one request (one transaction at the portal).
 */
export function bulkChange(scope: RecordScope, fingerprints: string[], change: BulkChange): Promise<BulkResponse> {
  return apiRequest('POST', '/api/findings/bulk', {
    body: { fingerprints, client_id: scope.clientId, target: scope.target, change },
  });
}

/** GET /api/remediation-settings: the client's due days per severity (the defaults until it has its own). */
export function getDueDays(clientId: string): Promise<RemediationSettingsResponse> {
  return apiRequest('GET', '/api/remediation-settings', { query: { client_id: clientId } });
}

/** PUT /api/remediation-settings: the client's due days; every finding of the client is dated again. */
export function putDueDays(clientId: string, dueDays: DueDays): Promise<RemediationSettingsResponse> {
  return apiRequest('PUT', '/api/remediation-settings', { body: { client_id: clientId, due_days: dueDays } });
}
