import { RECORD_SORTS, type RecordFinding, type RecordSort } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createLicense,
  createScopedUser,
  type LicenseFixture,
  type ScopedUser,
  uniqueClientId,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { type Doc, scanDocument } from '@svc/test-support/upload';

/**
 * GET /api/findings?sort=: every order walked page by page with its cursor
 * gives exactly the rows of one big page, in that order, records without the key last; ties
 * (one session's records share their first-seen time) are split across pages by the id. And
 * GET /api/findings/count: exact up to `upto`, capped past it.
 */

const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'];

/** A scan of `target` with `n` findings: severities in turn, EPSS on two of three, hosts repeating. */
function scan(sessionId: string, target: string, n: number): Doc {
  const findings = Array.from({ length: n }, (_, i) => ({
    id: `f-${i}`,
    rule_id: `rule-${i}`,
    title: `Weakness ${i}`,
    severity: SEVERITIES[i % 5],
    host: i % 7 === 6 ? undefined : `host-${String.fromCharCode(97 + ((i * 5) % 4))}.${target}`,
    port: 1000 + i,
    protocol: 'tcp',
    ...(i % 3 === 2 ? {} : { epss: (i % 4) / 10 }),
  }));
  return scanDocument(sessionId, target, findings);
}

/** The key an order compares, null when the record has none (it sorts last). */
const keyOf = (sort: RecordSort, f: RecordFinding): string | number | null => {
  switch (sort) {
    case 'severity':
      return 4 - SEVERITIES.indexOf(f.severity ?? 'info');
    case 'first_seen_desc':
    case 'first_seen_asc':
      return f.first_seen_at;
    case 'due_date_asc':
      return f.due_date;
    case 'epss_desc':
      return f.epss;
    case 'host_asc':
      return f.host;
  }
};
const descending = (sort: RecordSort) => sort === 'first_seen_desc' || sort === 'epss_desc';

describe('findings of record: sort orders and their cursors, the capped count', () => {
  let portal: TestPortal;
  let acme: LicenseFixture;
  let beta: LicenseFixture;
  let acmeUser: ScopedUser;
  let admin: string;

  async function upload(key: string, doc: Doc) {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  const get = (path: string, token = admin) => http(portal.url, 'GET', path, { headers: withToken(token) });

  /** Every page of `query` at `limit` rows, following next_cursor (at most 40 pages). */
  async function walk(query: string, limit: number, token = admin): Promise<RecordFinding[]> {
    const out: RecordFinding[] = [];
    let cursor: string | null = '';
    for (let i = 0; i < 40 && cursor !== null; i++) {
      const res = await get(
        `/api/findings?${query}&limit=${limit}${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        token,
      );
      expect(res.status, res.text).toBe(200);
      out.push(...res.body.findings);
      cursor = res.body.next_cursor;
    }
    expect(cursor).toBeNull();
    return out;
  }
  const ids = (rows: RecordFinding[]) => rows.map((r) => `${r.target} ${r.fingerprint}`);

  beforeAll(async () => {
    portal = await startTestPortal();
    admin = await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
    beta = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('beta') });
    // Three first-seen times (so ties of 9 to 14 records), across two clients.
    await upload(acme.key, scan('20260401_120000', 'acme-net', 9));
    await upload(acme.key, scan('20260410_120000', 'acme-dmz', 14));
    await upload(beta.key, scan('20260420_120000', 'beta-net', 11));
    acmeUser = await createScopedUser(portal, [acme.record.client_id]);
  });
  afterAll(async () => {
    await portal?.close();
  });

  it.each(RECORD_SORTS)(
    '%s: pages of 4 follow one page of 500 exactly, in order, keyless records last',
    async (sort) => {
      const whole = (await get(`/api/findings?sort=${sort}&limit=500`)).body.findings as RecordFinding[];
      expect(whole).toHaveLength(34);
      const paged = await walk(`sort=${sort}`, 4);
      expect(ids(paged)).toEqual(ids(whole));
      expect(new Set(ids(paged)).size).toBe(34);
      const keys = whole.map((f) => keyOf(sort, f));
      const present = keys.filter((k) => k !== null);
      // Records without the key come after every record with it.
      expect(keys.slice(present.length).every((k) => k === null)).toBe(true);
      const sorted = [...present].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      expect(present).toEqual(descending(sort) || sort === 'severity' ? sorted.reverse() : sorted);
    },
  );

  it('the orders differ where the data does: newest first starts with beta, oldest first with acme-net', async () => {
    const first = async (sort: string) =>
      (await get(`/api/findings?sort=${sort}&limit=1`)).body.findings[0] as RecordFinding;
    expect((await first('first_seen_desc')).target).toBe('beta-net');
    expect((await first('first_seen_asc')).target).toBe('acme-net');
    expect((await first('epss_desc')).epss).toBe(0.3);
    expect((await first('severity')).severity).toBe('critical');
    // Info findings have no due date (the default due days): they come last.
    const byDue = (await get('/api/findings?sort=due_date_asc&limit=500')).body.findings as RecordFinding[];
    expect(byDue.at(-1)?.severity).toBe('info');
    expect(byDue[0]?.due_date).toBe('2026-04-16');
  });

  it('with filters and within a scoped user’s clients, the cursor keeps both', async () => {
    const acmeOnly = await walk('sort=host_asc&severity=critical,high,medium', 2, acmeUser.token);
    const whole = (await get(`/api/findings?sort=host_asc&severity=critical,high,medium&limit=500`, acmeUser.token))
      .body.findings as RecordFinding[];
    expect(ids(acmeOnly)).toEqual(ids(whole));
    expect(whole.length).toBeGreaterThan(5);
    expect(whole.every((f) => f.client_id === acme.record.client_id && f.severity !== 'low')).toBe(true);
    const epss = await walk(`sort=epss_desc&client_id=${beta.record.client_id}`, 3);
    expect(epss).toHaveLength(11);
    expect(epss.slice(-3).map((f) => f.epss)).toEqual([null, null, null]);
  });

  it('a cursor of another sort, or a made-up key, is a 400; so is an unknown sort', async () => {
    const severityCursor = (await get('/api/findings?limit=1')).body.next_cursor as string;
    const hostCursor = (await get('/api/findings?sort=host_asc&limit=1')).body.next_cursor as string;
    for (const path of [
      `/api/findings?sort=host_asc&cursor=${severityCursor}`,
      `/api/findings?cursor=${hostCursor}`,
      `/api/findings?sort=epss_desc&cursor=${hostCursor}`,
      `/api/findings?sort=epss_desc&cursor=${Buffer.from(JSON.stringify(['epss_desc', 'high', '1'])).toString('base64url')}`,
      `/api/findings?sort=first_seen_asc&cursor=${Buffer.from(JSON.stringify(['first_seen_asc', null, '1'])).toString('base64url')}`,
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toBe('Invalid cursor parameter: use next_cursor of the previous page');
    }
    const unknown = await get('/api/findings?sort=newest');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain('sort');
  });

  it('GET /api/findings/count: what the filters match, exact up to `upto`, capped past it, within the scope', async () => {
    const count = async (query: string, token = admin) => {
      const res = await get(`/api/findings/count?${query}`, token);
      return { status: res.status, body: res.body };
    };
    expect(await count('')).toEqual({ status: 200, body: { count: 34, capped: false } });
    expect(await count('upto=34')).toEqual({ status: 200, body: { count: 34, capped: false } });
    expect(await count('upto=33')).toEqual({ status: 200, body: { count: 33, capped: true } });
    expect(await count('upto=1')).toEqual({ status: 200, body: { count: 1, capped: true } });
    const critical = (await get('/api/findings?severity=critical&limit=500')).body.findings.length as number;
    expect(critical).toBeGreaterThan(0);
    expect(await count('severity=critical')).toEqual({ status: 200, body: { count: critical, capped: false } });
    // The same total as the summary's full count.
    expect((await get('/api/findings/summary?severity=critical')).body.total).toBe(critical);
    // A customer user counts their clients only; another client is a 403.
    expect(await count('', acmeUser.token)).toEqual({ status: 200, body: { count: 23, capped: false } });
    const other = await count(`client_id=${beta.record.client_id}`, acmeUser.token);
    expect(other).toEqual({ status: 403, body: { error: 'Access to this client is not allowed' } });
    for (const bad of ['upto=0', 'upto=10001', 'upto=ten', 'severity=urgent'])
      expect((await count(bad)).status, bad).toBe(400);
  });
});
