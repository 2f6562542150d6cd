import type {
  ExportFormat,
  FindingDetailResponse,
  FindingsQuery,
  FindingsResponse,
  SessionBlocksResponse,
} from '@svc/protocol';
import { apiBlob, apiRequest } from './client.ts';
import type { QueryOf } from './query-of.ts';
import type { SessionRef } from './sessions.ts';

/** One session's findings from the portal's index, its blocks and its exports (`/api/sessions/{id}/...`). */

const path = (ref: SessionRef) => `/api/sessions/${encodeURIComponent(ref.session)}`;

/** GET /api/sessions/{id}/findings: one page of the session's findings from the portal's index. */
export function listFindings(
  ref: SessionRef,
  query: QueryOf<Omit<FindingsQuery, 'client_id'>>,
): Promise<FindingsResponse> {
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
