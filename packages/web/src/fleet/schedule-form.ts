import type { PortalSchedule, PortalScheduleUpdateBody } from '@svc/protocol';

/** The Schedules page's form: what it shows, and the body it sends for a create or an update. */

export interface ScheduleForm {
  target: 'agent' | 'group';
  /** agentKey() of the chosen agent. */
  agent: string;
  group: string;
  /** The group's client (empty: the one client that has the group). */
  client: string;
  name: string;
  targets: string;
  ports: string;
  profile: string;
  cron: string;
  timezone: string;
  upload: boolean;
  enabled: boolean;
}

export const EMPTY_SCHEDULE_FORM: ScheduleForm = {
  target: 'agent',
  agent: '',
  group: '',
  client: '',
  name: '',
  targets: '',
  ports: '',
  profile: '',
  cron: '0 2 * * *',
  timezone: 'UTC',
  upload: true,
  enabled: true,
};

export function formOf(s: PortalSchedule): ScheduleForm {
  return {
    target: s.agent_id === null ? 'group' : 'agent',
    agent: '',
    group: s.group_name ?? '',
    client: s.client_id ?? '',
    name: s.name,
    targets: s.targets,
    ports: s.ports ?? '',
    profile: s.profile ?? '',
    cron: s.cron,
    timezone: s.timezone,
    upload: s.upload,
    enabled: s.enabled,
  };
}

/** The fields a create and an update share; blank optional fields are null (the profile's ports, the agent's default profile). */
export function scanBody(f: ScheduleForm): Omit<Required<PortalScheduleUpdateBody>, 'description'> {
  return {
    name: f.name.trim(),
    targets: f.targets.trim(),
    ports: f.ports.trim() === '' ? null : f.ports.trim(),
    profile: f.profile.trim() === '' ? null : f.profile.trim(),
    cron: f.cron.trim(),
    timezone: f.timezone.trim(),
    upload: f.upload,
    enabled: f.enabled,
  };
}

/** Where a schedule runs, in words. */
export const targetLabel = (s: PortalSchedule): string =>
  s.agent_id !== null ? `agent ${s.agent_id}` : `group ${s.group_name ?? ''}`;
