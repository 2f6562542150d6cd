import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAuditEvent, recordAuditEvents } from '../src/audit/record.ts';
import { openDb, uniqueClientId } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { createTestCa, HttpsReceiver, type TestCa } from '@svc/test-support/https-receiver';
import { until } from '@svc/test-support/wait';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';

/**
 * The per-receiver bulkhead versus delivery: a burst past the in-flight
 * limit waits its turn instead of failing, so a slow but healthy receiver gets every event
 * and is not disabled. The burst is what a group broadcast produces: many
 * `command_completed` events at once, published on the portal's real event bus and
 * delivered by its real dispatcher to a real HTTPS receiver that answers each in 0.6 s.
 */

const EVENTS = 200;
const IN_FLIGHT = 16;

let ca: TestCa;
let portal: TestPortal;
let db: pg.Client;
let admin: string;
let slow: HttpsReceiver;

beforeAll(async () => {
  ca = await createTestCa();
  // 16 in flight keeps the queue deep (200 events, ~13 rounds of 0.6 s) and the test short;
  // SVC_WEBHOOK_DISABLE_AFTER 5: before the queue, the refused attempts disabled it at once.
  portal = await startTestPortal({
    env: {
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: ca.caFile,
      SVC_WEBHOOK_DISABLE_AFTER: '5',
      SVC_WEBHOOK_MAX_IN_FLIGHT: String(IN_FLIGHT),
      SVC_WEBHOOK_QUEUE_WAIT_SECONDS: '60',
    },
  });
  db = await openDb(portal);
  admin = await portal.adminToken();
  slow = await HttpsReceiver.start(ca);
  slow.respond({ kind: 'delay', ms: 600 });
});
afterAll(async () => {
  await portal?.ctx.events.drain();
  await slow?.close();
  await db?.end();
  await portal?.close();
  await ca?.cleanup();
});

describe('a slow but healthy receiver under a burst', () => {
  it(`gets all ${EVENTS} events of a burst, each sent once, at most ${IN_FLIGHT} at a time; all logged as delivered and the subscription stays enabled`, async () => {
    const clientId = uniqueClientId('burst');
    const res = await http(portal.url, 'POST', '/api/webhooks', {
      headers: withToken(admin),
      json: { url: slow.url(), event_types: ['command_completed'], client_id: clientId },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.subscription.id as string;

    // Recorded as their operations record them (which stages them for webhooks), then published.
    const events = await recordAuditEvents(
      portal.ctx.db,
      Array.from({ length: EVENTS }, (_, i) => ({
        event_type: 'command_completed' as const,
        client_id: clientId,
        actor: `agent-${i}`,
        data: { command_id: `cmd-${i}`, agent_id: `agent-${i}`, group: 'fleet' },
      })),
    );
    for (const event of events) portal.ctx.events.publish(event);
    // Bounded against a hang only (~13 rounds of 0.6 s; a machine loaded many times over took more than 60 s).
    await until(
      async () =>
        Number(
          (
            await db.query(
              `SELECT count(*) FROM webhook_deliveries WHERE subscription_id = $1 AND status <> 'pending'`,
              [id],
            )
          ).rows[0].count,
        ) === EVENTS,
      180_000,
      () => `${EVENTS} finished deliveries`,
    );

    const { rows } = await db.query(`SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = $1`, [id]);
    expect(rows).toHaveLength(EVENTS);
    expect(rows.filter((r) => r.status !== 'succeeded')).toEqual([]);
    // One attempt each: nothing was refused and retried.
    expect(
      rows.every((r) => r.attempts.length === 1 && r.attempts[0].status_code === 200 && r.attempts[0].error === null),
    ).toBe(true);
    expect(slow.requests).toHaveLength(EVENTS);
    expect(new Set(slow.requests.map((r) => r.json.data.command_id)).size).toBe(EVENTS);
    // The bulkhead still held: never more than its limit unanswered at the receiver.
    expect(slow.maxPending).toBeLessThanOrEqual(IN_FLIGHT);
    expect(slow.maxPending).toBe(IN_FLIGHT);
    // Each is signed when it leaves the queue, not when it joined it: the last ones waited about
    // 12 rounds of 0.6 s, and their timestamps (Standard Webhooks receivers refuse stale ones) say so.
    const stamps = slow.requests.map((r) => Number(r.headers['webhook-timestamp']));
    expect(Math.max(...stamps) - Math.min(...stamps)).toBeGreaterThanOrEqual(6);

    const sub = (
      await db.query('SELECT enabled, consecutive_failures, disabled_reason FROM webhook_subscriptions WHERE id = $1', [
        id,
      ])
    ).rows[0];
    expect(sub).toEqual({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    const audited = await db.query(
      `SELECT count(*) FROM audit_events WHERE event_type = 'webhook_disabled' AND data->>'subscription_id' = $1`,
      [id],
    );
    expect(Number(audited.rows[0].count)).toBe(0);
  }, 240_000);
});

describe('shutdown with attempts queued', () => {
  it('sheds the queued attempts (logged as not sent) instead of waiting out their deadline; the one in flight finishes', async () => {
    const other = await startTestPortal({
      env: {
        SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
        SVC_WEBHOOK_CA_FILE: ca.caFile,
        SVC_WEBHOOK_MAX_IN_FLIGHT: '1',
        SVC_WEBHOOK_QUEUE_WAIT_SECONDS: '600',
      },
    });
    const otherDb = await openDb(other);
    const held = await HttpsReceiver.start(ca);
    try {
      held.queue({ kind: 'hold' });
      const clientId = uniqueClientId('shutdown');
      const res = await http(other.url, 'POST', '/api/webhooks', {
        headers: withToken(await other.adminToken()),
        json: { url: held.url(), event_types: ['command_completed'], client_id: clientId },
      });
      expect(res.status, res.text).toBe(201);
      const id = res.body.subscription.id as string;
      const rows = async () =>
        (
          await otherDb.query(
            `SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY id`,
            [id],
          )
        ).rows;
      for (let i = 0; i < 3; i++)
        other.ctx.events.publish(
          await recordAuditEvent(other.ctx.db, {
            event_type: 'command_completed',
            client_id: clientId,
            actor: 'agent',
            data: { command_id: `cmd-${i}` },
          }),
        );
      // One is held at the receiver, two wait behind it (for up to 600 s).
      await until(async () => held.pending === 1 && (await rows()).length === 3);

      const closing = other.close();
      await until(
        async () => (await rows()).filter((r) => r.status === 'failed').length === 2,
        20_000,
        () => 'the two queued deliveries shed',
      );
      held.release();
      await closing;
      const final = await rows();
      expect(final.map((r) => r.status).sort()).toEqual(['failed', 'failed', 'succeeded']);
      for (const r of final.filter((r) => r.status === 'failed')) {
        expect(r.attempts.map((a: { error: string; status_code: null }) => [a.status_code, a.error])).toEqual([
          [null, 'not sent: the portal is shutting down'],
          [null, 'not sent: the portal is shutting down'],
        ]);
      }
      expect(held.requests).toHaveLength(1);
      // Not sent at shutdown is no failure of the receiver.
      expect(
        (await otherDb.query('SELECT enabled, consecutive_failures FROM webhook_subscriptions WHERE id = $1', [id]))
          .rows[0],
      ).toEqual({ enabled: true, consecutive_failures: 0 });
    } finally {
      await otherDb.end();
      await held.close();
      await other.close();
    }
  });
});
