import type { AgentView } from '@svc/protocol';
import { http, withToken } from '@svc/test-support/http';
import { untilValue } from '@svc/test-support/wait';

/** What tests of real svcd read about schedules: the reported state and the uploaded sessions. */

export interface ReportedSchedule {
  schedule_id: string;
  config: string;
  source?: 'local' | 'portal';
  last_run: string | null;
  last_status: string;
  next_run: string;
  retry_count: number;
}

/** Resolves with the schedule as the agent's latest stored heartbeat reports it, once `ok` holds. */
export function reportedSchedule(
  view: (agentId: string) => Promise<AgentView | undefined>,
  agentId: string,
  scheduleId: string,
  ok: (s: ReportedSchedule) => boolean = () => true,
  timeoutMs = 60_000,
): Promise<ReportedSchedule> {
  return untilValue(
    async () => {
      const schedules = (await view(agentId))?.schedules as ReportedSchedule[] | null | undefined;
      const s = schedules?.find((x) => x.schedule_id === scheduleId);
      return s !== undefined && ok(s) ? s : undefined;
    },
    `schedule ${scheduleId} as ${agentId} reports it`,
    timeoutMs,
  );
}

/** The scan's session id from svcd's `scheduled scan done` line of that schedule (the local directory's name). */
export function doneSessions(output: string, scheduleId: string): string[] {
  const re = new RegExp(`msg="scheduled scan done" schedule_id=${scheduleId} session=(\\S+)`, 'g');
  return [...output.matchAll(re)].map((m) => (m[1] as string).split('/').at(-1) as string);
}

/** session_results.json of a stored session as the portal serves it to an admin. */
export async function storedSessionFile(
  portalUrl: string,
  admin: string,
  sessionId: string,
): Promise<{ metadata: Record<string, unknown> }> {
  const res = await http(portalUrl, 'GET', `/api/download?session=${encodeURIComponent(sessionId)}`, {
    headers: withToken(admin),
  });
  if (res.status !== 200) throw new Error(`download ${sessionId}: ${res.status} ${res.text.slice(0, 200)}`);
  return typeof res.body === 'string' ? JSON.parse(res.body) : res.body;
}
