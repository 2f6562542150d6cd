import type { Static } from '@sinclair/typebox';
import type {
  BenchmarkResponse,
  DeleteSessionResponse,
  RemediationUpdateItem,
  RemediationUpdateResponse,
  RevokeShareResponse,
  RotateShareResponse,
  SessionClientsResponse,
  SessionDetailResponse,
  SessionFileName,
  SessionListResponse,
  SessionsQuery,
  SessionStatus,
  UpdateSessionResponse,
} from '@svc/protocol';
import { apiBlob, apiRequest } from './client.ts';
import type { QueryOf } from './query-of.ts';

export type SessionList = Static<typeof SessionListResponse>;
export type SessionDetail = Static<typeof SessionDetailResponse>;

/** Which session: its id, and its client when the id exists under several (docs/api.md#ids-are-per-client). */
export interface SessionRef {
  session: string;
  clientId?: string | undefined;
}

const refQuery = (ref: SessionRef) => ({ session: ref.session, client_id: ref.clientId });

/** GET /api/sessions: one page of the caller's sessions (scoped users see only their clients). */
export function listSessions(query: QueryOf<Omit<SessionsQuery, 'session'>>): Promise<SessionList> {
  return apiRequest<SessionList>('GET', '/api/sessions', { query });
}

/** GET /api/sessions/clients: the clients of the caller's sessions, for a client picker. */
export function listSessionClients(): Promise<SessionClientsResponse> {
  return apiRequest<SessionClientsResponse>('GET', '/api/sessions/clients');
}

/** GET /api/sessions?session=: one session with its status history and notes. */
export function getSession(ref: SessionRef): Promise<SessionDetail> {
  return apiRequest<SessionDetail>('GET', '/api/sessions', { query: refQuery(ref) });
}

/** One stored file, for saving. */
export function downloadFile(ref: SessionRef, file: SessionFileName): Promise<Blob> {
  return apiBlob('/api/download', { ...refQuery(ref), file, mode: 'download' });
}

export function getBenchmark(ref: SessionRef): Promise<Static<typeof BenchmarkResponse>> {
  return apiRequest('GET', '/api/benchmark', { query: refQuery(ref) });
}

export function updateStatus(
  ref: SessionRef,
  status: SessionStatus,
  note: string | undefined,
): Promise<Static<typeof UpdateSessionResponse>> {
  return apiRequest('PATCH', '/api/sessions', { query: refQuery(ref), body: { status, note } });
}

export function deleteSession(ref: SessionRef): Promise<Static<typeof DeleteSessionResponse>> {
  return apiRequest('DELETE', '/api/sessions', { query: refQuery(ref) });
}

/** A new share link; the previous one stops working. */
export function rotateShare(ref: SessionRef): Promise<RotateShareResponse> {
  return apiRequest('POST', '/api/sessions/share', { query: refQuery(ref) });
}

/** The share link stops working; the session has none until a new one is made. */
export function revokeShare(ref: SessionRef): Promise<RevokeShareResponse> {
  return apiRequest('DELETE', '/api/sessions/share', { query: refQuery(ref) });
}

export function updateRemediation(ref: SessionRef, items: RemediationUpdateItem[]): Promise<RemediationUpdateResponse> {
  return apiRequest('PATCH', '/api/remediation-update', {
    body: { session_id: ref.session, client_id: ref.clientId, items },
  });
}
