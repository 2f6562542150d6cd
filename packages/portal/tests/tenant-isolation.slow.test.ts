import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../src/events/bus.ts';
import type { StoredShareToken } from '../src/sessions/share-seal.ts';
import {
  createLicense,
  createScopedUser,
  openDb,
  type LicenseFixture,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withKey, withToken, type HttpResult } from '@svc/test-support/http';
import { LEGACY_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import {
  blobObjects,
  blobTmp,
  newSessionId,
  postUpload,
  sessionDoc,
  sessionParts,
  type Doc,
} from '@svc/test-support/upload';

/**
 * Tenant isolation (docs/api.md#credentials, docs/api.md#sessions,
 * docs/decisions.md#session-ids-are-per-client, docs/decisions.md#download-and-share-summary): every session endpoint × every credential × every session,
 * with the expected answer of each cell written down in MATRIX below, so the whole policy
 * reads at once. One test per cell.
 *
 * Every cell that refuses a change also checks that the refusal left no trace: the
 * session's row (status, files, version, timestamps), its share token, status history,
 * notes and audit events, the blob store and the event bus are exactly as before. Every
 * refusal is also checked to say nothing about the session (no client, target or token
 * in the answer). Cells that change something get a fresh session of their own, so the
 * two fixture sessions that the read cells use are never touched (checked at the end).
 */

// ---- the policy ----------------------------------------------------------------------

/**
 * Credentials:
 * - keyA, keyB: business license keys of clients A and B;
 * - proA: a professional key of client A (tier 403s; same tenant as keyA);
 * - legacy: the deprecated shared key (tier msp, no client scoping, docs/api.md#credentials);
 * - admin: the bootstrap admin's identity JWT (X-Identity-Token);
 * - memberA: a member JWT with client_ids ['A'] (business permissions: A has a business key, docs/api.md#credentials);
 * - none: no credential at all.
 */
const CREDENTIALS = ['keyA', 'keyB', 'proA', 'legacy', 'admin', 'memberA', 'none'] as const;
type Credential = (typeof CREDENTIALS)[number];

/** The session a cell is about: A's, B's, or an id no session has. */
const TARGETS = ['A', 'B', 'missing'] as const;
type Target = (typeof TARGETS)[number];
const TARGET_LABEL: Record<Target, string> = { A: "A's session", B: "B's session", missing: 'a missing session' };

/**
 * A cell: the HTTP status, or for the listing whether the session appears in it
 * (`listed`: 200 and present, `unlisted`: 200 and absent).
 */
type Cell = number | 'listed' | 'unlisted';
type Row = readonly [Cell, Cell, Cell];

const ENDPOINTS = [
  'POST /api/upload',
  'GET /api/download',
  'GET /api/share',
  'GET /share/',
  'GET /share/frame',
  'PUT /api/refresh',
  'GET /api/benchmark',
  'GET /api/sessions?session=',
  'GET /api/sessions',
  'GET /api/sessions?client_id=',
  'PATCH /api/sessions',
  'DELETE /api/sessions',
  'PATCH /api/remediation-update',
] as const;
type Endpoint = (typeof ENDPOINTS)[number];

// The tables below are aligned by hand, as tables: keep the columns when editing.
/**
 * The policy. Columns: A's session, B's session, a missing session.
 *
 * - POST /api/upload: a re-upload of the session's id (a replacement); for the missing
 *   column it creates the session. The file claims the column's client (A for missing);
 *   the key's client wins (docs/api.md#sessions). Session ids are unique per client (docs/api.md#ids-are-per-client): a key
 *   uploading another client's id creates its own client's session and leaves the other
 *   untouched; keys only, a missing or non-key credential is a 403 (docs/api.md#error-body-and-status-codes).
 * - GET /api/share, GET /share/ and GET /share/frame: the column says whose share token is in `?token=`
 *   (missing: a well-formed token no session has). The token is the credential (docs/api.md#sessions);
 *   headers change nothing.
 * - PUT /api/refresh: keys only, 401 without one (docs/api.md#error-body-and-status-codes).
 * - GET /api/benchmark: permission `benchmark` (business, msp), checked before the session (403 for proA everywhere).
 * - GET /api/sessions (listing, detail, client_id filter): identity JWT only (docs/api.md#sessions: decisions
 *   "Review status"); keys get 401. The client_id filter uses the column's client
 *   (missing: a client without sessions); a client outside the caller's scope is a 403.
 * - PATCH/DELETE /api/sessions: an in-scope JWT. A key never changes a review status (403 before any
 *   lookup); it deletes only a fresh, untriaged session it uploaded itself (keyA's and keyB's cells;
 *   another key of the client and the legacy key: 403). tests/session-key-limits.slow.test.ts has the rest.
 * - PATCH /api/remediation-update: identity JWT only, keys 401 (route doc), business and up.
 * - Everywhere: a session of a client out of scope is the same 404 as a missing session
 *   (docs/api.md#ids-are-per-client: which ids another client uses is never observable), no credential 401 (upload: 403).
 */
const MATRIX: Record<Endpoint, Record<Credential, Row>> = {
  //                                  A's        B's        missing
  'POST /api/upload': {
    keyA: [200, 200, 200],
    keyB: [200, 200, 200],
    proA: [200, 200, 200],
    legacy: [200, 200, 200],
    admin: [403, 403, 403],
    memberA: [403, 403, 403],
    none: [403, 403, 403],
  },
  'GET /api/download': {
    keyA: [200, 404, 404],
    keyB: [404, 200, 404],
    proA: [200, 404, 404],
    legacy: [200, 200, 404],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
  'GET /api/share': {
    keyA: [200, 200, 404],
    keyB: [200, 200, 404],
    proA: [200, 200, 404],
    legacy: [200, 200, 404],
    admin: [200, 200, 404],
    memberA: [200, 200, 404],
    none: [200, 200, 404],
  },
  'GET /share/': {
    keyA: [200, 200, 404],
    keyB: [200, 200, 404],
    proA: [200, 200, 404],
    legacy: [200, 200, 404],
    admin: [200, 200, 404],
    memberA: [200, 200, 404],
    none: [200, 200, 404],
  },
  'GET /share/frame': {
    keyA: [200, 200, 404],
    keyB: [200, 200, 404],
    proA: [200, 200, 404],
    legacy: [200, 200, 404],
    admin: [200, 200, 404],
    memberA: [200, 200, 404],
    none: [200, 200, 404],
  },
  'PUT /api/refresh': {
    keyA: [200, 404, 404],
    keyB: [404, 200, 404],
    proA: [200, 404, 404],
    legacy: [200, 200, 404],
    admin: [401, 401, 401],
    memberA: [401, 401, 401],
    none: [401, 401, 401],
  },
  'GET /api/benchmark': {
    keyA: [200, 404, 404],
    keyB: [404, 200, 404],
    proA: [403, 403, 403],
    legacy: [200, 200, 404],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
  'GET /api/sessions?session=': {
    keyA: [401, 401, 401],
    keyB: [401, 401, 401],
    proA: [401, 401, 401],
    legacy: [401, 401, 401],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
  'GET /api/sessions': {
    keyA: [401, 401, 401],
    keyB: [401, 401, 401],
    proA: [401, 401, 401],
    legacy: [401, 401, 401],
    admin: ['listed', 'listed', 'unlisted'],
    memberA: ['listed', 'unlisted', 'unlisted'],
    none: [401, 401, 401],
  },
  'GET /api/sessions?client_id=': {
    keyA: [401, 401, 401],
    keyB: [401, 401, 401],
    proA: [401, 401, 401],
    legacy: [401, 401, 401],
    admin: ['listed', 'listed', 'unlisted'],
    memberA: ['listed', 403, 403],
    none: [401, 401, 401],
  },
  'PATCH /api/sessions': {
    keyA: [403, 403, 403],
    keyB: [403, 403, 403],
    proA: [403, 403, 403],
    legacy: [403, 403, 403],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
  'DELETE /api/sessions': {
    keyA: [200, 404, 404],
    keyB: [404, 200, 404],
    proA: [403, 404, 404],
    legacy: [403, 403, 404],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
  'PATCH /api/remediation-update': {
    keyA: [401, 401, 401],
    keyB: [401, 401, 401],
    proA: [401, 401, 401],
    legacy: [401, 401, 401],
    admin: [200, 200, 404],
    memberA: [200, 404, 404],
    none: [401, 401, 401],
  },
};

/**
 * A share token opens one session, read-only (docs/api.md#sessions; docs/decisions.md#download-and-share-summary: another
 * session's token gets the same 404 as a missing session; a key or JWT sent with a token
 * decides on its own). Columns: whose token is in `?token=`: the token of the session in
 * the request ("own"; for A's session that is A's token), the other fixture session's
 * token, a well-formed token no session has.
 */
const SHARE_TOKEN_REQUESTS = [
  "GET /api/download A's session, no header",
  "GET /api/download B's session, no header",
  'GET /api/download a missing session, no header',
  "GET /api/download A's session, key of B",
  "GET /api/download B's session, member of A",
  "GET /api/download A's session, key of A",
  "GET /api/benchmark A's session, no header",
  "GET /api/sessions?session= A's session, no header",
  "PATCH /api/sessions A's session, no header",
  "DELETE /api/sessions A's session, no header",
  "PUT /api/refresh A's session, no header",
] as const;
type ShareTokenRequest = (typeof SHARE_TOKEN_REQUESTS)[number];

const SHARE_TOKEN_MATRIX: Record<ShareTokenRequest, Row> = {
  //                                                      own token  other's    unknown
  "GET /api/download A's session, no header": [200, 404, 404],
  "GET /api/download B's session, no header": [200, 404, 404],
  'GET /api/download a missing session, no header': [404, 404, 404],
  "GET /api/download A's session, key of B": [404, 404, 404],
  "GET /api/download B's session, member of A": [404, 404, 404],
  "GET /api/download A's session, key of A": [200, 200, 200],
  // Only download takes a token: elsewhere `token` is an unknown query parameter (400,
  // before any lookup) or the route's key check answers first (refresh: 401).
  "GET /api/benchmark A's session, no header": [400, 400, 400],
  "GET /api/sessions?session= A's session, no header": [401, 401, 401],
  "PATCH /api/sessions A's session, no header": [400, 400, 400],
  "DELETE /api/sessions A's session, no header": [400, 400, 400],
  "PUT /api/refresh A's session, no header": [401, 401, 401],
};

// ---- how each cell runs -----------------------------------------------------------------

const MUTATING = new Set<Endpoint>([
  'POST /api/upload',
  'PUT /api/refresh',
  'PATCH /api/sessions',
  'DELETE /api/sessions',
  'PATCH /api/remediation-update',
]);

const CLIENT_A = 'A';
const CLIENT_B = 'B';
const CLIENT_NAME: Record<string, string> = { [CLIENT_A]: 'Alpha Water District', [CLIENT_B]: 'Beta Power Coop' };
const CLIENT_TARGET: Record<string, string> = { [CLIENT_A]: 'alpha.example', [CLIENT_B]: 'beta.example' };
/** A client id no session has, for the listing's client_id filter. */
const CLIENT_NOBODY = 'Z';
const REPORT = (label: string) =>
  `<!doctype html><html><body><h1>Report ${label}</h1><div id="consultation-section" class="consultation-section"><button id="scheduleBtn">Book</button></div></body></html>`;
const LOG = 'stage nmap ok\n';
/** An entry of session-complete.json's `.remediation[]`, status `new`. */
const REMEDIATION_TITLE = 'SMBv1 enabled';

interface SessionRef {
  id: string;
  /** Its share token; for a missing session, a well-formed token no session has. */
  token: string;
  /** The client the session belongs to; null when it does not exist. */
  owner: string | null;
  /** Its target (a cell's fresh session scans one of its own: findings of record belong to a target). */
  target?: string;
}

const unknownToken = () => randomBytes(32).toString('hex');

/** The scanner's session file for `owner`, based on the complete fixture (it has remediation entries). */
function docFor(id: string, owner: string, overrides: { target?: string; risk?: number } = {}): Doc {
  const doc = sessionDoc('session-complete.json', id);
  doc['metadata']['client_id'] = owner;
  doc['metadata']['client'] = CLIENT_NAME[owner] ?? owner;
  doc['metadata']['target'] = overrides.target ?? CLIENT_TARGET[owner] ?? 'other.example';
  if (overrides.risk !== undefined) doc['summary']['risk_score'] = overrides.risk;
  return doc;
}

type Snapshot = {
  row: Record<string, unknown> | null;
  token: string | null;
  history: unknown[];
  notes: unknown[];
  audit: unknown[];
  blobs: string[];
  tmp: string[];
};

describe('tenant isolation: every session endpoint × credential × session', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let keyA: LicenseFixture;
  let keyB: LicenseFixture;
  let proA: LicenseFixture;
  let memberA: ScopedUser;
  /** The read-only fixtures; no cell changes them. */
  const fixtures = {} as Record<'A' | 'B', SessionRef>;
  const missing: SessionRef = { id: newSessionId(), token: unknownToken(), owner: null };
  let initialFixtures: Record<'A' | 'B', Snapshot>;
  const events: DomainEvent[] = [];
  let unsubscribe: () => void = () => undefined;

  const headersOf = (cred: Credential): Record<string, string> => {
    switch (cred) {
      case 'keyA':
        return withKey(keyA.key);
      case 'keyB':
        return withKey(keyB.key);
      case 'proA':
        return withKey(proA.key);
      case 'legacy':
        return withKey(LEGACY_KEY);
      case 'admin':
        return withToken(admin);
      case 'memberA':
        return withToken(memberA.token);
      case 'none':
        return {};
    }
  };
  /** The client a credential writes as; null for the unscoped legacy key and for non-keys. */
  const clientOfKey = (cred: Credential): string | null =>
    cred === 'keyA' || cred === 'proA' ? CLIENT_A : cred === 'keyB' ? CLIENT_B : null;

  async function upload(key: string, doc: Doc, label: string): Promise<SessionRef> {
    const res = await postUpload(portal.url, key, sessionParts(doc, { log: LOG, report: REPORT(label) }));
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${res.text}`);
    return {
      id: res.body.session_id as string,
      token: res.body.share_token as string,
      owner: doc['metadata']['client_id'] as string,
      target: doc['metadata']['target'] as string,
    };
  }

  /** A session of its own for one cell that changes things: uploaded with the owner's key. */
  const freshSession = (owner: 'A' | 'B'): Promise<SessionRef> => {
    const id = newSessionId();
    const client = owner === 'A' ? CLIENT_A : CLIENT_B;
    return upload(
      owner === 'A' ? keyA.key : keyB.key,
      docFor(id, client, { target: `${CLIENT_TARGET[client]}/${id}` }),
      `fresh ${owner}`,
    );
  };

  /** The session `id` of `client` (docs/api.md#ids-are-per-client: ids are per client); null: whichever client has it. */
  async function snapshot(id: string, client: string | null): Promise<Snapshot> {
    const q = async (sql: string) => (await db.query(sql, [id, client])).rows;
    const ofClient = '($2::text IS NULL OR client_id = $2)';
    const [rows, tokens, history, notes, audit, blobs, tmp] = await Promise.all([
      q(`SELECT * FROM sessions WHERE session_id = $1 AND ${ofClient}`),
      q(`SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1 AND ${ofClient}`),
      q(`SELECT * FROM status_history WHERE session_id = $1 AND ${ofClient} ORDER BY id`),
      q(`SELECT * FROM session_notes WHERE session_id = $1 AND ${ofClient} ORDER BY id`),
      q(`SELECT * FROM audit_events WHERE session_id = $1 AND ${ofClient} ORDER BY id`),
      blobObjects(portal.dataDir),
      blobTmp(portal.dataDir),
    ]);
    return {
      row: (rows[0] as Record<string, unknown> | undefined) ?? null,
      // Stored as a hash and a sealed copy (sessions/share-seal.ts): the token it holds.
      token: tokens[0] === undefined ? null : portal.ctx.shareTokens.open(tokens[0] as StoredShareToken),
      history,
      notes,
      audit,
      blobs,
      tmp,
    };
  }

  const versionOf = (s: Snapshot) => Number(s.row?.['version']);
  const filesOf = (s: Snapshot) => (s.row?.['files'] ?? {}) as Record<string, { key: string }>;

  /** Whatever a refusal says, it must not describe the session. */
  function expectSaysNothing(res: HttpResult, s: SessionRef) {
    expect(typeof res.body?.error, res.text).toBe('string');
    if (s.owner !== null) {
      expect(res.text).not.toContain(CLIENT_NAME[s.owner]!);
      expect(res.text).not.toContain(CLIENT_TARGET[s.owner]!);
    }
    expect(res.text).not.toContain(s.token);
  }

  beforeAll(async () => {
    portal = await startTestPortal();
    db = await openDb(portal);
    admin = await portal.adminToken();
    keyA = await createLicense(portal, { tier: 'business', client_id: CLIENT_A, name: 'A business' });
    keyB = await createLicense(portal, { tier: 'business', client_id: CLIENT_B, name: 'B business' });
    proA = await createLicense(portal, { tier: 'professional', client_id: CLIENT_A, name: 'A professional' });
    memberA = await createScopedUser(portal, [CLIENT_A]);
    fixtures.A = await upload(keyA.key, docFor(newSessionId(), CLIENT_A), 'fixture A');
    fixtures.B = await upload(keyB.key, docFor(newSessionId(), CLIENT_B), 'fixture B');
    initialFixtures = { A: await snapshot(fixtures.A.id, CLIENT_A), B: await snapshot(fixtures.B.id, CLIENT_B) };
    unsubscribe = portal.ctx.events.subscribe((e) => void events.push(e));
  });
  afterAll(async () => {
    unsubscribe();
    await db?.end();
    await portal?.close();
    if (portal) await fs.rm(portal.dataDir, { recursive: true, force: true });
  });

  /** One request of `endpoint` for session `s` with credential `cred`. */
  async function send(endpoint: Endpoint, cred: Credential, s: SessionRef, target: Target): Promise<HttpResult> {
    const h = headersOf(cred);
    const sid = encodeURIComponent(s.id);
    switch (endpoint) {
      case 'POST /api/upload': {
        // The file claims the column's client; for a missing id, A.
        const doc = docFor(s.id, s.owner ?? CLIENT_A, s.target === undefined ? {} : { target: s.target });
        const key = h['x-api-key'] ?? null;
        const res = await postUpload(
          portal.url,
          key,
          sessionParts(doc, { log: 'replacement log\n', report: REPORT('replacement') }),
          key === null ? h : {},
        );
        return { status: res.status, headers: new Headers(), body: res.body, text: res.text };
      }
      case 'GET /api/download':
        return http(portal.url, 'GET', `/api/download?session=${sid}&file=session_results.json`, { headers: h });
      case 'GET /api/share':
        return http(portal.url, 'GET', `/api/share?token=${s.token}`, { headers: h });
      case 'GET /share/':
        return http(portal.url, 'GET', `/share/?token=${s.token}`, { headers: h });
      case 'GET /share/frame':
        return http(portal.url, 'GET', `/share/frame?token=${s.token}&file=report.html`, { headers: h });
      case 'PUT /api/refresh':
        return http(portal.url, 'PUT', `/api/refresh?session=${sid}&file=report.html`, {
          headers: { ...h, 'content-type': 'text/html' },
          body: REPORT(`refreshed by ${cred}`),
        });
      case 'GET /api/benchmark':
        return http(portal.url, 'GET', `/api/benchmark?session=${sid}`, { headers: h });
      case 'GET /api/sessions?session=':
        return http(portal.url, 'GET', `/api/sessions?session=${sid}`, { headers: h });
      case 'GET /api/sessions':
        return http(portal.url, 'GET', '/api/sessions?limit=200', { headers: h });
      case 'GET /api/sessions?client_id=': {
        const client = target === 'missing' ? CLIENT_NOBODY : s.owner!;
        return http(portal.url, 'GET', `/api/sessions?limit=200&client_id=${client}`, { headers: h });
      }
      case 'PATCH /api/sessions':
        return http(portal.url, 'PATCH', `/api/sessions?session=${sid}`, {
          headers: h,
          json: { status: 'in_review', note: `by ${cred}` },
        });
      case 'DELETE /api/sessions':
        return http(portal.url, 'DELETE', `/api/sessions?session=${sid}`, { headers: h });
      case 'PATCH /api/remediation-update':
        return http(portal.url, 'PATCH', '/api/remediation-update', {
          headers: h,
          json: { session_id: s.id, items: [{ title: REMEDIATION_TITLE, status: 'in_progress' }] },
        });
    }
  }

  /** Every session id of the listing, page by page. */
  async function listAll(
    firstPage: HttpResult,
    query: string,
    cred: Credential,
  ): Promise<{ session_id: string; client_id: string | null }[]> {
    const seen: { session_id: string; client_id: string | null }[] = [...firstPage.body.sessions];
    let cursor: string | null = firstPage.body.next_cursor;
    while (cursor !== null) {
      const res = await http(
        portal.url,
        'GET',
        `/api/sessions?limit=200${query}&cursor=${encodeURIComponent(cursor)}`,
        { headers: headersOf(cred) },
      );
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.sessions);
      cursor = res.body.next_cursor;
    }
    return seen;
  }

  /** What a successful read must show: the session asked for, and nothing of another tenant. */
  function expectRead(endpoint: Endpoint, res: HttpResult, s: SessionRef) {
    switch (endpoint) {
      case 'GET /api/download':
        expect(res.body.metadata.session_id).toBe(s.id);
        expect(res.body.metadata.client_id).toBe(s.owner);
        break;
      case 'GET /api/share':
        expect(res.body.session_id).toBe(s.id);
        expect(res.body.client).toBe(CLIENT_NAME[s.owner!]);
        expect(res.body).not.toHaveProperty('client_id');
        break;
      case 'GET /share/':
        // The portal's page: the label names the session's client, the report is framed.
        expect(res.headers.get('content-type')).toContain('text/html');
        expect(res.text).toContain(`uploaded by ${CLIENT_NAME[s.owner!]}`);
        expect(res.text).toContain(`frame?token=${s.token}&amp;file=report.html`);
        break;
      case 'GET /share/frame':
        expect(res.headers.get('content-type')).toContain('text/html');
        expect(res.text).toContain(`Report fixture ${s.owner}`);
        break;
      case 'GET /api/benchmark':
        expect(res.body.session_id).toBe(s.id);
        break;
      case 'GET /api/sessions?session=':
        expect(res.body.session.session_id).toBe(s.id);
        expect(res.body.session.client_id).toBe(s.owner);
        break;
      default:
        break;
    }
  }

  /** What a successful change must have done. */
  async function expectChanged(
    endpoint: Endpoint,
    cred: Credential,
    res: HttpResult,
    s: SessionRef,
    before: Snapshot,
    after: Snapshot,
    published: DomainEvent[],
  ) {
    const types = published.map((e) => e.event_type);
    switch (endpoint) {
      case 'POST /api/upload': {
        expect(res.body.session_id).toBe(s.id);
        // The key's client wins over the file's; the legacy key keeps the file's.
        const expectedClient = clientOfKey(cred) ?? s.owner ?? CLIENT_A;
        if (s.owner !== null && expectedClient !== s.owner) {
          // docs/api.md#ids-are-per-client: the same id under another client is another session: this client's new
          // one, with a token of its own; the owner's session is exactly as it was.
          expect({ ...after, blobs: [], tmp: [] }).toEqual({ ...before, blobs: [], tmp: [] });
          const mine = await snapshot(s.id, expectedClient);
          expect(mine.row?.['client_id']).toBe(expectedClient);
          expect(res.body.message).toBe('Session uploaded');
          expect(res.body.share_token).toBe(mine.token);
          expect(res.body.share_token).not.toBe(s.token);
          expect(published.map((e) => [e.event_type, e.client_id])).toEqual([['scan_completed', expectedClient]]);
          await http(portal.url, 'DELETE', `/api/sessions?session=${s.id}`, {
            headers: withKey(expectedClient === CLIENT_A ? keyA.key : keyB.key),
          });
          break;
        }
        expect(after.row?.['client_id']).toBe(expectedClient);
        if (s.owner !== null) {
          expect(res.body.message).toBe('Session replaced');
          expect(versionOf(after)).toBe(versionOf(before) + 1);
          expect(after.token).toBe(before.token);
          expect(res.body.share_token).toBe(before.token);
          expect(after.row?.['status']).toBe(before.row?.['status']);
        } else {
          expect(res.body.message).toBe('Session uploaded');
          expect(before.row).toBeNull();
        }
        expect(types).toEqual(['scan_completed']);
        break;
      }
      case 'PUT /api/refresh':
        expect(versionOf(after)).toBe(versionOf(before) + 1);
        expect(filesOf(after)['report.html']?.key).not.toBe(filesOf(before)['report.html']?.key);
        expect(filesOf(after)['session_results.json']).toEqual(filesOf(before)['session_results.json']);
        expect(after.row?.['status']).toBe(before.row?.['status']);
        expect(types).toEqual([]);
        break;
      case 'PATCH /api/sessions':
        expect(res.body.changed).toBe(true);
        expect(after.row?.['status']).toBe('in_review');
        expect(after.history).toHaveLength(before.history.length + 1);
        expect(filesOf(after)).toEqual(filesOf(before));
        expect(types).toEqual(['status_changed']);
        break;
      case 'DELETE /api/sessions':
        expect(after.row).toBeNull();
        expect(after.token).toBeNull();
        for (const { key } of Object.values(filesOf(before))) expect(after.blobs).not.toContain(key);
        expect(types).toEqual(['session_deleted']);
        break;
      case 'PATCH /api/remediation-update': {
        expect(res.body.changed).toBe(1);
        // Made on the findings of record: the stored file and row stay the scan's evidence.
        expect(after.row).toEqual(before.row);
        const served = await http(portal.url, 'GET', `/api/download?session=${s.id}&client_id=${s.owner}`, {
          headers: withToken(admin),
        });
        expect(
          JSON.parse(served.text).remediation.filter((e: Record<string, unknown>) => e['title'] === REMEDIATION_TITLE),
        ).toEqual([expect.objectContaining({ status: 'in_progress', status_source: 'person' })]);
        expect(types).toEqual(['remediation_updated']);
        break;
      }
      default:
        throw new Error(`${endpoint} does not change anything`);
    }
  }

  interface MatrixCell {
    cred: Credential;
    target: Target;
    session: string;
    expected: Cell;
  }
  const cellsOf = (endpoint: Endpoint): MatrixCell[] =>
    CREDENTIALS.flatMap((cred) =>
      TARGETS.map((target, i) => ({
        cred,
        target,
        session: TARGET_LABEL[target],
        expected: MATRIX[endpoint][cred][i]!,
      })),
    );

  describe.each(ENDPOINTS.map((endpoint) => ({ endpoint })))('$endpoint', ({ endpoint }) => {
    it.each(cellsOf(endpoint))('$cred on $session → $expected', async ({ cred, target, expected }) => {
      const mutating = MUTATING.has(endpoint);
      const s: SessionRef =
        target === 'missing'
          ? mutating
            ? { id: newSessionId(), token: unknownToken(), owner: null }
            : missing
          : mutating
            ? await freshSession(target)
            : fixtures[target];

      const before = await snapshot(s.id, s.owner);
      const firstEvent = events.length;
      const res = await send(endpoint, cred, s, target);
      await portal.ctx.events.drain();
      const published = events.slice(firstEvent).filter((e) => e.session_id === s.id);

      if (expected === 'listed' || expected === 'unlisted') {
        expect(res.status, res.text).toBe(200);
        const query =
          endpoint === 'GET /api/sessions?client_id='
            ? `&client_id=${target === 'missing' ? CLIENT_NOBODY : s.owner!}`
            : '';
        const listed = await listAll(res, query, cred);
        expect(listed.some((x) => x.session_id === s.id)).toBe(expected === 'listed');
        // A scoped caller sees only its own clients, whatever the filter.
        if (cred === 'memberA') for (const x of listed) expect(x.client_id).toBe(CLIENT_A);
        if (endpoint === 'GET /api/sessions?client_id=')
          for (const x of listed) expect(x.client_id).toBe(target === 'missing' ? CLIENT_NOBODY : s.owner);
        return;
      }

      expect(res.status, res.text).toBe(expected);
      const after = await snapshot(s.id, s.owner);
      if (expected >= 200 && expected < 300) {
        if (mutating) await expectChanged(endpoint, cred, res, s, before, after, published);
        else {
          expectRead(endpoint, res, s);
          expect(after).toEqual(before);
        }
        return;
      }
      // A refusal: it says nothing about the session and leaves no trace.
      if (endpoint === 'GET /share/' || endpoint === 'GET /share/frame') expect(res.text).not.toContain(s.id);
      else expectSaysNothing(res, s);
      expect(after).toEqual(before);
      expect(published).toEqual([]);
    });
  });

  describe('share tokens open one session, read-only', () => {
    interface TokenCell {
      request: ShareTokenRequest;
      column: string;
      index: number;
      expected: number;
    }
    const COLUMNS = ['its own token', "the other session's token", 'an unknown token'];
    const cells: TokenCell[] = SHARE_TOKEN_REQUESTS.flatMap((request) =>
      COLUMNS.map((column, index) => ({
        request,
        column,
        index,
        expected: SHARE_TOKEN_MATRIX[request][index] as number,
      })),
    );

    it.each(cells)('$request, with $column → $expected', async ({ request, index, expected }) => {
      const [method, rawPath] = request.split(' ') as [string, string];
      const path = rawPath.replace('?session=', '');
      const mutating = method !== 'GET';
      const s: SessionRef = request.includes('a missing session')
        ? missing
        : request.includes("B's session")
          ? fixtures.B
          : mutating
            ? await freshSession('A')
            : fixtures.A;
      const other = s === fixtures.B ? fixtures.A : fixtures.B;
      // For a missing session, "its own token" is a token of an existing session (A's).
      const token = [s.owner === null ? fixtures.A.token : s.token, other.token, unknownToken()][index]!;
      const headers = request.endsWith('key of B')
        ? withKey(keyB.key)
        : request.endsWith('member of A')
          ? withToken(memberA.token)
          : request.endsWith('key of A')
            ? withKey(keyA.key)
            : {};
      const query = `session=${encodeURIComponent(s.id)}&token=${token}`;

      const before = await snapshot(s.id, s.owner);
      const firstEvent = events.length;
      const res =
        path === '/api/download'
          ? await http(portal.url, 'GET', `/api/download?${query}&file=session_results.json`, { headers })
          : path === '/api/refresh'
            ? await http(portal.url, 'PUT', `/api/refresh?${query}&file=report.html`, {
                headers: { ...headers, 'content-type': 'text/html' },
                body: REPORT('by a token holder'),
              })
            : path === '/api/sessions' && method === 'PATCH'
              ? await http(portal.url, 'PATCH', `/api/sessions?${query}`, { headers, json: { status: 'archived' } })
              : await http(portal.url, method, `${path}?${query}`, { headers });
      await portal.ctx.events.drain();

      expect(res.status, res.text).toBe(expected);
      const after = await snapshot(s.id, s.owner);
      expect(after).toEqual(before);
      expect(events.slice(firstEvent).filter((e) => e.session_id === s.id)).toEqual([]);
      if (expected === 200) expect(res.body.metadata.session_id).toBe(s.id);
      else expectSaysNothing(res, s);
    });
  });

  /**
   * docs/api.md#sessions: "no other tenant's data is revealed"; decisions "Benchmark": "a percentile needs
   * at least 3 peers with the metric, so no single tenant's figure can be inferred". Here
   * B is the only other tenant in the portal, so whatever A's benchmark says must not
   * depend on B's figures: change only B's session and A's answer must stay the same.
   */
  describe('benchmark', () => {
    it("a key of A learns nothing about B's risk score when B is the only other tenant", async () => {
      const clients = (await db.query('SELECT DISTINCT client_id FROM sessions ORDER BY client_id')).rows.map(
        (r) => r.client_id as string,
      );
      expect(clients).toEqual([CLIENT_A, CLIENT_B]);

      // A's probe, on a target of its own; A's other targets are its own, known to A.
      const probe = await upload(
        keyA.key,
        docFor(newSessionId(), CLIENT_A, { target: 'probe.example', risk: 70 }),
        'probe',
      );
      await upload(keyA.key, docFor(newSessionId(), CLIENT_A, { target: 'own.example', risk: 0 }), 'own');
      // B's session on a target of its own, first above A's probe, then (same id, replaced) below it.
      const victimId = newSessionId();
      await upload(keyB.key, docFor(victimId, CLIENT_B, { target: 'victim.example', risk: 80 }), 'victim high');
      const bench = async () => {
        const res = await http(portal.url, 'GET', `/api/benchmark?session=${probe.id}`, { headers: withKey(keyA.key) });
        expect(res.status, res.text).toBe(200);
        const { percentile, label, sample_size } = res.body.metrics.risk_score as {
          percentile: number;
          label: string;
          sample_size: number;
        };
        return { percentile, label, sample_size };
      };
      const whenHigh = await bench();
      await upload(keyB.key, docFor(victimId, CLIENT_B, { target: 'victim.example', risk: 60 }), 'victim low');
      const whenLow = await bench();
      expect(
        whenLow,
        `A's answer moved from ${JSON.stringify(whenHigh)} to ${JSON.stringify(whenLow)} when only B's risk score changed`,
      ).toEqual(whenHigh);
    });
  });

  it('no cell changed the fixture sessions the read cells use', async () => {
    for (const t of ['A', 'B'] as const) {
      const now = await snapshot(fixtures[t].id, fixtures[t].owner);
      expect({ ...now, blobs: [], tmp: [] }).toEqual({ ...initialFixtures[t], blobs: [], tmp: [] });
      for (const { key } of Object.values(filesOf(now))) expect(now.blobs).toContain(key);
    }
    expect(await blobTmp(portal.dataDir)).toEqual([]);
  });
});
