import path from 'node:path';
import { sql } from 'kysely';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { presentAuditEvent } from '../src/audit/present.ts';
import { createBackup } from '../src/operations/backup/backup.ts';
import { stageEvents } from '../src/webhooks/outbox-queries.ts';
import { sealStoredBodies } from '../src/webhooks/secrets.ts';
import { createLicense, openDb, uniqueClientId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type ReceivedRequest, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { KEY_ENCRYPTION_KEY, startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { newSessionId, postUpload, sessionDoc, sessionParts } from '@svc/test-support/upload';

/**
 * Webhook events of record (migration 0036): an event is staged by the transaction of the
 * operation that caused it, so a process that stops between its commit and the fan-out (here:
 * the portal's event bus hears nothing, as after a crash at that moment) loses nothing. Once
 * the staged event is older than a lease, a sweep fans it out, once, with the share link put
 * back for scan_completed. Delivery bodies keep no share token in clear.
 */

const LEASE_SECONDS = 1;

describe('webhook events staged with their operation', () => {
  let ca: TestCa;
  let receiver: HttpsReceiver;
  let portal: TestPortal;
  let db: pg.Client;
  let admin: string;
  let lic: LicenseFixture;
  let clientId: string;
  let subId: string;

  const api = (method: string, path: string, json?: unknown) =>
    http(portal.url, method, path, { headers: withToken(admin), json });
  const staged = async () => (await db.query('SELECT count(*)::int AS n FROM webhook_outbox')).rows[0].n as number;
  const received = (type: string, sessionId: string) =>
    receiver.requests.filter((q) => q.json?.event_type === type && q.json.data.session_id === sessionId);

  /** Runs `op` as if the portal stopped right after each commit: the bus hears none of its events. */
  async function withoutBus<T>(op: () => Promise<T>): Promise<T> {
    const bus = portal.ctx.events as { publish: unknown };
    bus.publish = () => undefined;
    try {
      return await op();
    } finally {
      delete bus.publish;
    }
  }

  async function upload(): Promise<string> {
    const id = newSessionId();
    const res = await postUpload(portal.url, lic.key, sessionParts(sessionDoc('session-complete.json', id)));
    expect(res.status, res.text).toBe(200);
    return id;
  }

  async function arrival(type: string, sessionId: string): Promise<ReceivedRequest> {
    await until(
      () => received(type, sessionId).length > 0,
      30_000,
      () => `a ${type} delivery of ${sessionId}`,
    );
    return received(type, sessionId)[0]!;
  }

  beforeAll(async () => {
    ca = await createTestCa();
    receiver = await HttpsReceiver.start(ca);
    portal = await startTestPortal({
      env: {
        SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
        SVC_WEBHOOK_CA_FILE: ca.caFile,
        SVC_WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
      },
    });
    db = await openDb(portal);
    admin = await portal.adminToken();
    clientId = uniqueClientId('outbox');
    lic = await createLicense(portal, { tier: 'business', client_id: clientId });
    const res = await api('POST', '/api/webhooks', {
      url: receiver.url(),
      event_types: ['scan_completed', 'status_changed'],
      client_id: clientId,
    });
    expect(res.status, res.text).toBe(201);
    subId = res.body.subscription.id;
  });
  afterAll(async () => {
    await portal?.ctx.events.drain();
    await db?.end();
    await portal?.close();
    await receiver?.close();
    await ca?.cleanup();
  });

  it('an event the process never fanned out is sent by the sweep once it is a lease old, with its share link', async () => {
    const id = await withoutBus(upload);
    const req = await arrival('scan_completed', id);
    const { rows } = await db.query('SELECT token, token_hash, token_sealed FROM share_tokens WHERE session_id = $1', [
      id,
    ]);
    const token = portal.ctx.shareTokens.open(rows[0]);
    expect(req.json.data).toMatchObject({ session_id: id, share_url: `http://portal.test/share/?token=${token}` });
    await until(
      async () => (await staged()) === 0,
      30_000,
      () => 'the staged event claimed',
    );
    // Logged as any delivery, without the token in clear.
    await until(
      async () =>
        (
          await db.query("SELECT 1 FROM webhook_deliveries WHERE event_id = $1 AND status = 'succeeded'", [
            req.json.event_id,
          ])
        ).rows.length === 1,
      30_000,
      () => 'the delivery logged as succeeded',
    );
    const log = (await db.query('SELECT body FROM webhook_deliveries WHERE event_id = $1', [req.json.event_id])).rows;
    expect(log).toHaveLength(1);
    expect(log[0].body).not.toContain(token);
    // Later sweeps find nothing more to send, nor does the process's own fan-out when it comes late.
    await until(() => portal.ctx.webhooks.dispatcher.adoptStaged().then((n) => n === 0));
    const audited = (
      await db.query("SELECT * FROM audit_events WHERE event_type = 'scan_completed' AND session_id = $1", [id])
    ).rows[0];
    await portal.ctx.webhooks.dispatcher.onEvent(presentAuditEvent(audited));
    expect(received('scan_completed', id)).toHaveLength(1);
  });

  it('two replicas sweeping one staged event at once send it once', async () => {
    const replica = await startTestPortal({
      databaseUrl: portal.databaseUrl,
      env: {
        SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
        SVC_WEBHOOK_CA_FILE: ca.caFile,
        SVC_WEBHOOK_LEASE_SECONDS: String(LEASE_SECONDS),
      },
    });
    try {
      const id = await withoutBus(upload);
      // Both sweep together, each also on its own timer, until the event is sent.
      await until(
        async () => {
          await Promise.all([
            portal.ctx.webhooks.dispatcher.adoptStaged(),
            replica.ctx.webhooks.dispatcher.adoptStaged(),
          ]);
          return received('scan_completed', id).length > 0 && (await staged()) === 0;
        },
        30_000,
        () => 'the staged event sent',
      );
      await replica.ctx.webhooks.dispatcher.close();
      await portal.ctx.events.drain();
      const req = received('scan_completed', id);
      expect(req).toHaveLength(1);
      const log = await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1', [
        req[0]!.json.event_id,
      ]);
      expect(log.rows[0].n).toBe(1);
    } finally {
      await replica.close();
    }
  });

  it('an audited status change is staged by its own statement and reaches the receiver once', async () => {
    const id = await upload();
    await arrival('scan_completed', id);
    const res = await withoutBus(() => api('PATCH', `/api/sessions?session=${id}`, { status: 'in_review' }));
    expect(res.status, res.text).toBe(200);
    const req = await arrival('status_changed', id);
    expect(req.json.data).toMatchObject({ session_id: id, previous_status: 'new', new_status: 'in_review' });
    await until(
      async () => (await staged()) === 0,
      30_000,
      () => 'the staged event claimed',
    );
    expect(received('status_changed', id)).toHaveLength(1);
  });

  it('an event nobody listens to is not staged, and one sent at once leaves nothing behind', async () => {
    const other = uniqueClientId('outbox-none');
    const otherLic = await createLicense(portal, { tier: 'business', client_id: other });
    const id = newSessionId();
    const res = await postUpload(portal.url, otherLic.key, sessionParts(sessionDoc('session-complete.json', id)));
    expect(res.status, res.text).toBe(200);
    expect(await staged()).toBe(0);
    const sent = await upload();
    await arrival('scan_completed', sent);
    await portal.ctx.events.drain();
    expect(await staged()).toBe(0);
    expect(received('scan_completed', sent)).toHaveLength(1);
  });

  it('stageEvents stages only the events someone listens to, and answers each in its place with its own row', async () => {
    const other = uniqueClientId('outbox-order');
    const event = (client: string, n: number) => ({
      event_type: 'scan_completed' as const,
      actor: 'system',
      session_id: `s${n}`,
      client_id: client,
      created_at: new Date().toISOString(),
      data: { n },
    });
    const events = [event(other, 0), event(clientId, 1), event(other, 2), event(clientId, 3), event(clientId, 4)];
    const rolledBack = new Error('rolled back');
    await expect(
      portal.ctx.db.transaction().execute(async (trx) => {
        const out = await stageEvents(trx, events);
        expect(out.map((e) => e.data)).toEqual(events.map((e) => e.data));
        expect(out.map((e) => e.outbox_id === undefined)).toEqual([true, false, true, false, false]);
        const { rows } = await sql<{ id: string; n: number }>`
          SELECT id::text, (event->'data'->>'n')::int AS n FROM webhook_outbox ORDER BY id`.execute(trx);
        expect(rows).toEqual([1, 3, 4].map((n) => ({ id: out[n]!.outbox_id, n })));
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect(await staged()).toBe(0);
  });

  it('a staged event whose subscription was disabled before anyone sent it is cleared by the sweep, and sent to nobody', async () => {
    const other = uniqueClientId('outbox-off');
    const otherLic = await createLicense(portal, { tier: 'business', client_id: other });
    const created = await api('POST', '/api/webhooks', {
      url: receiver.url(),
      event_types: ['scan_completed'],
      client_id: other,
    });
    expect(created.status, created.text).toBe(201);
    const id = newSessionId();
    const res = await withoutBus(() =>
      postUpload(portal.url, otherLic.key, sessionParts(sessionDoc('session-complete.json', id))),
    );
    expect(res.status, res.text).toBe(200);
    expect(await staged()).toBe(1);
    const off = await api('PATCH', `/api/webhooks?id=${created.body.subscription.id}`, { enabled: false });
    expect(off.status, off.text).toBe(200);
    // The claim that clears it finds no subscriber to write a delivery for.
    await until(
      async () => (await portal.ctx.webhooks.dispatcher.adoptStaged()) === 0 && (await staged()) === 0,
      30_000,
      () => 'the staged event cleared',
    );
    expect(
      (await db.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE client_id = $1', [other])).rows[0].n,
    ).toBe(0);
    expect(received('scan_completed', id)).toEqual([]);
  });

  it('a staged row whose audit event is gone (the log was truncated) is dropped by the sweep', async () => {
    await db.query(
      `INSERT INTO webhook_outbox (audit_id, created_at) VALUES ((SELECT coalesce(max(id), 0) + 1000 FROM audit_events), now() - interval '1 hour')`,
    );
    expect(await staged()).toBe(1);
    await until(
      async () => (await portal.ctx.webhooks.dispatcher.adoptStaged()) === 0,
      30_000,
      () => 'the row dropped',
    );
    expect(await staged()).toBe(0);
  });

  it('a body an older version stored with the token in clear is sealed at start, and a redelivery still sends it whole', async () => {
    const token = 'ab'.repeat(32);
    const body = JSON.stringify({
      api_version: '2',
      event_type: 'scan_completed',
      event_id: 'evt_0011223344556677',
      timestamp: new Date().toISOString(),
      data: { session_id: 'old', share_url: `http://portal.test/share/?token=${token}` },
    });
    const { rows } = await db.query(
      `INSERT INTO webhook_deliveries (subscription_id, event_id, event_type, body, client_id, status)
       VALUES ($1, 'evt_0011223344556677', 'scan_completed', $2, $3, 'succeeded') RETURNING id`,
      [subId, body, clientId],
    );
    // A backup refuses the database until a portal of this version sealed it.
    const backup = () =>
      createBackup({
        pool: portal.ctx.pool,
        blobs: portal.ctx.blobs,
        archive: path.join(dir, 'portal.tar'),
        portalVersion: portal.ctx.version,
        keyEncryptionKey: Buffer.from(KEY_ENCRYPTION_KEY, 'hex'),
      });
    const dir = await testTempDir('svc-outbox-backup-');
    await expect(backup()).rejects.toThrow(/^the database holds 1 webhook delivery bodies with a share token in clear/);
    expect(await sealStoredBodies(portal.ctx.db, portal.ctx.webhooks.secrets)).toBe(1);
    await expect(backup()).resolves.toMatchObject({});
    const stored = (await db.query('SELECT body, body_sealed FROM webhook_deliveries WHERE id = $1', [rows[0].id]))
      .rows[0];
    expect(stored.body).toBe(body.replace(token, '[redacted]'));
    expect(stored.body_sealed).not.toContain(token);
    expect(await sealStoredBodies(portal.ctx.db, portal.ctx.webhooks.secrets)).toBe(0);
    const again = await api('POST', '/api/webhooks/redeliver', { delivery_id: Number(rows[0].id) });
    expect(again.status, again.text).toBe(200);
    expect(receiver.requests.filter((q) => q.json?.event_id === 'evt_0011223344556677').map((q) => q.body)).toEqual([
      body,
    ]);
  });
});
