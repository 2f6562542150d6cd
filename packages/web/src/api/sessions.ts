import type { Static } from '@sinclair/typebox';
import type { SessionDetailResponse, SessionListResponse, SessionsQuery } from '@svc/protocol';
import { apiRequest } from './client.ts';

export type SessionList = Static<typeof SessionListResponse>;
export type SessionDetail = Static<typeof SessionDetailResponse>;

/** GET /api/sessions: one page of the caller's sessions (scoped users see only their clients). */
export function listSessions(query: Omit<SessionsQuery, 'session'>): Promise<SessionList> {
  return apiRequest<SessionList>('GET', '/api/sessions', { query });
}

/** GET /api/sessions?session=: one session with its status history and notes. */
export function getSession(session: string, clientId?: string): Promise<SessionDetail> {
  return apiRequest<SessionDetail>('GET', '/api/sessions', { query: { session, client_id: clientId } });
}
