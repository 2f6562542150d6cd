import { sessionHref } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { formatDate } from '../src/ui/format.ts';

describe('formatDate, the console date format', () => {
  it('shows YYYY-MM-DD HH:MM UTC whatever the zone of the browser', () => {
    expect(formatDate('2026-11-25T17:45:09.123Z')).toBe('2026-11-25 17:45 UTC');
    expect(formatDate('2026-11-25T23:30:00+02:00')).toBe('2026-11-25 21:30 UTC');
  });

  it('marks no date and an unreadable one with the en dash, as every other missing value', () => {
    // The fleet and admin pages once used an em dash here and the session pages an en dash
    // (and echoed an unreadable value as it came).
    for (const v of [null, undefined, '', 'garbage']) expect(formatDate(v), String(v)).toBe('—');
  });
});

describe('sessionHref, every link to a session view', () => {
  it('always names the client the session is stored under', () => {
    expect(sessionHref('20250101_120000', 'acme')).toBe('/collect/?session=20250101_120000&client_id=acme');
    expect(sessionHref('20250101_120000', 'a:b@c')).toBe('/collect/?session=20250101_120000&client_id=a%3Ab%40c');
  });

  it('a session uploaded without a client links with an empty client_id, never without one', () => {
    const href = sessionHref('s-1', null);
    expect(href).toBe('/collect/?session=s-1&client_id=');
    expect(new URL(href, 'http://x').searchParams.has('client_id')).toBe(true);
  });
});
