import { parseSessionJson, sessionFileRefusalText, sessionIdOfFile } from '@svc/protocol';
import { describe, expect, it } from 'vitest';

/** The one rule of what a session file is (session-file/identify.ts): the portal's upload and `svc upload` apply it. */
describe('session file identity', () => {
  it('parses JSON text, a leading byte-order mark allowed', () => {
    expect(parseSessionJson('\uFEFF{"session_id":"a"}')).toEqual({ doc: { session_id: 'a' } });
    expect(parseSessionJson('<?xml version="1.0"?>')).toMatchObject({ reason: 'not_json' });
    expect(parseSessionJson('')).toMatchObject({ reason: 'not_json' });
  });

  it('takes metadata.session_id, else a top-level session_id; a wrong-typed or empty one counts as absent', () => {
    expect(sessionIdOfFile({ metadata: { session_id: '20260301_120000' }, session_id: 'x' })).toEqual({
      id: '20260301_120000',
    });
    expect(sessionIdOfFile({ session_id: 'old-1' })).toEqual({ id: 'old-1' });
    expect(sessionIdOfFile({ metadata: { session_id: 20260301 }, session_id: 'top_1' })).toEqual({ id: 'top_1' });
    expect(sessionIdOfFile({ metadata: { session_id: '' } })).toEqual({ reason: 'no_session_id' });
    expect(sessionIdOfFile({ findings: [] })).toEqual({ reason: 'no_session_id' });
  });

  it('refuses what is not an object, and an id that is not a safe path segment of at most 128 characters', () => {
    expect([[], 'x', 1, true, null].map((d) => sessionIdOfFile(d))).toEqual([
      { reason: 'not_object', found: 'an array' },
      { reason: 'not_object', found: 'a string' },
      { reason: 'not_object', found: 'a number' },
      { reason: 'not_object', found: 'a boolean' },
      { reason: 'not_object', found: 'null' },
    ]);
    for (const id of ['../x', 'a.b', 'a b', 'é', 'a'.repeat(129)])
      expect(sessionIdOfFile({ metadata: { session_id: id } })).toEqual({ reason: 'invalid_session_id', value: id });
    expect(sessionIdOfFile({ metadata: { session_id: 'a'.repeat(128) } })).toEqual({ id: 'a'.repeat(128) });
  });

  it('says why in words that follow "it", cutting a long id', () => {
    expect(sessionFileRefusalText({ reason: 'not_object', found: 'an array' })).toBe('is an array, not a JSON object');
    expect(sessionFileRefusalText({ reason: 'no_session_id' })).toBe('has no metadata.session_id');
    expect(sessionFileRefusalText({ reason: 'not_json', detail: 'Unexpected end of JSON input' })).toBe(
      'is not JSON (Unexpected end of JSON input)',
    );
    expect(sessionFileRefusalText({ reason: 'invalid_session_id', value: 'x'.repeat(200) })).toBe(
      `has the session id "${'x'.repeat(64)}…", which is not one (^[a-zA-Z0-9_-]+$, at most 128 characters)`,
    );
  });
});
