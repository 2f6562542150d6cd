import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scheduleFromSettings, scheduleId, schedulingMetadata } from '../src/kit/scheduling.ts';

describe('scheduling metadata', () => {
  it('the id is sched_ + the first 12 hex of md5(target + cron)', () => {
    const md5 = createHash('md5').update('10.0.0.0/240 2 * * 1').digest('hex');
    expect(scheduleId('10.0.0.0/24', '0 2 * * 1')).toBe(`sched_${md5.slice(0, 12)}`);
    expect(scheduleId('10.0.0.0/24', '0 2 * * 1')).toMatch(/^sched_[0-9a-f]{12}$/);
    // whitespace of the target and between cron fields does not change the schedule
    expect(scheduleId(' 10.0.0.0/24 ', ' 0  2 * *\t1 ')).toBe(scheduleId('10.0.0.0/24', '0 2 * * 1'));
    expect(scheduleId('10.0.0.0/24', '0 3 * * 1')).not.toBe(scheduleId('10.0.0.0/24', '0 2 * * 1'));
  });

  it('a scheduled scan carries every field; a scan started by hand only is_scheduled: false', () => {
    expect(
      schedulingMetadata('10.0.0.0/24', { cron: '0 2 * * 1', profile: 'standard', scheduledBy: 'daemon' }),
    ).toEqual({
      is_scheduled: true,
      schedule_id: scheduleId('10.0.0.0/24', '0 2 * * 1'),
      schedule_cron: '0 2 * * 1',
      schedule_profile: 'standard',
      scheduled_by: 'daemon',
    });
    expect(schedulingMetadata('10.0.0.0/24', null)).toEqual({ is_scheduled: false });
  });
});

describe('the schedule a scheduler hands to svc scan', () => {
  const from = (values: Record<string, string>) => scheduleFromSettings({ get: (k) => values[k] });

  it('svcd children: SVC_SCHEDULE_CRON, SVC_SCHEDULED_BY=daemon and the profile', () => {
    expect(
      from({ SVC_SCHEDULE_CRON: '*/5 * * * *', SVC_SCHEDULED_BY: 'daemon', SVC_SCHEDULE_PROFILE: 'quick' }),
    ).toEqual({ cron: '*/5 * * * *', profile: 'quick', scheduledBy: 'daemon' });
  });

  it('anything but daemon is cron; no cron means a scan started by hand', () => {
    expect(from({ SVC_SCHEDULE_CRON: '0 2 * * 1', SVC_SCHEDULED_BY: 'systemd' })).toEqual({
      cron: '0 2 * * 1',
      profile: undefined,
      scheduledBy: 'cron',
    });
    expect(from({ SVC_SCHEDULED_BY: 'daemon' })).toBeNull();
  });

  it('SVC_SCHEDULE_ID keeps the id of a schedule whose cron or targets were changed (update_schedule)', () => {
    const id = scheduleId('10.0.0.1', '0 2 * * 1');
    const moved = from({ SVC_SCHEDULE_CRON: '30 4 * * *', SVC_SCHEDULED_BY: 'daemon', SVC_SCHEDULE_ID: id });
    expect(schedulingMetadata('10.0.0.1', moved).schedule_id).toBe(id);
    // Anything but an id of that form is ignored: the id is derived as without it.
    const odd = from({ SVC_SCHEDULE_CRON: '30 4 * * *', SVC_SCHEDULE_ID: '../x' });
    expect(schedulingMetadata('10.0.0.1', odd).schedule_id).toBe(scheduleId('10.0.0.1', '30 4 * * *'));
  });
});
