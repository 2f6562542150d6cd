import { createHash } from 'node:crypto';
import { normalizeCron } from '@svc/protocol';

/**
 * Scheduling metadata (docs/session-file.md#computed-blocks). The schedule id is `sched_` followed by the
 * first 12 hex characters of the MD5 of the UTF-8 text `<target><cron>`: the target trimmed,
 * directly followed by the cron expression with its fields separated by single spaces
 * (so `0 2 * * 1` and `0  2 * * 1` are the same schedule). MD5 is an identifier here, not a
 * security measure.
 */

export interface Schedule {
  cron: string;
  /** The scheduler's own id, kept when update_schedule changed the cron or targets (svcd). */
  id?: string | undefined;
  profile?: string | undefined;
  scheduledBy: 'daemon' | 'cron';
}

export interface SchedulingMetadata {
  is_scheduled: boolean;
  schedule_id?: string;
  schedule_cron?: string;
  schedule_profile?: string;
  scheduled_by?: 'daemon' | 'cron';
}

export function scheduleId(target: string, cron: string): string {
  return `sched_${createHash('md5')
    .update(`${target.trim()}${normalizeCron(cron)}`, 'utf8')
    .digest('hex')
    .slice(0, 12)}`;
}

/** A scan started by hand is `is_scheduled: false` and carries no schedule fields. */
export function schedulingMetadata(target: string, schedule: Schedule | null): SchedulingMetadata {
  if (schedule === null) return { is_scheduled: false };
  return {
    is_scheduled: true,
    schedule_id: schedule.id ?? scheduleId(target, schedule.cron),
    schedule_cron: normalizeCron(schedule.cron),
    ...(schedule.profile === undefined ? {} : { schedule_profile: schedule.profile }),
    scheduled_by: schedule.scheduledBy,
  };
}

/**
 * The schedule a scheduler hands to `svc scan` (svcd sets these for its children): SVC_SCHEDULE_CRON,
 * SVC_SCHEDULED_BY (`daemon` or `cron`, default `cron`), SVC_SCHEDULE_PROFILE and SVC_SCHEDULE_ID
 * (an id of the `sched_` form, svcd's staying the same after update_schedule, or a portal schedule's
 * `psch_` id: docs/agent.md "Schedules kept by the portal"). Null without a cron.
 */
export function scheduleFromSettings(settings: { get(key: string): string | undefined }): Schedule | null {
  const cron = settings.get('SVC_SCHEDULE_CRON');
  if (cron === undefined) return null;
  const by = settings.get('SVC_SCHEDULED_BY');
  const id = settings.get('SVC_SCHEDULE_ID');
  return {
    cron,
    id: id !== undefined && /^(sched|psch)_[0-9a-f]{12}$/.test(id) ? id : undefined,
    profile: settings.get('SVC_SCHEDULE_PROFILE'),
    scheduledBy: by === 'daemon' ? 'daemon' : 'cron',
  };
}
