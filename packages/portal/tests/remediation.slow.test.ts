import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REMEDIATION_STATUSES, type RemediationStatus, type RemediationSummary } from '@svc/protocol';
import { BlobNotFoundError } from '../src/blobs/store.ts';
import type { AppContext } from '../src/context.ts';
import { DomainError } from '../src/domain/errors.ts';
import { httpErrorOf } from '../src/http/errors.ts';
import { remediationSummaryOf } from '../src/sessions/derive.ts';
import { REMEDIATION_CONFLICT_MESSAGE, updateRemediation } from '../src/sessions/remediation.ts';
import { resolveUser } from '../src/auth/users.ts';
import {
  createLicense,
  createScopedUser,
  FakeClock,
  openDb,
  uniqueClientId,
  type LicenseFixture,
} from '../../../test-support/factories.ts';
import { http, withKey, withToken } from '../../../test-support/http.ts';
import { ADMIN_EMAIL, LEGACY_KEY, startTestPortal, type TestPortal } from '../../../test-support/portal.ts';

/**
 * PATCH /api/remediation-update (docs/api.md#sessions, "Remediation status
 * changes"; docs/api.md#sessions: the stored session_results.json reflects the
 * updates). Real portal, real PostgreSQL, real blob store.
 */

type Entry = Record<string, unknown>;
const OLD = '2025-01-01T00:00:00.000Z';

function entry(title: string, severity: string, status: string, extra: Entry = {}): Entry {
  return {
    title,
    severity,
    status,
    status_changed: OLD,
    note: '',
    first_seen: '20250101_000000',
    prior_status: null,
    exception_status: null,
    ...extra,
  };
}

function sessionDoc(sessionId: string, clientId: string, remediation: Entry[], resolved: Entry[]): Entry {
  return {
    metadata: {
      session_id: sessionId,
      client_id: clientId,
      client: 'Acme',
      target: '10.0.0.0/24',
      tool_version: '4.2.3',
    },
    summary: { risk_score: 42, risk_grade: 'C', total_findings: 3, total_hosts: 2 },
    findings: [{ title: 'A', severity: 'critical', host: '10.0.0.1' }],
    remediation,
    remediation_resolved: resolved,
  };
}

let counter = 0;
const newSessionId = () => `20250304_${String(100000 + counter++).slice(-6)}_${Math.random().toString(36).slice(2, 8)}`;

const summary = (
  by_status: Partial<RemediationSummary['by_status']>,
  by_severity: Partial<RemediationSummary['by_severity']>,
): RemediationSummary => {
  const s = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0, ...by_status };
  return {
    total: Object.values(s).reduce((a, b) => a + b, 0),
    resolved_count: s.resolved,
    by_status: s,
    by_severity: { critical: 0, high: 0, medium: 0, low: 0, info: 0, ...by_severity },
  };
};

describe('PATCH /api/remediation-update', () => {
  const clock = new FakeClock();
  let portal: TestPortal;
  let admin: string;
  let db: pg.Client;
  let acme: LicenseFixture;

  async function upload(key: string, doc: Entry, extra: Record<string, string> = {}): Promise<string> {
    const form = new FormData();
    form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
    for (const [field, text] of Object.entries(extra))
      form.append(field, new Blob([text], { type: 'text/plain' }), field);
    const res = await fetch(`${portal.url}/api/upload`, { method: 'POST', headers: withKey(key), body: form });
    const body = (await res.json()) as { session_id?: string; error?: string };
    if (res.status !== 200 || !body.session_id) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
    return body.session_id;
  }

  const patch = (token: string | null, body: unknown, headers: Record<string, string> = {}) =>
    http(portal.url, 'PATCH', '/api/remediation-update', {
      headers: { ...(token === null ? {} : withToken(token)), ...headers },
      json: body,
    });

  async function row(sessionId: string) {
    const r = await db.query(
      'SELECT client_id, version, files, metadata, updated_at FROM sessions WHERE session_id = $1',
      [sessionId],
    );
    return r.rows[0] as {
      client_id: string;
      version: number;
      files: Record<string, { key: string; size: number; sha256: string; content_type: string }>;
      metadata: any;
      updated_at: Date;
    };
  }

  async function blobText(key: string): Promise<string> {
    const { stream } = await portal.ctx.blobs.get(key);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  /** The stored session file, read from the blob store through the row's reference. */
  async function storedDoc(sessionId: string): Promise<any> {
    return JSON.parse(await blobText((await row(sessionId)).files['session_results.json']!.key));
  }

  /** The same file through GET /api/download (docs/api.md#sessions: it reflects remediation updates). */
  async function downloadedDoc(sessionId: string): Promise<any> {
    const res = await http(portal.url, 'GET', `/api/download?session=${sessionId}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return typeof res.body === 'string' ? JSON.parse(res.body) : res.body;
  }

  async function auditEvents(sessionId: string) {
    return (
      await db.query(
        "SELECT actor, client_id, session_id, data FROM audit_events WHERE session_id = $1 AND event_type = 'remediation_updated' ORDER BY id",
        [sessionId],
      )
    ).rows;
  }

  /** Every object in the blob store, and every object some session row references. */
  async function blobInventory(): Promise<{ objects: string[]; referenced: string[]; tmp: string[] }> {
    const root = path.join(portal.dataDir, 'blobs');
    const objects = (await fs.readdir(path.join(root, 'objects'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => path.relative(path.join(root, 'objects'), path.join(e.parentPath, e.name)).split(path.sep).join('/'))
      .sort();
    const rows = (await db.query('SELECT files FROM sessions')).rows as { files: Record<string, { key: string }> }[];
    const referenced = rows.flatMap((r) => Object.values(r.files).map((f) => f.key)).sort();
    return { objects, referenced, tmp: await fs.readdir(path.join(root, 'tmp')) };
  }

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now });
    admin = await portal.adminToken();
    db = await openDb(portal);
    acme = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('acme') });
  });
  afterAll(async () => {
    await db?.end();
    await portal?.close();
  });
  beforeEach(() => {
    clock.set(new Date(Math.floor(Date.now() / 1000) * 1000));
  });

  function fourItems(sessionId: string) {
    return sessionDoc(
      sessionId,
      acme.record.client_id,
      [
        entry('A', 'critical', 'new'),
        entry('B', 'high', 'persistent', { exception_status: 'accepted', exception_reason: 'compensating control' }),
        entry('C', 'low', 'in_progress'),
      ],
      [entry('R', 'medium', 'resolved', { status_changed: '2025-02-01T00:00:00.000Z' })],
    );
  }

  it('moves items between the arrays both ways, updates in place, and stores the file, summary and audit event', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()), { pipeline_log: 'log line\n' });
    const before = await row(sessionId);
    expect(before.version).toBe(1);
    expect(before.metadata.remediation_summary).toEqual(
      summary({ new: 1, persistent: 1, in_progress: 1, resolved: 1 }, { critical: 1, high: 1, low: 1, medium: 1 }),
    );
    const oldKey = before.files['session_results.json']!.key;

    clock.advance(5_000);
    const T = clock.now().toISOString();
    const items = [
      { title: 'A', status: 'resolved' },
      { title: 'R', status: 'in_progress' },
      { title: 'B', status: 'deferred' },
      { title: 'C', status: 'in_progress' },
      { title: 'no such item', status: 'new' },
    ];
    const res = await patch(admin, { session_id: sessionId, items });
    expect(res.status, res.text).toBe(200);
    const expected = summary({ in_progress: 2, deferred: 1, resolved: 1 }, { critical: 1, high: 1, low: 1, medium: 1 });
    expect(res.body).toEqual({
      success: true,
      session_id: sessionId,
      changed: 3,
      remediation_summary: expected,
      unmatched: ['no such item'],
      results: items.map(({ title }) => ({ title, matched: title === 'no such item' ? 0 : 1 })),
    });

    const doc = await storedDoc(sessionId);
    expect(doc.remediation).toEqual([
      entry('B', 'high', 'deferred', {
        exception_status: 'accepted',
        exception_reason: 'compensating control',
        status_changed: T,
      }),
      entry('C', 'low', 'in_progress'),
      entry('R', 'medium', 'in_progress', { status_changed: T }),
    ]);
    expect(doc.remediation_resolved).toEqual([entry('A', 'critical', 'resolved', { status_changed: T })]);
    // Everything else in the file is as uploaded.
    const { remediation: _r, remediation_resolved: _rr, ...rest } = doc;
    const { remediation: _r0, remediation_resolved: _rr0, ...uploadedRest } = fourItems(sessionId);
    expect(rest).toEqual(uploadedRest);

    const after = await row(sessionId);
    expect(after.version).toBe(2);
    expect(after.updated_at.toISOString()).toBe(T);
    expect(after.metadata).toEqual({ ...before.metadata, remediation_summary: expected });
    // A new object, described truthfully; the old one is gone; the other files are untouched.
    const stored = after.files['session_results.json']!;
    expect(stored.key).not.toBe(oldKey);
    const text = await blobText(stored.key);
    expect(stored.size).toBe(Buffer.byteLength(text));
    expect(stored.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(stored.content_type).toBe('application/json');
    expect(after.files['pipeline.log']).toEqual(before.files['pipeline.log']);
    await expect(portal.ctx.blobs.get(oldKey)).rejects.toBeInstanceOf(BlobNotFoundError);

    const detail = await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) });
    expect(detail.status).toBe(200);
    expect(detail.body.session.remediation_summary).toEqual(expected);

    expect(await downloadedDoc(sessionId)).toEqual(doc);

    expect(await auditEvents(sessionId)).toEqual([
      {
        actor: ADMIN_EMAIL,
        client_id: acme.record.client_id,
        session_id: sessionId,
        data: {
          session_id: sessionId,
          changed: 3,
          items: items.map((i) => ({ ...i, matched: i.title === 'no such item' ? 0 : 1 })),
          remediation_summary: expected,
        },
      },
    ]);

    // Back again: resolved → open and open → resolved, in one request.
    clock.advance(5_000);
    const T2 = clock.now().toISOString();
    const back = await patch(admin, {
      session_id: sessionId,
      items: [
        { title: 'A', status: 'new' },
        { title: 'R', status: 'resolved' },
      ],
    });
    expect(back.status, back.text).toBe(200);
    const expected2 = summary(
      { new: 1, in_progress: 1, deferred: 1, resolved: 1 },
      { critical: 1, high: 1, low: 1, medium: 1 },
    );
    expect(back.body).toEqual({
      success: true,
      session_id: sessionId,
      changed: 2,
      remediation_summary: expected2,
      unmatched: [],
      results: [
        { title: 'A', matched: 1 },
        { title: 'R', matched: 1 },
      ],
    });
    const doc2 = await storedDoc(sessionId);
    expect(doc2.remediation).toEqual([
      entry('B', 'high', 'deferred', {
        exception_status: 'accepted',
        exception_reason: 'compensating control',
        status_changed: T,
      }),
      entry('C', 'low', 'in_progress'),
      entry('A', 'critical', 'new', { status_changed: T2 }),
    ]);
    expect(doc2.remediation_resolved).toEqual([entry('R', 'medium', 'resolved', { status_changed: T2 })]);
    expect((await row(sessionId)).version).toBe(3);
    expect((await row(sessionId)).metadata.remediation_summary).toEqual(expected2);
    const detail2 = await http(portal.url, 'GET', `/api/sessions?session=${sessionId}`, { headers: withToken(admin) });
    expect(detail2.body.session.remediation_summary).toEqual(expected2);
    expect(await downloadedDoc(sessionId)).toEqual(doc2);
    expect((await auditEvents(sessionId)).map((e) => e.data.changed)).toEqual([3, 2]);
  });

  it('the same statuses again change nothing: no new file, version or audit event', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()));
    const before = await row(sessionId);
    const res = await patch(admin, {
      session_id: sessionId,
      items: [
        { title: 'A', status: 'new' },
        { title: 'B', status: 'persistent' },
        { title: 'R', status: 'resolved' },
        { title: 'ghost', status: 'resolved' },
      ],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      success: true,
      session_id: sessionId,
      changed: 0,
      remediation_summary: before.metadata.remediation_summary,
      unmatched: ['ghost'],
      results: [
        { title: 'A', matched: 1 },
        { title: 'B', matched: 1 },
        { title: 'R', matched: 1 },
        { title: 'ghost', matched: 0 },
      ],
    });
    expect(await row(sessionId)).toEqual(before);
    expect(await auditEvents(sessionId)).toEqual([]);
  });

  it('a note is stored on the entry and does not count as a status change', async () => {
    const sessionId = await upload(acme.key, fourItems(newSessionId()));
    const res = await patch(admin, {
      session_id: sessionId,
      items: [{ title: 'C', status: 'in_progress', note: 'vendor patch due Friday' }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.changed).toBe(0);
    const doc = await storedDoc(sessionId);
    expect(doc.remediation[2]).toEqual(entry('C', 'low', 'in_progress', { note: 'vendor patch due Friday' }));
    expect((await row(sessionId)).version).toBe(2);
  });

  describe('validation', () => {
    let sessionId: string;
    beforeAll(async () => {
      sessionId = await upload(acme.key, fourItems(newSessionId()));
    });

    it.each([
      [
        'fixed',
        'Invalid status "fixed" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred',
      ],
      [
        'Resolved',
        'Invalid status "Resolved" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred',
      ],
      ['', 'Invalid status "" for items[1] ("B"): must be one of new, persistent, in_progress, resolved, deferred'],
    ])('status %j is a 400 naming it, and nothing is applied', async (status, message) => {
      const before = await row(sessionId);
      const res = await patch(admin, {
        session_id: sessionId,
        items: [
          { title: 'A', status: 'resolved' },
          { title: 'B', status },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
      expect(await row(sessionId)).toEqual(before);
    });

    it('a status of the wrong type is a 400', async () => {
      const res = await patch(admin, { session_id: sessionId, items: [{ title: 'A', status: 3 }] });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/status/);
    });

    it('a missing or malformed session_id is a 400', async () => {
      const missing = await patch(admin, { items: [{ title: 'A', status: 'new' }] });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatch(/session_id/);
      for (const bad of ['', '../etc', 'a/b', 'a b', 'x'.repeat(129), 'a%2e']) {
        const res = await patch(admin, { session_id: bad, items: [{ title: 'A', status: 'new' }] });
        expect(res.status, bad).toBe(400);
        expect(res.body.error, bad).toMatch(/session_id/);
      }
    });

    it('an unknown session is a 404', async () => {
      const res = await patch(admin, { session_id: '20990101_000000', items: [{ title: 'A', status: 'new' }] });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
    });

    it('items must be an array of 1 to 1000 {title, status} with a non-empty title', async () => {
      const bodies: unknown[] = [
        { session_id: sessionId },
        { session_id: sessionId, items: [] },
        { session_id: sessionId, items: {} },
        { session_id: sessionId, items: [{ title: '', status: 'new' }] },
        { session_id: sessionId, items: [{ status: 'new' }] },
        { session_id: sessionId, items: [{ title: 'A' }] },
        { session_id: sessionId, items: [{ title: 'A', status: 'new', extra: 1 }] },
        { session_id: sessionId, items: Array.from({ length: 1001 }, (_, i) => ({ title: `t${i}`, status: 'new' })) },
        { session_id: sessionId, items: [{ title: 'A', status: 'new' }], client: 'other' },
        { session_id: sessionId, items: [{ title: 'A', status: 'new' }], client_id: '../x' },
      ];
      for (const body of bodies) {
        const res = await patch(admin, body);
        expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
        expect(typeof res.body.error).toBe('string');
      }
      const thousand = await patch(admin, {
        session_id: sessionId,
        items: Array.from({ length: 1000 }, (_, i) => ({ title: `t${i}`, status: 'new' })),
      });
      expect(thousand.status).toBe(200);
      expect(thousand.body.unmatched).toHaveLength(1000);
    });
  });

  describe('credentials and scope', () => {
    let sessionId: string;
    const body = () => ({ session_id: sessionId, items: [{ title: 'A', status: 'in_progress' }] });
    beforeAll(async () => {
      sessionId = await upload(acme.key, fourItems(newSessionId()));
    });

    it('refuses requests without an identity JWT, keys included, with 401', async () => {
      const before = await row(sessionId);
      const attempts: Record<string, string>[] = [
        {},
        withKey(acme.key),
        withKey(LEGACY_KEY),
        { 'x-identity-token': 'not-a-jwt' },
        { authorization: `Bearer ${admin}` },
      ];
      for (const headers of attempts) {
        const res = await patch(null, body(), headers);
        expect(res.status, JSON.stringify(Object.keys(headers))).toBe(401);
        expect(res.body).toEqual({ error: 'Unauthorized' });
      }
      expect(await row(sessionId)).toEqual(before);
    });

    it('a scoped user of another client gets the same 404 as for a missing session', async () => {
      const other = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('other') });
      const user = await createScopedUser(portal, [other.record.client_id]);
      const before = await row(sessionId);
      const res = await patch(user.token, body());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Session not found' });
      expect(await row(sessionId)).toEqual(before);
    });

    it('a scoped user whose clients only have a professional key gets 403 naming the permission', async () => {
      const pro = await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('pro') });
      const proSession = await upload(
        pro.key,
        sessionDoc(newSessionId(), pro.record.client_id, [entry('A', 'high', 'new')], []),
      );
      const user = await createScopedUser(portal, [pro.record.client_id]);
      const before = await row(proSession);
      const res = await patch(user.token, { session_id: proSession, items: [{ title: 'A', status: 'resolved' }] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for remediation:update' });
      expect(await row(proSession)).toEqual(before);
      // The same user with a business key for its client may.
      await createLicense(portal, { tier: 'business', client_id: pro.record.client_id });
      const ok = await patch(user.token, { session_id: proSession, items: [{ title: 'A', status: 'resolved' }] });
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.changed).toBe(1);
    });

    it('an in-scope business user may; the audit actor is that user', async () => {
      const user = await createScopedUser(portal, [acme.record.client_id]);
      const res = await patch(user.token, body());
      expect(res.status, res.text).toBe(200);
      expect(res.body.changed).toBe(1);
      const events = await auditEvents(sessionId);
      expect(events.map((e) => [e.actor, e.client_id])).toEqual([[user.email, acme.record.client_id]]);
    });
  });

  describe('optimistic locking', () => {
    const STATUSES: RemediationStatus[] = ['persistent', 'in_progress', 'resolved', 'deferred'];
    const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
    const title = (i: number) => `item-${String(i).padStart(2, '0')}`;

    it('50 concurrent updates: every answer is 200 or 409, and exactly the accepted ones are stored, in commit order', async () => {
      const N = 50;
      const original = Array.from({ length: N }, (_, i) => entry(title(i), SEVERITIES[i % 5]!, 'new'));
      const sessionId = await upload(acme.key, sessionDoc(newSessionId(), acme.record.client_id, original, []));
      const target = (i: number) => STATUSES[i % STATUSES.length]!;

      const answers = await Promise.all(
        Array.from({ length: N }, (_, i) =>
          patch(admin, { session_id: sessionId, items: [{ title: title(i), status: target(i) }] }),
        ),
      );
      const accepted: number[] = [];
      for (const [i, res] of answers.entries()) {
        expect([200, 409], `${i}: ${res.text}`).toContain(res.status);
        if (res.status === 200) {
          accepted.push(i);
          expect(res.body.changed).toBe(1);
          expect(res.body.unmatched).toEqual([]);
        } else {
          expect(res.body).toEqual({ error: REMEDIATION_CONFLICT_MESSAGE });
        }
      }
      expect(accepted.length).toBeGreaterThanOrEqual(1);
      const isAccepted = new Set(accepted);

      // The stored file: accepted items carry their status (resolved ones moved), all others are untouched.
      const doc = await storedDoc(sessionId);
      const changedTitles = [
        ...doc.remediation.filter((e: Entry) => e['status'] !== 'new'),
        ...doc.remediation_resolved,
      ]
        .map((e: Entry) => e['title'])
        .sort();
      expect(changedTitles).toEqual(accepted.map(title).sort());
      for (let i = 0; i < N; i++) {
        const where = target(i) === 'resolved' && isAccepted.has(i) ? doc.remediation_resolved : doc.remediation;
        const found = where.filter((e: Entry) => e['title'] === title(i));
        expect(found, title(i)).toHaveLength(1);
        if (isAccepted.has(i))
          expect(found[0], title(i)).toEqual({
            ...original[i],
            status: target(i),
            status_changed: clock.now().toISOString(),
          });
        else expect(found[0], title(i)).toEqual(original[i]);
      }
      expect(doc.remediation.length + doc.remediation_resolved.length).toBe(N);

      // One version per accepted update; the row's summary is the file's.
      const after = await row(sessionId);
      expect(after.version).toBe(1 + accepted.length);
      expect(after.metadata.remediation_summary).toEqual(
        remediationSummaryOf(doc.remediation, doc.remediation_resolved),
      );
      const byStatus = Object.fromEntries(REMEDIATION_STATUSES.map((s) => [s, 0])) as Record<RemediationStatus, number>;
      for (let i = 0; i < N; i++) byStatus[isAccepted.has(i) ? target(i) : 'new']++;
      expect(after.metadata.remediation_summary.by_status).toEqual(byStatus);
      expect(await downloadedDoc(sessionId)).toEqual(doc);

      // Serialised: the k-th commit saw exactly the k-1 before it. Each accepted answer and each
      // audit event (in commit order) carries the summary after 1, 2, 3, ... changes.
      const open = (s: RemediationSummary) => N - s.by_status.new;
      expect(accepted.map((i) => open(answers[i]!.body.remediation_summary)).sort((a, b) => a - b)).toEqual(
        accepted.map((_, k) => k + 1),
      );
      const events = await auditEvents(sessionId);
      expect(events).toHaveLength(accepted.length);
      expect(events.map((e) => open(e.data.remediation_summary))).toEqual(accepted.map((_, k) => k + 1));
      expect(events.map((e) => e.data.items[0].title).sort()).toEqual(accepted.map(title).sort());
      // The last commit's summary is what is stored.
      expect(events.at(-1)!.data.remediation_summary).toEqual(after.metadata.remediation_summary);

      // Refused attempts and replaced versions left no objects behind.
      const inventory = await blobInventory();
      expect(inventory.objects).toEqual(inventory.referenced);
      expect(inventory.tmp).toEqual([]);
    });

    /** A context whose blob store lets a rival writer bump the row's version after each write of ours. */
    function rivalContext(sessionId: string, rivalWins: number, puts: string[]): AppContext {
      const ctx = portal.ctx;
      let wins = 0;
      return {
        ...ctx,
        blobs: {
          ...ctx.blobs,
          get: (key) => ctx.blobs.get(key),
          delete: (keys) => ctx.blobs.delete(keys),
          sweep: (f) => ctx.blobs.sweep(f),
          put: async (prefix, source) => {
            const put = await ctx.blobs.put(prefix, source);
            puts.push(put.key);
            if (wins++ < rivalWins)
              await db.query('UPDATE sessions SET version = version + 1 WHERE session_id = $1', [sessionId]);
            return put;
          },
        },
      };
    }

    it('gives up with 409 after 3 retries (4 attempts), leaving no trace', async () => {
      const sessionId = await upload(acme.key, fourItems(newSessionId()));
      const user = (await resolveUser(portal.ctx, admin))!;
      const before = await row(sessionId);
      const doc = await storedDoc(sessionId);
      const puts: string[] = [];
      const err = await updateRemediation(
        rivalContext(sessionId, Infinity, puts),
        user,
        { sessionId, clientId: undefined },
        [{ title: 'A', status: 'resolved' }],
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(httpErrorOf(err as DomainError).statusCode).toBe(409);
      expect((err as DomainError).message).toBe(REMEDIATION_CONFLICT_MESSAGE);
      expect(puts).toHaveLength(4);
      for (const key of puts) await expect(portal.ctx.blobs.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      const after = await row(sessionId);
      expect(after.version).toBe(before.version + 4); // The rival's bumps only
      expect(after.files).toEqual(before.files);
      expect(after.metadata).toEqual(before.metadata);
      expect(await storedDoc(sessionId)).toEqual(doc);
      expect(await auditEvents(sessionId)).toEqual([]);
    });

    it('succeeds on the last retry after losing three times', async () => {
      const sessionId = await upload(acme.key, fourItems(newSessionId()));
      const user = (await resolveUser(portal.ctx, admin))!;
      const before = await row(sessionId);
      const puts: string[] = [];
      const outcome = await updateRemediation(
        rivalContext(sessionId, 3, puts),
        user,
        { sessionId, clientId: undefined },
        [{ title: 'A', status: 'resolved' }],
      );
      expect(outcome.changed).toBe(1);
      expect(puts).toHaveLength(4);
      for (const key of puts.slice(0, 3))
        await expect(portal.ctx.blobs.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
      const after = await row(sessionId);
      expect(after.version).toBe(before.version + 4);
      expect(after.files['session_results.json']!.key).toBe(puts[3]);
      await expect(portal.ctx.blobs.get(before.files['session_results.json']!.key)).rejects.toBeInstanceOf(
        BlobNotFoundError,
      );
      expect((await storedDoc(sessionId)).remediation_resolved.map((e: Entry) => e['title'])).toEqual(['R', 'A']);
      expect(await auditEvents(sessionId)).toHaveLength(1);
    });
  });
});
