import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { maskUrl } from '../src/logging.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * docs/api.md: plaintext keys, JWTs, passwords and secrets never reach logs or error bodies.
 * The portal runs at debug level with every request logged (SVC_ACCESS_LOG=all, and the
 * "request received" line debug adds) and every line it writes is kept;
 * every response is kept too. Then each secret is searched for in all of it.
 */

/** Request ids with a "request received" line and no "request completed" (or "request errored") line yet. */
function unfinishedRequests(lines: string[]): string[] {
  const open = new Set<string>();
  for (const line of lines) {
    const entry = JSON.parse(line) as { reqId?: string; msg?: string };
    if (entry.reqId === undefined) continue;
    if (entry.msg === 'request received') open.add(entry.reqId);
    else if (entry.msg === 'request completed' || entry.msg === 'request errored') open.delete(entry.reqId);
  }
  return [...open];
}

interface Exchange {
  label: string;
  status: number;
  text: string;
}

describe('secrets never reach the log or an error body', () => {
  const lines: string[] = [];
  const exchanges: Exchange[] = [];
  const secrets = new Map<string, string>();
  let portal: TestPortal;

  async function send(label: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
    const res = await fetch(`${portal.url}${path}`, { ...init, signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    exchanges.push({ label, status: res.status, text });
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body };
  }

  const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields) });
  const json = (body: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });

  beforeAll(async () => {
    portal = await startTestPortal({
      env: { SVC_LOG_LEVEL: 'debug', SVC_ACCESS_LOG: 'all' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    secrets.set('admin password', ADMIN_PASSWORD);
    secrets.set('legacy key', LEGACY_KEY);

    // Password login.
    const login = await send(
      'password login',
      '/identity/token',
      form({ grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    );
    expect(login.status).toBe(200);
    secrets.set('access token', login.body.access_token);
    secrets.set('refresh token', login.body.refresh_token);

    // Refresh, then a reuse of the rotated refresh token (logged as a warning, family revoked).
    const refreshed = await send(
      'refresh',
      '/identity/token',
      form({ grant_type: 'refresh_token', refresh_token: login.body.refresh_token }),
    );
    expect(refreshed.status).toBe(200);
    secrets.set('refreshed access token', refreshed.body.access_token);
    secrets.set('second refresh token', refreshed.body.refresh_token);
    const reuse = await send(
      'refresh token reuse',
      '/identity/token',
      form({ grant_type: 'refresh_token', refresh_token: login.body.refresh_token }),
    );
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    // The reuse revoked the family, its access tokens included: log in again for the rest.
    const again = await send(
      'second password login',
      '/identity/token',
      form({ grant_type: 'password', username: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    );
    expect(again.status).toBe(200);
    secrets.set('second access token', again.body.access_token);
    secrets.set('third refresh token', again.body.refresh_token);
    const access = again.body.access_token as string;
    const asAdmin = { 'x-identity-token': access };

    // License creation: the plaintext key is in this response only.
    const created = await send(
      'create license',
      '/api/licenses',
      json(JSON.stringify({ tier: 'business', client_id: 'secrets', name: 'secret hygiene' }), asAdmin),
    );
    expect(created.status).toBe(201);
    const key = created.body.license.plaintext_key as string;
    expect(key).toMatch(/^svc_biz_[0-9a-f]{64}$/);
    secrets.set('plaintext license key', key);

    // The key, the legacy key and an unknown well-formed key in x-api-key.
    expect((await send('key check', '/api/license', { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await send('legacy key check', '/api/license', { headers: { 'x-api-key': LEGACY_KEY } })).status).toBe(200);
    const unknownKey = `svc_msp_${randomBytes(32).toString('hex')}`;
    secrets.set('unknown license key', unknownKey);
    expect((await send('unknown key check', '/api/license', { headers: { 'x-api-key': unknownKey } })).body.valid).toBe(
      false,
    );

    // The JWT in X-Identity-Token, in Authorization, and a tampered one.
    expect((await send('jwt in X-Identity-Token', '/api/licenses', { headers: asAdmin })).status).toBe(200);
    expect(
      (await send('jwt in Authorization', '/api/licenses', { headers: { authorization: `Bearer ${access}` } })).status,
    ).toBe(401);
    expect(
      (
        await send('jwt in Authorization (identity)', '/identity/user', {
          headers: { authorization: `Bearer ${access}` },
        })
      ).status,
    ).toBe(200);
    const tampered = `${access.slice(0, -6)}AAAAAA`;
    expect((await send('tampered jwt', '/api/licenses', { headers: { 'x-identity-token': tampered } })).status).toBe(
      401,
    );

    // A failing login: wrong password for a real account and for an unknown one.
    const wrong = `wrong-${randomBytes(8).toString('hex')}`;
    secrets.set('wrong password', wrong);
    const failed = await send(
      'failed login',
      '/identity/token',
      form({ grant_type: 'password', username: ADMIN_EMAIL, password: wrong }),
    );
    expect(failed.status).toBe(400);
    expect(failed.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid username or password' });
    expect(
      (
        await send(
          'failed login, unknown user',
          '/identity/token',
          form({ grant_type: 'password', username: 'nobody@test.local', password: wrong }),
        )
      ).status,
    ).toBe(400);

    // Secrets in query strings. Whether a route accepts the parameter (200) or refuses an
    // unknown one (400) does not matter here: every request is logged with its URL.
    const querySecret = `q-${randomBytes(12).toString('hex')}`;
    secrets.set('query token', querySecret);
    const encodedSecret = `e-${randomBytes(12).toString('hex')}`;
    secrets.set('query token under an encoded name', encodedSecret);
    const queries: [string, string, RequestInit?][] = [
      ['health ?token', `/api/health?token=${querySecret}`],
      ['licenses ?token', `/api/licenses?token=${querySecret}`, { headers: asAdmin }],
      ['unknown path ?token&key', `/api/nope?token=${querySecret}&key=${querySecret}`],
      ['license ?api_key', `/api/license?api_key=${querySecret}`, { headers: { 'x-api-key': key } }],
      [
        'identity ?password',
        `/identity/user?password=${querySecret}`,
        { headers: { authorization: `Bearer ${access}` } },
      ],
      // Percent-encoded names decode to the same names for the router: `%74oken` is `token`.
      ['health ?%74oken', `/api/health?a=1&%74oken=${encodedSecret}`],
      ['health ?Access_Token', `/api/health?Access_Token=${encodedSecret}#frag`],
    ];
    for (const [label, url, init] of queries) expect([200, 400, 404]).toContain((await send(label, url, init)).status);

    // Malformed bodies that carry secrets: the parse error must not quote them back.
    const bodySecret = `b-${randomBytes(12).toString('hex')}`;
    secrets.set('secret in a malformed JSON body', bodySecret);
    const badJson = await send(
      'malformed JSON login',
      '/identity/token',
      json(`{"grant_type":"password","username":"${ADMIN_EMAIL}","password":"${bodySecret}" x}`),
    );
    expect(badJson.status).toBe(400);
    const badLicense = await send(
      'malformed JSON license',
      '/api/licenses',
      json(`{"tier":"msp","name":"${bodySecret}",}`, asAdmin),
    );
    expect(badLicense.status).toBe(400);
    const extraField = await send(
      'unknown field with a secret',
      '/api/licenses',
      json(JSON.stringify({ tier: 'msp', client_id: 'c', name: 'n', password: bodySecret }), asAdmin),
    );
    expect(extraField.status).toBe(400);
    const badType = await send(
      'wrong type with a secret',
      '/api/licenses',
      json(JSON.stringify({ tier: bodySecret, client_id: 'c', name: 'n' }), asAdmin),
    );
    expect(badType.status).toBe(400);

    // The destination is written synchronously, but a request's "request completed" line comes
    // when the server has finished the response, which can be after the client has read it:
    // every request logged as received is also logged as done before the log is searched.
    await vi.waitFor(() => expect(unfinishedRequests(lines)).toEqual([]), { timeout: 30_000, interval: 20 });
  });

  afterAll(() => portal?.close());

  it('captured the traffic at debug level (the log is not simply empty)', () => {
    const text = lines.join('');
    expect(lines.length).toBeGreaterThan(40);
    expect(text).toContain('"msg":"request received"');
    expect(text).toContain('"msg":"request completed"');
    expect(text).toContain('refresh token reused; token family revoked');
    // Query strings are logged with their sensitive values masked, not dropped.
    expect(text).toContain('"url":"/api/health?token=[REDACTED]"');
    expect(text).toContain('"url":"/api/nope?token=[REDACTED]&key=[REDACTED]"');
    expect(text).toContain('"url":"/api/health?a=1&%74oken=[REDACTED]"');
    expect(exchanges.length).toBeGreaterThan(20);
    expect(secrets.size).toBe(14);
  });

  it('no secret appears anywhere in the log', () => {
    const text = lines.join('');
    const found: string[] = [];
    for (const [name, value] of secrets) {
      if (text.includes(value)) found.push(name);
      // Each part of a JWT on its own (the signature identifies the token).
      if (value.split('.').length === 3)
        for (const part of value.split('.').slice(1)) if (text.includes(part)) found.push(`${name} (part)`);
    }
    expect(found).toEqual([]);
  });

  it('no error body contains a secret', () => {
    const errors = exchanges.filter((e) => e.status >= 400);
    expect(errors.map((e) => e.label)).toEqual(
      expect.arrayContaining([
        'refresh token reuse',
        'jwt in Authorization',
        'tampered jwt',
        'failed login',
        'failed login, unknown user',
        'unknown path ?token&key',
        'malformed JSON login',
        'malformed JSON license',
        'unknown field with a secret',
        'wrong type with a secret',
      ]),
    );
    const leaks: string[] = [];
    for (const e of errors) {
      const body = JSON.parse(e.text) as { error?: unknown };
      expect(typeof body.error, `${e.label}: ${e.text}`).toBe('string');
      for (const [name, value] of secrets) if (e.text.includes(value)) leaks.push(`${e.label} → ${name}: ${e.text}`);
    }
    expect(leaks).toEqual([]);
  });
});

describe('maskUrl', () => {
  it.each([
    ['/api/health', '/api/health'],
    ['/api/x?token=abc', '/api/x?token=[REDACTED]'],
    ['/api/x?a=1&KEY=abc&b=2', '/api/x?a=1&KEY=[REDACTED]&b=2'],
    ['/api/x?%74oken=abc', '/api/x?%74oken=[REDACTED]'],
    ['/api/x?refresh%5Ftoken=abc&access_token=def', '/api/x?refresh%5Ftoken=[REDACTED]&access_token=[REDACTED]'],
    ['/share/?token=abc#frag', '/share/?token=[REDACTED]#frag'],
    ['/api/x?tokens=keep&mykey=keep&token', '/api/x?tokens=keep&mykey=keep&token'],
    ['/api/x?password=a=b&secret=', '/api/x?password=[REDACTED]&secret=[REDACTED]'],
    ['/api/x?bad=%E0%A4%A&jwt=abc', '/api/x?bad=%E0%A4%A&jwt=[REDACTED]'],
  ])('%s', (input, expected) => {
    expect(maskUrl(input)).toBe(expected);
  });
});
