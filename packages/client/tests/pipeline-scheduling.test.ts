import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scheduleId, schedulingMetadata } from '../src/pipeline/scheduling.ts';

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
