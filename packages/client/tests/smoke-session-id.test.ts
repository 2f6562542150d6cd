import { scannerSessionId } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { smokeSessionId } from '../src/smoke-test/session-doc.ts';

describe('smokeSessionId', () => {
  it("starts with the scanner's UTC session id of that second, like every scan's session", () => {
    // The smoke test once stamped local time while scans stamp UTC: in any zone but UTC the two
    // disagreed, so the test runs in one east of UTC (Node applies a TZ change at once).
    const zone = process.env['TZ'];
    process.env['TZ'] = 'Asia/Tokyo';
    try {
      const now = new Date('2025-12-31T23:59:59Z');
      expect(now.getDate()).toBe(1);
      expect(smokeSessionId(now, () => '0a1b2c3d')).toBe(`${scannerSessionId(now)}_smoke-0a1b2c3d`);
      expect(smokeSessionId(now, () => '0a1b2c3d')).toBe('20251231_235959_smoke-0a1b2c3d');
    } finally {
      if (zone === undefined) delete process.env['TZ'];
      else process.env['TZ'] = zone;
    }
  });

  it('refuses a suffix that would make an id the portal refuses', () => {
    expect(() => smokeSessionId(new Date(), () => '../x')).toThrow(/does not match/);
  });
});
