import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_HEALTH_TABLES } from '@svc/protocol';
import type { UserPrincipal } from '../src/auth/principal.ts';
import { databaseHealth } from '../src/operations/db-health.ts';
import {
  createLicense,
  createScopedUser,
  openDb,
  uniqueClientId,
  type LicenseFixture,
  type ScopedUser,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { ADMIN_EMAIL, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * GET /api/db-health (docs/api.md#operations): permission db:health (msp only, and admins),
 * the nine table names with real counts on a database only this file uses, the
 * database facts, recent activity and session statistics (scoped for members), and the
 * `neon_usage` storage block with and without SVC_STORAGE_LIMIT_MB.
 */

const MB = 1024 * 1024;
const round2 = (n: number) => Math.round(n * 100) / 100;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SPEC_TABLES = [
  'sessions',
  'session_notes',
  'status_history',
  'share_tokens',
  'agent_heartbeats',
  'agents',
  'webhook_subscriptions',
  'webhooks',
  'audit_events',
];

let ca: TestCa;
let receiver: HttpsReceiver;
let portal: TestPortal;
let db: pg.Client;
let admin: string;

const LIMIT_MB = 5000;

beforeAll(async () => {
  ca = await createTestCa();
  receiver = await HttpsReceiver.start(ca);
  portal = await startTestPortal({
    env: {
      SVC_STORAGE_LIMIT_MB: String(LIMIT_MB),
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: ca.caFile,
    },
  });
  db = await openDb(portal);
  admin = await portal.adminToken();
});
afterAll(async () => {
  await portal?.ctx.events.drain();
  await db?.end();
  await portal?.close();
  await receiver?.close();
  await ca?.cleanup();
});

const health = (token?: string) =>
  http(portal.url, 'GET', '/api/db-health', { headers: token === undefined ? {} : withToken(token) });
const count = async (sql: string) => (await db.query(`SELECT count(*)::int AS n FROM ${sql}`)).rows[0].n as number;

async function upload(lic: LicenseFixture, client: string, target: string, riskScore?: number): Promise<string> {
  const id = newSessionId();
  const doc = sessionDoc('session-complete.json', id);
  doc['metadata']['client'] = client;
  doc['metadata']['target'] = target;
  if (riskScore !== undefined) doc['summary']['risk_score'] = riskScore;
  const res = await postUpload(portal.url, lic.key, sessionParts(doc));
  expect(res.status, res.text).toBe(200);
  return id;
}

describe('GET /api/db-health', () => {
  let a: LicenseFixture;
  let b: LicenseFixture;
  const sessions: { a: string[]; b: string[] } = { a: [], b: [] };
  let mspMember: ScopedUser;

  beforeAll(async () => {
    a = await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('alpha') });
    b = await createLicense(portal, { tier: 'business', client_id: uniqueClientId('bravo') });
    sessions.a.push(await upload(a, 'Alpha Water', '10.1.0.0/24', 40));
    sessions.a.push(await upload(a, 'Alpha Water', '10.1.1.0/24', 55));
    sessions.b.push(await upload(b, 'Bravo Power', '10.2.0.0/24', 70));
    // Review status changes (status_history) with notes (session_notes).
    for (const [id, status] of [
      [sessions.a[0], 'in_review'],
      [sessions.b[0], 'resolved'],
    ] as const) {
      const res = await http(portal.url, 'PATCH', `/api/sessions?session=${id}`, {
        headers: withToken(admin),
        json: { status, note: `note for ${status}` },
      });
      expect(res.status, res.text).toBe(200);
    }
    // Three agents, one deregistered.
    for (const [lic, n] of [
      [a, 2],
      [b, 1],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const res = await http(portal.url, 'POST', '/api/health', {
          headers: withKey(lic.key),
          json: {
            agent_id: `svcd_dbh_${randomBytes(4).toString('hex')}`,
            version: '4.2.3',
            timestamp: new Date().toISOString(),
            status: 'running',
            uptime_seconds: 1,
          },
        });
        expect(res.status, res.text).toBe(200);
      }
    }
    const agentId = (await db.query('SELECT agent_id FROM agents WHERE client_id = $1 LIMIT 1', [b.record.client_id]))
      .rows[0].agent_id as string;
    expect(
      (
        await http(portal.url, 'PATCH', '/api/agents', {
          headers: withToken(admin),
          json: { agent_id: agentId, action: 'deregister' },
        })
      ).status,
    ).toBe(200);
    // Two subscriptions and three logged deliveries ("webhooks").
    const subs = [];
    for (const clientId of [a.record.client_id, null]) {
      const res = await http(portal.url, 'POST', '/api/webhooks', {
        headers: withToken(admin),
        json: { url: receiver.url(), event_types: ['agent_purged'], client_id: clientId },
      });
      expect(res.status, res.text).toBe(201);
      subs.push(res.body.subscription.id as string);
    }
    for (const id of [subs[0], subs[0], subs[1]])
      expect(
        (await http(portal.url, 'POST', `/api/webhooks/ping?id=${id}`, { headers: withToken(admin) })).body.delivery
          .status,
      ).toBe('succeeded');
    mspMember = await createScopedUser(portal, [a.record.client_id]);
    await portal.ctx.events.drain();
  });

  it('without a token is a 401; a fake one too', async () => {
    expect((await health()).status).toBe(401);
    const fake = await health('not.a.jwt');
    expect(fake.status).toBe(401);
    expect(fake.body).toEqual({ error: 'Unauthorized' });
  });

  it('business- and professional-tier members get 403 Insufficient permissions for db:health', async () => {
    const biz = await createScopedUser(portal, [b.record.client_id]);
    const proClient = (await createLicense(portal, { tier: 'professional', client_id: uniqueClientId('pro') })).record
      .client_id;
    const pro = await createScopedUser(portal, [proClient]);
    for (const u of [biz, pro]) {
      const res = await health(u.token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Insufficient permissions for db:health' });
    }
  });

  it('admin: 200 with exactly the keys and table_counts of exactly the nine documented tables, counted right', async () => {
    const res = await health(admin);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'database_info',
      'neon_usage',
      'recent_activity',
      'session_stats',
      'table_counts',
    ]);
    expect(Object.keys(res.body.table_counts).sort()).toEqual([...SPEC_TABLES].sort());
    expect([...DB_HEALTH_TABLES].sort()).toEqual([...SPEC_TABLES].sort());
    expect(res.body.table_counts).toEqual({
      sessions: 3,
      session_notes: 2,
      status_history: 2,
      share_tokens: 3,
      // One row per agent holds its latest heartbeat; "agents" are the registered ones.
      agent_heartbeats: 3,
      agents: 2,
      webhook_subscriptions: 2,
      // The delivery log.
      webhooks: 3,
      audit_events: await count('audit_events'),
    });
    // Uploads, status changes, agent events, licenses: all audited.
    expect(res.body.table_counts.audit_events).toBeGreaterThanOrEqual(3 + 2 + 3 + 1 + 3);
  });

  it('database_info describes this PostgreSQL (provider postgresql under DATABASE_URL)', async () => {
    const res = await health(admin);
    const info = res.body.database_info;
    expect(Object.keys(info).sort()).toEqual([
      'active_connections',
      'database_name',
      'host',
      'max_connections',
      'provider',
      'size_bytes',
      'size_human',
      'version',
    ]);
    const facts = (
      await db.query(
        "SELECT current_database() AS name, current_setting('server_version') AS version, current_setting('max_connections')::int AS max, pg_database_size(current_database())::bigint AS size",
      )
    ).rows[0];
    expect(info.provider).toBe('postgresql');
    expect(info.database_name).toBe(facts.name);
    expect(info.database_name).toBe(new URL(portal.databaseUrl).pathname.slice(1));
    expect(info.version).toBe(facts.version);
    expect(info.max_connections).toBe(facts.max);
    // The test cluster, like the embedded one, is reached through its Unix socket.
    expect(new URL(portal.databaseUrl).searchParams.get('host')).toMatch(/^\//);
    expect(info.host).toBe('local socket');
    expect(Number.isInteger(info.size_bytes) && info.size_bytes > 0).toBe(true);
    // Same order of magnitude as measured now (the database grows a little between the two reads).
    expect(Math.abs(info.size_bytes - Number(facts.size))).toBeLessThan(8 * MB);
    expect(info.size_human).toMatch(/^\d+(\.\d+)? (bytes|kB|MB|GB)$/);
    expect(Number.isInteger(info.active_connections) && info.active_connections >= 1).toBe(true);
  });

  it('database_info.host is the server address when the portal connects over TCP', async () => {
    const url = new URL(portal.databaseUrl);
    url.searchParams.delete('host');
    const tcp = await startTestPortal({ databaseUrl: url.toString() });
    try {
      const res = await http(tcp.url, 'GET', '/api/db-health', { headers: withToken(await tcp.adminToken()) });
      expect(res.status).toBe(200);
      expect(res.body.database_info.host).toBe('127.0.0.1');
    } finally {
      await tcp.close();
    }
  });

  it('recent_activity: newest audit events first, each {event_type, session_id, actor, data, created_at, timestamp}', async () => {
    const res = await health(admin);
    const items = res.body.recent_activity as Record<string, any>[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.length).toBeLessThanOrEqual(20);
    for (const e of items) {
      expect(Object.keys(e).sort()).toEqual(['actor', 'created_at', 'data', 'event_type', 'session_id', 'timestamp']);
      expect(e['created_at']).toMatch(ISO);
      expect(e['timestamp']).toBe(e['created_at']);
      expect(typeof e['data']).toBe('object');
    }
    const times = items.map((e) => Date.parse(e['created_at']));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    const latest = (
      await db.query(
        'SELECT event_type, session_id, actor, data, created_at FROM audit_events ORDER BY created_at DESC, id DESC LIMIT 1',
      )
    ).rows[0];
    expect(items[0]).toEqual({
      event_type: latest.event_type,
      session_id: latest.session_id,
      actor: latest.actor,
      data: latest.data,
      created_at: latest.created_at.toISOString(),
      timestamp: latest.created_at.toISOString(),
    });
    const change = items.find((e) => e['event_type'] === 'status_changed' && e['session_id'] === sessions.b[0]);
    expect(change).toMatchObject({ actor: ADMIN_EMAIL, data: { previous_status: 'new', new_status: 'resolved' } });
  });

  it('session_stats: by_status, by_client and recent_uploads (newest first)', async () => {
    const stats = (await health(admin)).body.session_stats;
    expect(Object.keys(stats).sort()).toEqual(['by_client', 'by_status', 'recent_uploads']);
    expect(stats.by_status).toEqual({ new: 1, in_review: 1, resolved: 1 });
    expect(stats.by_client).toEqual([
      { client_id: a.record.client_id, client: 'Alpha Water', count: 2 },
      { client_id: b.record.client_id, client: 'Bravo Power', count: 1 },
    ]);
    const uploads = stats.recent_uploads as Record<string, any>[];
    expect(uploads.map((u) => u['session_id'])).toEqual([sessions.b[0], sessions.a[1], sessions.a[0]]);
    const stored = (await db.query('SELECT uploaded_at FROM sessions WHERE session_id = $1', [sessions.b[0]])).rows[0]
      .uploaded_at as Date;
    expect(uploads[0]).toEqual({
      session_id: sessions.b[0],
      client_id: b.record.client_id,
      client: 'Bravo Power',
      target: '10.2.0.0/24',
      // Scored by its findings (the complete fixture's), as the listing shows it.
      risk_score: 75,
      risk_grade: 'D',
      uploaded_at: stored.toISOString(),
    });
    expect(uploads[2]).toMatchObject({
      session_id: sessions.a[0],
      client: 'Alpha Water',
      target: '10.1.0.0/24',
      risk_score: 75,
    });
  });

  it('an msp-tier member: 200, with recent_activity and session_stats restricted to its clients', async () => {
    const res = await health(mspMember.token);
    expect(res.status, res.text).toBe(200);
    const own = a.record.client_id;
    expect(res.body.session_stats.by_status).toEqual({ new: 1, in_review: 1 });
    expect(res.body.session_stats.by_client).toEqual([{ client_id: own, client: 'Alpha Water', count: 2 }]);
    expect(res.body.session_stats.recent_uploads.map((u: { session_id: string }) => u.session_id)).toEqual([
      sessions.a[1],
      sessions.a[0],
    ]);
    const activity = res.body.recent_activity as { session_id: string | null; data: Record<string, unknown> }[];
    expect(activity.length).toBeGreaterThan(0);
    const mine = (await db.query('SELECT id FROM audit_events WHERE client_id = $1', [own])).rows.length;
    expect(activity).toHaveLength(Math.min(20, mine));
    const foreign = new Set([...sessions.b, b.record.client_id]);
    for (const e of activity) {
      expect(foreign.has(e.session_id ?? '')).toBe(false);
      expect(JSON.stringify(e.data)).not.toContain(b.record.client_id);
    }
    // Counts and sizes are about the deployment, not a tenant's data.
    expect(Object.keys(res.body.table_counts).sort()).toEqual([...SPEC_TABLES].sort());
  });

  it('a member scoped to no client with sessions sees empty statistics', async () => {
    const lonely = (await createLicense(portal, { tier: 'msp', client_id: uniqueClientId('empty') })).record.client_id;
    const user = await createScopedUser(portal, [lonely]);
    const res = await health(user.token);
    expect(res.status).toBe(200);
    expect(res.body.session_stats).toEqual({ by_status: {}, by_client: [], recent_uploads: [] });
    // Only its own license_created event.
    expect(res.body.recent_activity.map((e: { event_type: string }) => e.event_type)).toEqual(['license_created']);
  });

  it('a principal scoped to no client ids gets empty tenant data, not an error', async () => {
    const user: UserPrincipal = {
      kind: 'user',
      subject: 'nobody',
      email: null,
      admin: false,
      clientIds: [],
      tier: 'msp',
      permissions: new Set(['db:health']),
    };
    const body = await databaseHealth(portal.ctx, user);
    expect(body.recent_activity).toEqual([]);
    expect(body.session_stats).toEqual({ by_status: {}, by_client: [], recent_uploads: [] });
    expect(body.table_counts['sessions']).toBe(3);
  });

  it('neon_usage with SVC_STORAGE_LIMIT_MB: limit, used MB and the percentage of the database and the session files', async () => {
    const body = (await health(admin)).body;
    const db = await openDb(portal);
    const files = Number(
      (await db.query('SELECT COALESCE(SUM(bytes), 0)::text AS b FROM storage_usage').finally(() => db.end())).rows[0]
        .b,
    );
    expect(files).toBeGreaterThan(0);
    const u = body.neon_usage;
    expect(Object.keys(u).sort()).toEqual([
      'active_connections',
      'health',
      'storage_limit_mb',
      'storage_mb',
      'storage_pct',
      'storage_percent',
      'storage_used_mb',
      'tier',
    ]);
    const size = (body.database_info.size_bytes as number) + files;
    expect(u.storage_limit_mb).toBe(LIMIT_MB);
    expect(u.storage_used_mb).toBe(round2(size / MB));
    expect(u.storage_mb).toBe(u.storage_used_mb);
    expect(u.storage_pct).toBe(round2((size / MB / LIMIT_MB) * 100));
    expect(u.storage_percent).toBe(u.storage_pct);
    expect(u.active_connections).toBe(body.database_info.active_connections);
    expect(u.health).toBe('healthy');
    expect(typeof u.tier).toBe('string');
  });
});

describe('neon_usage under other storage settings (same database)', () => {
  const filesBytes = async () =>
    Number((await db.query('SELECT COALESCE(SUM(bytes), 0)::text AS b FROM storage_usage')).rows[0].b);
  async function usage(env: Record<string, string | undefined>) {
    const other = await startTestPortal({ databaseUrl: portal.databaseUrl, env });
    try {
      const res = await http(other.url, 'GET', '/api/db-health', { headers: withToken(await other.adminToken()) });
      expect(res.status, res.text).toBe(200);
      return res.body as Record<string, any>;
    } finally {
      await other.close();
    }
  }

  it('without SVC_STORAGE_LIMIT_MB the limit and percentages are null', async () => {
    const body = await usage({ SVC_STORAGE_LIMIT_MB: undefined });
    expect(body['neon_usage']).toMatchObject({
      storage_limit_mb: null,
      storage_pct: null,
      storage_percent: null,
      health: 'healthy',
    });
    expect(body['neon_usage'].storage_used_mb).toBe(
      round2((body['database_info'].size_bytes + (await filesBytes())) / MB),
    );
  });

  it('a limit the database and files exceed: the exact percentage, and health critical', async () => {
    const body = await usage({ SVC_STORAGE_LIMIT_MB: '1' });
    const size = (body['database_info'].size_bytes as number) + (await filesBytes());
    expect(size).toBeGreaterThan(MB);
    expect(body['neon_usage']).toMatchObject({
      storage_limit_mb: 1,
      storage_pct: round2((size / MB) * 100),
      storage_percent: round2((size / MB) * 100),
      health: 'critical',
    });
  });

  it('warning between 80 % and 95 %', async () => {
    const size =
      Number((await db.query('SELECT pg_database_size(current_database()) AS s')).rows[0].s) + (await filesBytes());
    // A limit that puts the current size near 87 %.
    const limit = Math.max(1, Math.round(size / MB / 0.87));
    const body = await usage({ SVC_STORAGE_LIMIT_MB: String(limit) });
    const pct = body['neon_usage'].storage_pct as number;
    expect(pct).toBe(round2(((body['database_info'].size_bytes + (await filesBytes())) / MB / limit) * 100));
    expect(pct).toBeGreaterThanOrEqual(80);
    expect(pct).toBeLessThan(95);
    expect(body['neon_usage'].health).toBe('warning');
  });
});
