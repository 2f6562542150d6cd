import { describe, expect, it } from 'vitest';
import { DomainError } from '../domain/errors.ts';
import { httpErrorOf } from '../http/errors.ts';
import { parseSessionId } from './access.ts';
import { SessionFileError } from './derive.ts';
import { parseRemediationItems } from './remediation.ts';
import { parseShareToken } from './share.ts';
import { acceptSessionFile } from './upload.ts';

/** The domain error a call throws, with the status and body the edge makes of it. */
function refusal(call: () => unknown): { code: string; status: number; body: Record<string, unknown> } {
  try {
    call();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    const http = httpErrorOf(err);
    return { code: err.code, status: http.statusCode, body: { ...http.extra, error: http.message } };
  }
  throw new Error('no refusal');
}

describe('session request values', () => {
  it('a missing or malformed session id is invalid.session_id, named after its parameter', () => {
    expect(refusal(() => parseSessionId(undefined))).toEqual({
      code: 'invalid.session_id',
      status: 400,
      body: { error: 'Missing session parameter' },
    });
    expect(refusal(() => parseSessionId('', 'session_id')).body).toEqual({ error: 'Missing session_id parameter' });
    for (const bad of ['../x', 'a/b', 'a\u0000', 'x'.repeat(129), 'a b'])
      expect(refusal(() => parseSessionId(bad))).toEqual({
        code: 'invalid.session_id',
        status: 400,
        body: { error: 'Invalid session parameter: must match ^[a-zA-Z0-9_-]+$' },
      });
    expect(parseSessionId('x'.repeat(128))).toBe('x'.repeat(128));
  });

  it('a share token is 64 hex characters, read case-insensitively; missing is refused only where required', () => {
    const token = 'AB'.repeat(32);
    expect(parseShareToken(token, { required: true })).toBe('ab'.repeat(32));
    expect(parseShareToken(undefined, { required: false })).toBeNull();
    expect(parseShareToken('', { required: false })).toBeNull();
    expect(refusal(() => parseShareToken('', { required: true }))).toEqual({
      code: 'invalid.share_token',
      status: 400,
      body: { error: 'Missing token parameter' },
    });
    for (const bad of ['ab'.repeat(31), `${'ab'.repeat(32)}0`, 'g'.repeat(64)])
      expect(refusal(() => parseShareToken(bad, { required: false }))).toEqual({
        code: 'invalid.share_token',
        status: 400,
        body: { error: 'Invalid token parameter: must be 64 hex characters' },
      });
  });

  it('remediation items with an unknown status are a 400', () => {
    expect(refusal(() => parseRemediationItems([{ title: 't', status: 'fixed' }], '2025-03-04'))).toMatchObject({
      code: 'invalid.remediation_item',
      status: 400,
    });
  });
});

describe('an uploaded session file', () => {
  const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc), 'utf8');

  it('without a usable session id is the upload 400 invalid.session_file', () => {
    const doc = { metadata: { client: 'Acme' } };
    expect(
      refusal(() => acceptSessionFile({ doc, json: bytes(doc), keyClientId: 'acme', hasExecSummary: false })),
    ).toEqual({
      code: 'invalid.session_file',
      status: 400,
      body: { error: 'session_json has no metadata.session_id' },
    });
    expect(new SessionFileError('x')).toBeInstanceOf(DomainError);
  });

  it("is stored as sent when it already names the key's client, or for the legacy key", () => {
    const doc = { metadata: { session_id: 's1', client_id: 'acme' } };
    const json = Buffer.from(`${JSON.stringify(doc)}\n`, 'utf8');
    const own = acceptSessionFile({ doc, json, keyClientId: 'acme', hasExecSummary: false });
    expect(own.body).toBe(json);
    expect(own.metadata.client_id).toBe('acme');
    const other = { metadata: { session_id: 's2', client_id: 'beta' } };
    const legacy = acceptSessionFile({ doc: other, json: bytes(other), keyClientId: null, hasExecSummary: true });
    expect(legacy.body.toString('utf8')).toBe(JSON.stringify(other));
    expect(legacy.metadata).toMatchObject({ session_id: 's2', client_id: 'beta', has_exec_summary: true });
  });

  it("says the key's client when it names another, or none (a top-level id gets a metadata block)", () => {
    const other = { metadata: { session_id: 's3', client_id: 'beta' }, findings: [] };
    const stamped = acceptSessionFile({ doc: other, json: bytes(other), keyClientId: 'acme', hasExecSummary: false });
    expect(stamped.metadata.client_id).toBe('acme');
    expect(JSON.parse(stamped.body.toString('utf8'))).toEqual({
      metadata: { session_id: 's3', client_id: 'acme' },
      findings: [],
    });
    const bare = { session_id: 's4' };
    const given = acceptSessionFile({ doc: bare, json: bytes(bare), keyClientId: 'acme', hasExecSummary: false });
    expect(given.body.toString('utf8')).toBe(
      JSON.stringify({ session_id: 's4', metadata: { client_id: 'acme' } }, null, 2),
    );
  });
});
