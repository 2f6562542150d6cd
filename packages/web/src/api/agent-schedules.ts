import type { Static } from '@sinclair/typebox';
import type {
  OkBody,
  PortalScheduleCreateBody,
  PortalScheduleListResponse,
  PortalScheduleResponse,
  PortalScheduleUpdateBody,
} from '@svc/protocol';
import { apiRequest } from './client.ts';

/** Scan schedules kept by the portal (docs/agent.md "Schedules kept by the portal"). */

type ScheduleAnswer = Static<typeof PortalScheduleResponse>;

export function listSchedules(): Promise<Static<typeof PortalScheduleListResponse>> {
  return apiRequest('GET', '/api/agent-schedules');
}

export function createSchedule(body: PortalScheduleCreateBody): Promise<ScheduleAnswer> {
  return apiRequest('POST', '/api/agent-schedules', { body });
}

export function updateSchedule(id: string, body: PortalScheduleUpdateBody): Promise<ScheduleAnswer> {
  return apiRequest('PATCH', '/api/agent-schedules', { query: { id }, body });
}

export function deleteSchedule(id: string): Promise<OkBody> {
  return apiRequest('DELETE', '/api/agent-schedules', { query: { id } });
}
