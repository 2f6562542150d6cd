import { SEVERITIES } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { severityKeyOf, severityOfKey } from './model.ts';

describe('severity keys', () => {
  it('order the most severe highest and give each key its severity back; an unknown one is null', () => {
    expect(SEVERITIES.map(severityKeyOf)).toEqual([4, 3, 2, 1, 0]);
    for (const s of SEVERITIES) expect(severityOfKey(severityKeyOf(s))).toBe(s);
    expect(severityKeyOf('urgent')).toBe(-1);
    expect(severityKeyOf(null)).toBe(-1);
    expect(severityOfKey(-1)).toBeNull();
  });
});
