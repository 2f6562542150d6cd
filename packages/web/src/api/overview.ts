import type { OverviewResponse, PostureResponse } from '@svc/protocol';
import { apiRequest } from './client.ts';

/** GET /api/overview: risk by scan time, fleet states, expiring sessions, frequent open findings. */
export function getOverview(days?: number): Promise<OverviewResponse> {
  return apiRequest<OverviewResponse>('GET', '/api/overview', { query: { days } });
}

/** GET /api/overview/posture: per client and target, open criticals and highs, overdue and KEV findings, last scan, trend. */
export function getPosture(): Promise<PostureResponse> {
  return apiRequest<PostureResponse>('GET', '/api/overview/posture');
}
