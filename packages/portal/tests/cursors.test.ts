import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, type LicenseFixture, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionParts } from '@svc/test-support/upload';

/**
 * Crafted cursors: a cursor the portal did not write answers 400 with the
 * listing's documented message (docs/api.md#cursors), never a 500, on both findings listings
 * and the session listing. Cursors are not signed: a hand-made one whose every field has the
 * type and range the portal writes is only a position, and pages like a real one.
 */

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const raw = (bytes: number[] | string) =>
  Buffer.from(typeof bytes === 'string' ? bytes : Uint8Array.from(bytes)).toString('base64url');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The same bytes with a last character whose unused bits are not zero (Buffer would still decode it). */
const nonCanonical = (c: string) => `${c.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(c.slice(-1)) + 1]}`;

const SESSION_FINDINGS = 'Invalid cursor parameter: use next_cursor of a page with the same sort and order';
const PORTFOLIO = 'Invalid cursor parameter: use next_cursor of the previous page';
const SESSIONS = 'Invalid cursor';
const AT = '2026-03-01T12:00:00.000Z';

/** Cursors wrong whatever the listing: not base64url, not canonical, not UTF-8, not a JSON array. */
const MALFORMED: [string, string][] = [
  ['not base64url', 'garbage!'],
  ['base64 alphabet (+ and /)', b64(['severity', 'desc', 3, 0]).replace(/-/g, '+').replace(/_/g, '/') + '+/'],
  ['padded', `${b64(['severity', 'desc', 3, 0])}==`],
  ['non-zero unused bits', nonCanonical(b64('[12]'))],
  ['a space inside', `${b64(['severity', 'desc', 3, 0]).slice(0, 8)} ${b64(['severity', 'desc', 3, 0]).slice(8)}`],
  ['invalid UTF-8', raw([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d])],
  ['a raw NUL byte in the JSON', raw('["host","asc","a\u0000",0]')],
  ['a JSON object', b64({ sort: 'severity', key: 3 })],
  ['a JSON string', b64('"severity"')],
  ['a JSON number', b64('42')],
  ['JSON null', b64('null')],
  ['an empty array', b64([])],
  ['not JSON', b64('severity,desc,3,0')],
];

describe('crafted cursors', () => {
  let portal: TestPortal;
  let admin: string;
  let key: LicenseFixture;
  const sid = newSessionId();

  const get = (path: string) => http(portal.url, 'GET', path, { headers: withToken(admin) });
  const findings = (query: string) => get(`/api/sessions/${sid}/findings?client_id=${key.record.client_id}&${query}`);

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await portal.adminToken();
    key = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('cursor') });
    const doc = {
      metadata: { session_id: sid, target: '10.9.0.0/24', finished_at: AT },
      findings: [
        { id: 'A', rule_id: 'a', title: 'A', severity: 'critical', host: '10.9.0.2', port: 443, protocol: 'tcp' },
        { id: 'B', rule_id: 'b', title: 'B', severity: 'high', host: '10.9.0.3', port: 22, protocol: 'tcp' },
        { id: 'C', rule_id: 'c', title: 'C', severity: 'low', host: '10.9.0.4', port: 80, protocol: 'tcp' },
      ],
    };
    // Two sessions, so that the session listing has a second page.
    for (const d of [doc, { ...doc, metadata: { ...doc.metadata, session_id: newSessionId() } }]) {
      const res = await postUpload(portal.url, key.key, sessionParts(d));
      if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    }
  });
  afterAll(async () => {
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  it("GET /api/sessions/{id}/findings: every crafted cursor is a 400 with the listing's message", async () => {
    const issued = (await findings('sort=host&limit=1')).body.next_cursor as string;
    const portfolio = (await get('/api/findings?limit=1')).body.next_cursor as string;
    const listing = (await get('/api/sessions?limit=1&sort=target')).body.next_cursor as string;
    expect([issued, portfolio, listing].every((c) => typeof c === 'string')).toBe(true);
    const cases: [string, string, string][] = [
      ...MALFORMED.map(([name, c]): [string, string, string] => [name, '', c]),
      ['NUL in a text key', 'sort=host', b64(['host', 'asc', '010.009.000.002\u0000', 0])],
      ['NUL in the first-seen key', 'sort=first_seen', b64(['first_seen', 'asc', '\u0000', 0])],
      ['NUL in the sort name', '', b64(['severity\u0000', 'desc', 3, 0])],
      ['a lone surrogate in a text key', 'sort=cve', b64('["cve","asc","\\ud800",0]')],
      ['severity key past smallint', '', b64(['severity', 'desc', 40000, 0])],
      ['severity key past its range', '', b64(['severity', 'desc', 5, 0])],
      ['cvss key past smallint', 'sort=cvss', b64(['cvss', 'desc', 32768, 0])],
      ['cvss key past its range', 'sort=cvss', b64(['cvss', 'desc', 101, 0])],
      ['status key past smallint', 'sort=status', b64(['status', 'asc', 99999, 0])],
      ['port key past integer', 'sort=port', b64(['port', 'asc', 2 ** 31, 0])],
      ['port key past 65535', 'sort=port', b64(['port', 'asc', 65536, 0])],
      ['a huge key', '', b64('["severity","desc",1e400,0]')],
      ['a huge ordinal', '', b64(['severity', 'desc', 3, 2 ** 31])],
      ['an unsafe integer ordinal', '', b64('["severity","desc",3,123456789012345678901234567890]')],
      ['a negative key', '', b64(['severity', 'desc', -2, 0])],
      ['a negative port key', 'sort=port', b64(['port', 'asc', -2, 0])],
      ['a negative ordinal', '', b64(['severity', 'desc', 3, -1])],
      ['a fractional key', '', b64(['severity', 'desc', 2.5, 0])],
      ['a key as text', '', b64(['severity', 'desc', '3', 0])],
      ['a number for a text key', 'sort=host', b64(['host', 'asc', 3, 0])],
      ['a null key', '', b64(['severity', 'desc', null, 0])],
      ['an array key', 'sort=host', b64(['host', 'asc', ['a'], 0])],
      ['an ordinal as text', '', b64(['severity', 'desc', 3, '0'])],
      ['a boolean ordinal', '', b64(['severity', 'desc', 3, true])],
      ['three fields', '', b64(['severity', 'desc', 3])],
      ['five fields', '', b64(['severity', 'desc', 3, 0, 0])],
      ["another sort's cursor", '', issued],
      ["another order's cursor", 'sort=host&order=desc', issued],
      ["the portfolio's cursor", '', portfolio],
      ["the session listing's cursor", 'sort=host', listing],
      ['a truncated cursor', 'sort=host', issued.slice(0, -3)],
      ['a cut in the middle', 'sort=host', issued.slice(0, Math.floor(issued.length / 2))],
    ];
    const answers = await Promise.all(
      cases.map(async ([name, query, cursor]) => {
        const res = await findings(`${query}&limit=1&cursor=${encodeURIComponent(cursor)}`);
        return [`${name}: ${res.status}`, res.status === 400 ? res.body : null];
      }),
    );
    expect(answers).toEqual(cases.map(([name]) => [`${name}: 400`, { error: SESSION_FINDINGS }]));
    const long = await findings(`cursor=${'A'.repeat(1025)}`);
    expect([long.status, long.body]).toEqual([
      400,
      { error: 'Invalid query: cursor must NOT have more than 1024 characters' },
    ]);
  });

  it('GET /api/sessions/{id}/findings: a hand-made cursor in range is a position, as documented', async () => {
    // Severity keys run from 4 (critical) down: after the critical finding (ordinal 0) come the others.
    const res = await findings(`limit=5&cursor=${b64(['severity', 'desc', 4, 0])}`);
    expect(res.status).toBe(200);
    expect(res.body.findings.map((f: { index: number }) => f.index)).toEqual([1, 2]);
    const text = await findings(`sort=host&limit=5&cursor=${b64(['host', 'asc', '010.009.000.003', 1])}`);
    expect(text.body.findings.map((f: { index: number }) => f.index)).toEqual([2]);
    const issued = (await findings('sort=first_seen&limit=1')).body.next_cursor as string;
    expect((await findings(`sort=first_seen&limit=1&cursor=${issued}`)).status).toBe(200);
  });

  it("GET /api/findings: every crafted cursor is a 400 with the listing's message", async () => {
    const issued = (await get('/api/findings?limit=1')).body.next_cursor as string;
    const other = (await findings('limit=1')).body.next_cursor as string;
    const cases: [string, string][] = [
      ...MALFORMED,
      ['NUL in the time', b64([4, `${AT}\u0000`, '1'])],
      ['NUL in the id', b64([4, AT, '1\u0000'])],
      ['a time PostgreSQL reads otherwise', b64([4, '1', '1'])],
      ['a time without a zone', b64([4, '2026-03-01 12:00:00', '1'])],
      ['an RFC 2822 time', b64([4, 'Sun, 01 Mar 2026 12:00:00 GMT', '1'])],
      ['an extended year', b64([4, '+275760-09-13T00:00:00.000Z', '1'])],
      ['year zero', b64([4, '0000-01-01T00:00:00.000Z', '1'])],
      ['a day that does not exist', b64([4, '2026-02-30T12:00:00.000Z', '1'])],
      ['a time as a number', b64([4, Date.parse(AT), '1'])],
      ['severity key past smallint', b64([40000, AT, '1'])],
      ['severity key past its range', b64([5, AT, '1'])],
      ['a negative severity key', b64([-2, AT, '1'])],
      ['a huge severity key', b64('[1e400,"2026-03-01T12:00:00.000Z","1"]')],
      ['a fractional severity key', b64([3.5, AT, '1'])],
      ['a severity key as text', b64(['4', AT, '1'])],
      ['an id past bigint', b64([4, AT, '9223372036854775808'])],
      ['an id of 20 digits', b64([4, AT, '99999999999999999999'])],
      ['a negative id', b64([4, AT, '-1'])],
      ['an id with a sign', b64([4, AT, '+1'])],
      ['an id in hex', b64([4, AT, '0x1F'])],
      ['an id with an exponent', b64([4, AT, '1e3'])],
      ['an empty id', b64([4, AT, ''])],
      ['an id as a number', b64([4, AT, 1])],
      ['a null id', b64([4, AT, null])],
      ['two fields', b64([4, AT])],
      ['four fields', b64([4, AT, '1', 0])],
      ["a session's findings cursor", other],
      ['a truncated cursor', issued.slice(0, -2)],
      ['a cut in the middle', issued.slice(0, Math.floor(issued.length / 2))],
    ];
    const answers = await Promise.all(
      cases.map(async ([name, cursor]) => {
        const res = await get(`/api/findings?cursor=${encodeURIComponent(cursor)}`);
        return [`${name}: ${res.status}`, res.status === 400 ? res.body : null];
      }),
    );
    expect(answers).toEqual(cases.map(([name]) => [`${name}: 400`, { error: PORTFOLIO }]));
  });

  it('GET /api/findings: a hand-made cursor in range is a position; the largest id and year 9999 are taken', async () => {
    const all = (await get(`/api/findings?client_id=${key.record.client_id}`)).body.findings as unknown[];
    expect(all).toHaveLength(3);
    for (const cursor of [
      [4, AT, '9223372036854775807'],
      [-1, '9999-12-31T23:59:59.999Z', '1'],
      [0, '0001-01-01T00:00:00.000Z', '0'],
    ]) {
      const res = await get(`/api/findings?client_id=${key.record.client_id}&cursor=${b64(cursor)}`);
      expect(res.status, JSON.stringify(cursor)).toBe(200);
    }
    // After every critical record: the high and the low one.
    const res = await get(
      `/api/findings?client_id=${key.record.client_id}&cursor=${b64([4, '9999-12-31T23:59:59.999Z', '1'])}`,
    );
    expect(res.body.findings).toHaveLength(2);
  });

  it("GET /api/sessions: every crafted cursor is a 400 with the listing's message", async () => {
    const issued = (await get('/api/sessions?limit=1&sort=target')).body.next_cursor as string;
    const cases: [string, string, string][] = [
      ...MALFORMED.map(([name, c]): [string, string, string] => [name, '', c]),
      ['NUL in the time', '', b64([`${AT}\u0000`, sid, key.record.client_id])],
      ['NUL in a text key', 'sort=target', b64(['s', 'target', 'asc', 'a\u0000', sid, key.record.client_id])],
      ['a number key past double', 'sort=risk_score', b64('["s","risk_score","desc",1e400,"x","y"]')],
      ['a key of the wrong type', 'sort=risk_score', b64(['s', 'risk_score', 'desc', 'high', sid, 'c'])],
      ['wrong arity', '', b64([AT])],
      ["another sort's cursor", '', issued],
      ["a session's findings cursor", '', (await findings('limit=1')).body.next_cursor as string],
      ['a truncated cursor', 'sort=target', issued.slice(0, -2)],
    ];
    const answers = await Promise.all(
      cases.map(async ([name, query, cursor]) => {
        const res = await get(`/api/sessions?${query}&cursor=${encodeURIComponent(cursor)}`);
        return [`${name}: ${res.status}`, res.status === 400 ? res.body : null];
      }),
    );
    expect(answers).toEqual(cases.map(([name]) => [`${name}: 400`, { error: SESSIONS }]));
  });
});
