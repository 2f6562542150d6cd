import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { verify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '@svc/protocol';
import {
  createLicense,
  DAY_MS,
  FakeClock,
  openDb,
  uniqueClientId,
  type LicenseFixture,
} from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type ReceivedRequest, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { ADMIN_EMAIL, ADMIN_PASSWORD, login, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * The ten subscribable events (docs/api.md#webhooks for the command
 * events) fired by their real operations and received by a real HTTPS receiver, with
 * the data fields. Waits are bounded polls on the receiver.
 */

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const SPEC_FIELDS: Record<string, string[]> = {
  scan_completed: [
    'session_id',
    'client',
    'client_id',
    'target',
    'risk_score',
    'risk_grade',
    'total_findings',
    'total_hosts',
    'severity_summary',
    'share_url',
    'uploaded_at',
    'tool_version',
  ],
  status_changed: [
    'session_id',
    'client',
    'client_id',
    'target',
    'previous_status',
    'new_status',
    'changed_by',
    'changed_at',
  ],
  session_deleted: ['session_id', 'client', 'client_id', 'deleted_by', 'deleted_at'],
  report_expiring: ['session_id', 'client', 'client_id', 'target', 'uploaded_at', 'expires_at', 'days_remaining'],
  agent_deregistered: ['agent_id', 'deregistered_by'],
  agent_reregistered: ['agent_id', 'reregistered_by'],
  agent_purged: ['agent_id', 'purged_by'],
  command_dispatched: ['command_ids', 'agent_ids', 'command_type', 'group_target', 'priority', 'created_by'],
  command_completed: ['command_id', 'agent_id', 'command_type', 'exit_code', 'session_id', 'completed_at'],
  command_failed: ['command_id', 'agent_id', 'command_type', 'exit_code', 'session_id', 'completed_at'],
};

let ca: TestCa;
const receivers: HttpsReceiver[] = [];

beforeAll(async () => {
  ca = await createTestCa();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await ca?.cleanup();
});

async function receiver(): Promise<HttpsReceiver> {
  const r = await HttpsReceiver.start(ca);
  receivers.push(r);
  return r;
}

const env = () => ({ SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', SVC_WEBHOOK_CA_FILE: ca.caFile });

interface Sub {
  id: string;
  signing_secret: string;
  standard_webhooks_secret: string;
}

/** The next request of `type` (optionally matching `pred`) this receiver has not handed out yet; a bounded poll. */
function inbox(r: HttpsReceiver) {
  const taken = new Set<number>();
  return async (type: string, pred: (data: Record<string, any>) => boolean = () => true): Promise<ReceivedRequest> => {
    let found: ReceivedRequest | undefined;
    await until(
      () => {
        found = r.requests.find((q) => !taken.has(q.seq) && q.json?.event_type === type && pred(q.json.data));
        return found !== undefined;
      },
      20_000,
      () => `a ${type} delivery; got ${r.requests.map((q) => q.json?.event_type).join(', ')}`,
    );
    taken.add(found!.seq);
    return found!;
  };
}

/** Envelope, headers and both signatures; the data fields all present. */
async function expectEvent(
  req: ReceivedRequest,
  sub: Sub,
  type: string,
  opts: { standard?: boolean } = {},
): Promise<Record<string, any>> {
  expect(req.method).toBe('POST');
  expect(Object.keys(req.json)).toEqual(['api_version', 'event_type', 'event_id', 'timestamp', 'data']);
  expect(req.json).toMatchObject({
    api_version: '2',
    event_type: type,
    event_id: expect.stringMatching(/^evt_[0-9a-f]{16}$/),
    timestamp: expect.stringMatching(ISO),
  });
  expect(req.headers['x-svc-event']).toBe(type);
  expect(req.headers['x-svc-delivery']).toBe(req.json.event_id);
  expect(req.headers['x-svc-api-version']).toBe('2');
  expect(req.headers['content-type']).toBe('application/json');
  expect(req.headers['user-agent']).toMatch(/-webhook\/2\.0$/);
  expect(await verify(sub.signing_secret, req.body, req.headers['x-svc-signature-256'] as string)).toBe(true);
  if (opts.standard !== false) {
    const h = req.headers as Record<string, string>;
    expect(
      new Webhook(sub.standard_webhooks_secret).verify(req.raw, {
        'webhook-id': h['webhook-id']!,
        'webhook-timestamp': h['webhook-timestamp']!,
        'webhook-signature': h['webhook-signature']!,
      }),
    ).toEqual(req.json);
  }
  const data = req.json.data as Record<string, any>;
  expect(Object.keys(data)).toEqual(expect.arrayContaining(SPEC_FIELDS[type]!));
  return data;
}

describe('events from sessions and agents', () => {
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let r: HttpsReceiver;
  let next: ReturnType<typeof inbox>;
  let sub: Sub;
  let lic: LicenseFixture;
  let clientId: string;

  const api = (method: string, path: string, json?: unknown) =>
    http(portal.url, method, path, { headers: withToken(admin), json });

  beforeAll(async () => {
    portal = await startTestPortal({ env: env() });
    db = await openDb(portal);
    admin = await portal.adminToken();
    clientId = uniqueClientId('events');
    lic = await createLicense(portal, { tier: 'business', client_id: clientId });
    r = await receiver();
    next = inbox(r);
    const res = await api('POST', '/api/webhooks', {
      url: r.url(),
      event_types: [...WEBHOOK_EVENT_TYPES],
      client_id: clientId,
    });
    expect(res.status, res.text).toBe(201);
    sub = res.body.subscription;
  });
  afterAll(async () => {
    await portal?.ctx.events.drain();
    await db?.end();
    await portal?.close();
  });

  async function upload(): Promise<string> {
    const id = newSessionId();
    const res = await postUpload(
      portal.url,
      lic.key,
      sessionParts(sessionDoc('session-complete.json', id), { log: 'log\n', report: '<html><body>r</body></html>' }),
    );
    expect(res.status, res.text).toBe(200);
    return id;
  }

  it('scan_completed: an upload, after its files and rows are stored', async () => {
    const id = await upload();
    const req = await next('scan_completed', (d) => d['session_id'] === id);
    const data = await expectEvent(req, sub, 'scan_completed');
    const row = (await db.query('SELECT uploaded_at FROM sessions WHERE session_id = $1', [id])).rows[0];
    // The stored token (its sealed copy, sessions/share-seal.ts).
    const token = portal.ctx.shareTokens.open(
      (await db.query('SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1', [id])).rows[0],
    );
    expect(data).toMatchObject({
      session_id: id,
      client: 'Acme Water District',
      client_id: clientId,
      target: '10.20.0.0/24',
      risk_score: 75, // the complete fixture's findings, scored by the portal (docs/scoring.md)
      risk_grade: 'D',
      total_findings: 6,
      total_hosts: 3,
      severity_summary: { critical: 1, high: 2, medium: 2, low: 1, info: 0 },
      share_url: `http://portal.test/share/?token=${token}`,
      uploaded_at: (row.uploaded_at as Date).toISOString(),
      tool_version: '4.2.3',
    });
    // The session is complete by the time the subscriber hears of it.
    const detail = await api('GET', `/api/sessions?session=${id}`);
    expect(detail.status).toBe(200);

    // The delivery log keeps the body without the token (a backup holds none in clear), the
    // whole body only sealed; a redelivery still sends the very body the receiver got.
    await portal.ctx.events.drain();
    const stored = (
      await db.query('SELECT id, body, body_sealed FROM webhook_deliveries WHERE event_id = $1', [req.json.event_id])
    ).rows;
    expect(stored).toHaveLength(1);
    expect(stored[0].body).not.toContain(token);
    expect(JSON.parse(stored[0].body).data.share_url).toBe('http://portal.test/share/?token=[redacted]');
    expect(stored[0].body_sealed).not.toContain(token);
    const again = await api('POST', '/api/webhooks/redeliver', { delivery_id: Number(stored[0].id) });
    expect(again.status, again.text).toBe(200);
    const resent = await next('scan_completed', (d) => d['session_id'] === id);
    expect(resent.body).toBe(req.body);
  });

  it('status_changed: PATCH /api/sessions', async () => {
    const id = await upload();
    const res = await api('PATCH', `/api/sessions?session=${id}`, { status: 'in_review', note: 'looking' });
    expect(res.status, res.text).toBe(200);
    const data = await expectEvent(await next('status_changed', (d) => d['session_id'] === id), sub, 'status_changed');
    expect(data).toEqual({
      session_id: id,
      client: 'Acme Water District',
      client_id: clientId,
      target: '10.20.0.0/24',
      previous_status: 'new',
      new_status: 'in_review',
      changed_by: ADMIN_EMAIL,
      changed_at: res.body.changed_at,
    });
    // Setting the same status again changes nothing and sends nothing.
    expect((await api('PATCH', `/api/sessions?session=${id}`, { status: 'in_review' })).body.changed).toBe(false);
    await portal.ctx.events.drain();
    expect(
      r.requests.filter((q) => q.json.event_type === 'status_changed' && q.json.data.session_id === id),
    ).toHaveLength(1);
  });

  it('session_deleted: DELETE /api/sessions, after the files are gone', async () => {
    const id = await upload();
    const res = await api('DELETE', `/api/sessions?session=${id}`);
    expect(res.status, res.text).toBe(200);
    const req = await next('session_deleted', (d) => d['session_id'] === id);
    const data = await expectEvent(req, sub, 'session_deleted');
    expect(data).toEqual({
      session_id: id,
      client: 'Acme Water District',
      client_id: clientId,
      deleted_by: ADMIN_EMAIL,
      deleted_at: expect.stringMatching(ISO),
    });
    const audit = (
      await db.query("SELECT created_at FROM audit_events WHERE event_type = 'session_deleted' AND session_id = $1", [
        id,
      ])
    ).rows;
    expect(audit).toHaveLength(1);
    expect((await db.query('SELECT count(*)::int AS n FROM sessions WHERE session_id = $1', [id])).rows[0].n).toBe(0);
  });

  describe('agents and commands', () => {
    const heartbeat = (agentId: string) =>
      http(portal.url, 'POST', '/api/health', {
        headers: withKey(lic.key),
        json: {
          agent_id: agentId,
          version: '4.2.3',
          timestamp: new Date().toISOString(),
          status: 'running',
          uptime_seconds: 5,
        },
      });
    const newAgent = async () => {
      const id = `svcd_ev_${randomBytes(4).toString('hex')}`;
      const res = await heartbeat(id);
      expect(res.status, res.text).toBe(200);
      return id;
    };
    const agentAction = (agentId: string, action: string) => api('PATCH', '/api/agents', { agent_id: agentId, action });
    const report = (body: Record<string, unknown>) =>
      http(portal.url, 'PATCH', '/api/agent-commands', { headers: withKey(lic.key), json: body });

    it('agent_deregistered, agent_reregistered and agent_purged: PATCH /api/agents', async () => {
      const agentId = await newAgent();
      expect((await agentAction(agentId, 'deregister')).body).toEqual({ ok: true });
      expect(
        await expectEvent(
          await next('agent_deregistered', (d) => d['agent_id'] === agentId),
          sub,
          'agent_deregistered',
        ),
      ).toEqual({ agent_id: agentId, deregistered_by: ADMIN_EMAIL, dropped_command_ids: [] });

      expect((await agentAction(agentId, 'reenable')).body).toEqual({ ok: true });
      expect(
        await expectEvent(
          await next('agent_reregistered', (d) => d['agent_id'] === agentId),
          sub,
          'agent_reregistered',
        ),
      ).toEqual({ agent_id: agentId, reregistered_by: ADMIN_EMAIL });

      expect((await agentAction(agentId, 'deregister')).status).toBe(200);
      await next('agent_deregistered', (d) => d['agent_id'] === agentId);
      expect((await agentAction(agentId, 'purge')).body).toEqual({ ok: true });
      expect(
        await expectEvent(await next('agent_purged', (d) => d['agent_id'] === agentId), sub, 'agent_purged'),
      ).toEqual({ agent_id: agentId, purged_by: ADMIN_EMAIL });

      // Refused actions (409, 404) fire nothing.
      expect((await agentAction(agentId, 'purge')).status).toBe(404);
      const other = await newAgent();
      expect((await agentAction(other, 'reenable')).status).toBe(409);
      await portal.ctx.events.drain();
      expect(r.requests.filter((q) => q.json.data.agent_id === other)).toEqual([]);
    });

    it('command_dispatched: POST /api/agent-commands, for one agent and for a group (documented fields)', async () => {
      const agentId = await newAgent();
      const res = await api('POST', '/api/agent-commands', {
        agent_id: agentId,
        command_type: 'run_scan',
        payload: { targets: '10.0.0.0/24' },
        priority: 7,
      });
      expect(res.status, res.text).toBe(201);
      const id = res.body.commands[0].id as number;
      const data = await expectEvent(
        await next('command_dispatched', (d) => d['command_ids'].includes(id)),
        sub,
        'command_dispatched',
      );
      expect(data).toEqual({
        command_ids: [id],
        agent_ids: [agentId],
        command_type: 'run_scan',
        group_target: null,
        priority: 7,
        created_by: ADMIN_EMAIL,
        // When the command expires unless started (additive).
        expires_at: res.body.commands[0].expires_at,
      });
      expect(Date.parse(data['expires_at'])).toBe(Date.parse(res.body.commands[0].created_at) + 86_400_000);

      const a = await newAgent();
      const b = await newAgent();
      const group = `grp-${randomBytes(3).toString('hex')}`;
      for (const m of [a, b])
        expect((await api('POST', '/api/agent-groups', { agent_id: m, group_name: group })).status).toBe(201);
      const g = await api('POST', '/api/agent-commands', { group_target: group, command_type: 'restart' });
      expect(g.status, g.text).toBe(201);
      const ids = g.body.commands.map((c: { id: number }) => c.id);
      const gd = await expectEvent(
        await next('command_dispatched', (d) => d['group_target'] === group),
        sub,
        'command_dispatched',
      );
      expect(gd).toEqual({
        command_ids: ids,
        agent_ids: g.body.commands.map((c: { agent_id: string }) => c.agent_id),
        command_type: 'restart',
        group_target: group,
        priority: 5,
        created_by: ADMIN_EMAIL,
        expires_at: g.body.commands[0].expires_at,
      });
      expect([...gd['agent_ids']].sort()).toEqual([a, b].sort());
    });

    it('command_completed and command_failed: PATCH /api/agent-commands after ack (documented fields)', async () => {
      const agentId = await newAgent();
      const queue = async (body: Record<string, unknown>) => {
        const res = await api('POST', '/api/agent-commands', { agent_id: agentId, ...body });
        expect(res.status, res.text).toBe(201);
        return res.body.commands[0].id as number;
      };
      const scan = await queue({ command_type: 'run_scan', payload: { targets: '10.0.0.5' } });
      const restart = await queue({ command_type: 'restart' });
      const polled = await http(portal.url, 'GET', `/api/agent-commands?agent_id=${agentId}`, {
        headers: withKey(lic.key),
      });
      expect(polled.body.commands.map((c: { id: number }) => c.id).sort()).toEqual([scan, restart].sort());
      for (const id of [scan, restart])
        expect((await report({ command_id: id, agent_id: agentId, status: 'acked' })).status).toBe(200);
      // Ack fires nothing.
      await portal.ctx.events.drain();
      expect(
        r.requests.filter(
          (q) =>
            q.json.event_type.startsWith('command_') &&
            q.json.data.command_id !== undefined &&
            [scan, restart].includes(q.json.data.command_id),
        ),
      ).toEqual([]);

      // A result names a stored session of the agent's own client.
      const sessionId = await upload();
      const done = await report({
        command_id: scan,
        agent_id: agentId,
        status: 'completed',
        exit_code: 0,
        stdout: 'ok',
        session_id: sessionId,
      });
      expect(done.status, done.text).toBe(200);
      const completed = await expectEvent(
        await next('command_completed', (d) => d['command_id'] === scan),
        sub,
        'command_completed',
      );
      const scanResult = (
        await db.query('SELECT completed_at FROM agent_command_results WHERE command_id = $1', [scan])
      ).rows[0];
      expect(completed).toEqual({
        command_id: scan,
        agent_id: agentId,
        command_type: 'run_scan',
        exit_code: 0,
        session_id: sessionId,
        completed_at: (scanResult.completed_at as Date).toISOString(),
      });

      const failed = await report({
        command_id: restart,
        agent_id: agentId,
        status: 'failed',
        exit_code: 124,
        stderr: 'timeout',
      });
      expect(failed.status, failed.text).toBe(200);
      const f = await expectEvent(
        await next('command_failed', (d) => d['command_id'] === restart),
        sub,
        'command_failed',
      );
      expect(f).toEqual({
        command_id: restart,
        agent_id: agentId,
        command_type: 'restart',
        exit_code: 124,
        session_id: null,
        completed_at: expect.stringMatching(ISO),
      });
    });
  });

  it('every delivery of this subscription was logged as succeeded', async () => {
    await portal.ctx.events.drain();
    const log = (await api('GET', `/api/webhooks/deliveries?id=${sub.id}&limit=500`)).body.deliveries as {
      event_id: string;
      status: string;
    }[];
    expect(log.length).toBe(r.requests.length);
    expect(log.every((d) => d.status === 'succeeded')).toBe(true);
    expect(new Set(log.map((d) => d.event_id))).toEqual(new Set(r.requests.map((q) => q.json.event_id)));
  });
});

describe('report_expiring (listing, inside the last 7 days of retention, once)', () => {
  const start = new Date(Math.floor(Date.now() / 1000) * 1000);
  const clock = new FakeClock(start);
  let portal: TestPortal;
  let token: { value: string; at: number } | null = null;
  // Tokens are issued and checked on the portal's clock: log in again after moving it.
  const admin = async () => {
    const t = clock.now().getTime();
    if (token === null || token.at !== t)
      token = { value: await login(portal.url, ADMIN_EMAIL, ADMIN_PASSWORD), at: t };
    return token.value;
  };

  beforeAll(async () => {
    portal = await startTestPortal({ now: clock.now, env: { ...env(), SVC_SESSION_RETENTION_DAYS: '10' } });
  });
  afterAll(async () => {
    await portal?.ctx.events.drain();
    await portal?.close();
  });

  it('fires from GET /api/sessions when a session enters the window, with the documented data, and never twice', async () => {
    const clientId = uniqueClientId('exp');
    const lic = await createLicense(portal, { tier: 'business', client_id: clientId }, await admin());
    const r = await receiver();
    const next = inbox(r);
    const created = await http(portal.url, 'POST', '/api/webhooks', {
      headers: withToken(await admin()),
      json: { url: r.url(), event_types: ['report_expiring'], client_id: clientId },
    });
    expect(created.status, created.text).toBe(201);
    const sub = created.body.subscription as Sub;
    const id = newSessionId();
    expect((await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-complete.json', id)))).status).toBe(
      200,
    );
    const list = async () => {
      const res = await http(portal.url, 'GET', '/api/sessions', { headers: withToken(await admin()) });
      expect(res.status, res.text).toBe(200);
    };

    // 8 days before expiry: outside the window.
    clock.set(new Date(start.getTime() + 2 * DAY_MS));
    await list();
    await portal.ctx.events.drain();
    expect(r.requests).toEqual([]);

    // 6 days before expiry: inside; listed twice at once, notified once.
    clock.set(new Date(start.getTime() + 4 * DAY_MS));
    await Promise.all([list(), list()]);
    const req = await next('report_expiring', (d) => d['session_id'] === id);
    // The fake clock is days ahead of real time, so the Standard Webhooks timestamp check is skipped here.
    const data = await expectEvent(req, sub, 'report_expiring', { standard: false });
    expect(data).toEqual({
      session_id: id,
      client: 'Acme Water District',
      client_id: clientId,
      target: '10.20.0.0/24',
      uploaded_at: start.toISOString(),
      expires_at: new Date(start.getTime() + 10 * DAY_MS).toISOString(),
      days_remaining: 6,
    });
    expect(req.json.timestamp).toBe(clock.now().toISOString());

    clock.set(new Date(start.getTime() + 9 * DAY_MS));
    await list();
    await portal.ctx.events.drain();
    expect(r.requests.filter((q) => q.json.data.session_id === id)).toHaveLength(1);
  });
});
