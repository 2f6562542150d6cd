import type { SessionView } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { previousScanOf, scanTimeOf } from '../src/sessions/scan-time.ts';
import { formatAge, secondsSince } from '../src/ui/format.ts';

/** The rules behind the session view's trend order and the benchmark's age. */

const view = (session_id: string, uploaded_at: string, scanned_at?: string | null) =>
  ({ session_id, uploaded_at, ...(scanned_at === undefined ? {} : { scanned_at }) }) as unknown as SessionView;

describe('scanTimeOf', () => {
  it("takes the portal's scan time first", () => {
    expect(scanTimeOf(view('20250301_090000', '2025-04-01T00:00:00.000Z', '2025-03-02T10:00:00.000Z'))).toBe(
      '2025-03-02T10:00:00.000Z',
    );
  });

  it("else the time in a scanner-style id (the scanner's clock, as UTC)", () => {
    expect(scanTimeOf(view('20250301_090512', '2025-04-01T00:00:00.000Z'))).toBe('2025-03-01T09:05:12.000Z');
    expect(scanTimeOf(view('20250301_090512_a1b2', '2025-04-01T00:00:00.000Z', null))).toBe('2025-03-01T09:05:12.000Z');
  });

  it('else the upload time: another id shape, or an id that is no date', () => {
    expect(scanTimeOf(view('weekly-scan', '2025-04-01T00:00:00.000Z'))).toBe('2025-04-01T00:00:00.000Z');
    expect(scanTimeOf(view('20251345_250000', '2025-04-01T00:00:00.000Z'))).toBe('2025-04-01T00:00:00.000Z');
  });
});

describe('previousScanOf', () => {
  const up = '2025-04-01T00:00:00.000Z';
  const a = view('20250301_090000', up);
  const b = view('20250308_090000', up);
  const late = view('upload-late', '2025-05-01T00:00:00.000Z', '2025-03-05T09:00:00.000Z');
  const c = view('20250315_090000', up);

  it('takes the scan that ran last before this one, by scan time, whatever the order of uploads', () => {
    expect(previousScanOf([c, late, b, a], c)?.session_id).toBe('20250308_090000');
    expect(previousScanOf([c, late, a], c)?.session_id).toBe('upload-late');
    expect(previousScanOf([c, b, a], b)?.session_id).toBe('20250301_090000');
  });

  it('is null for the first scan of the target', () => {
    expect(previousScanOf([c, b, a], a)).toBeNull();
    expect(previousScanOf([a], a)).toBeNull();
  });
});

describe('formatAge', () => {
  const now = Date.parse('2025-03-01T12:00:00Z');
  const age = (iso: string) => formatAge(secondsSince(iso, now));
  it('says how long ago, in the two largest units', () => {
    expect(age('2025-03-01T11:59:30Z')).toBe('30 s ago');
    expect(age('2025-03-01T11:59:00Z')).toBe('1 min ago');
    expect(age('2025-03-01T11:15:00Z')).toBe('45 min ago');
    expect(age('2025-03-01T09:00:00Z')).toBe('3 h ago');
    expect(age('2025-03-01T08:55:00Z')).toBe('3 h 5 min ago');
    expect(age('2025-02-28T12:00:00Z')).toBe('1 d ago');
    expect(age('2025-02-20T09:00:00Z')).toBe('9 d 3 h ago');
  });

  it('counts a time a little ahead of the clock as now, and has no value for a bad date', () => {
    expect(age('2025-03-01T12:00:05Z')).toBe('0 s ago');
    expect(age('not a date')).toBe('—');
    expect(formatAge(Number.NaN)).toBe('—');
  });
});
