import { describe, expect, it } from 'vitest';
import { checkScheduleFields, cronProblem, isTimeZone, PORT_LIST_RULE } from '@svc/protocol';

/** A portal schedule's scan and time: run_scan's payload rules and the agents' cron rule, messages naming the field. */

const ok = { targets: ' 192.0.2.1 , 192.0.2.2 ', ports: null, profile: null, cron: ' */5  * * * * ', timezone: 'UTC' };

describe('checkScheduleFields', () => {
  it('normalises an accepted schedule: trimmed targets, single-spaced cron', () => {
    expect(checkScheduleFields(ok)).toEqual({
      ok: true,
      value: { targets: '192.0.2.1,192.0.2.2', ports: null, profile: null, cron: '*/5 * * * *', timezone: 'UTC' },
    });
  });

  it.each([
    [{ ports: '1-70000' }, `ports must be ${PORT_LIST_RULE}`],
    [
      { profile: '--script=x' },
      'profile must be a profile name (letters, digits, _ and -, starting with a letter or digit)',
    ],
    [{ targets: '' }, 'targets: no targets were specified'],
    [{ timezone: 'CEST' }, 'timezone must be an IANA time zone name (e.g. UTC, Europe/Berlin)'],
    [{ cron: '0 0 31 2 *' }, 'cron never runs'],
  ])('%j → %s', (change, message) => {
    expect(checkScheduleFields({ ...ok, ...change })).toEqual({ ok: false, message });
  });

  it('keeps the budget the caller gives (the portal or the agent)', () => {
    const wide = { ...ok, targets: '10.0.0.0/16' };
    expect(checkScheduleFields(wide).ok).toBe(true);
    expect(checkScheduleFields(wide, { maxAddresses: 256 }).ok).toBe(false);
  });
});

describe('the cron rule', () => {
  it('reads 5 or 6 fields in a time zone; refuses what croner refuses', () => {
    expect(cronProblem('0 3 * * *', 'Asia/Tokyo')).toBeNull();
    expect(cronProblem('*/2 * * * * *')).toBeNull();
    expect(cronProblem('* * *')).toMatch(/^is not a valid cron pattern/);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Europe/Nowhere')).toBe(false);
  });
});
