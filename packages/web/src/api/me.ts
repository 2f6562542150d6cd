import type { MeResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** GET /api/me: the signed-in user as the portal resolves it (role, scope and the tier's permissions). */
export function getMe(): Promise<MeResponse> {
  return apiRequest('GET', '/api/me');
}
