import type {
  BulkChange,
  BulkResponse,
  RecordFilter,
  RecordSort,
  RecordsCountResponse,
  RecordsResponse,
  RecordsSummaryResponse,
} from '@svc/protocol';
import { apiRequest } from './client.ts';

/** The portal's findings of record across the caller's scope (docs/findings-of-record.md#the-portfolio). */

/** GET /api/findings: one page in the order asked (the cursor belongs to that order). */
export function listRecords(
  filter: RecordFilter,
  sort: RecordSort,
  limit: number,
  cursor: string | undefined,
): Promise<RecordsResponse> {
  return apiRequest('GET', '/api/findings', { query: { ...filter, sort, limit, cursor } });
}

/** GET /api/findings/count: what the filter matches, counted up to the bulk limit (fast at any size). */
export function countRecords(filter: RecordFilter): Promise<RecordsCountResponse> {
  return apiRequest('GET', '/api/findings/count', { query: { ...filter } });
}

/** GET /api/findings/summary: what the same filter matches, counted by severity and status (reads every match). */
export function summarizeRecords(filter: RecordFilter): Promise<RecordsSummaryResponse> {
  return apiRequest('GET', '/api/findings/summary', { query: { ...filter } });
}

/** POST /api/findings/bulk by filter: every finding the filter matches, in one request and one transaction. */
export function changeMatching(filter: RecordFilter, change: BulkChange): Promise<BulkResponse> {
  return apiRequest('POST', '/api/findings/bulk', { body: { filter, change } });
}

/** Findings of record of one client ('' without one) and target, by fingerprint. */
export interface ChosenFindings {
  client_id: string;
  target: string;
  fingerprints: string[];
}

/** POST /api/findings/bulk by fingerprints within one client and target (one transaction at the portal). */
export function changeChosen(chosen: ChosenFindings, change: BulkChange): Promise<BulkResponse> {
  return apiRequest('POST', '/api/findings/bulk', { body: { ...chosen, change } });
}
