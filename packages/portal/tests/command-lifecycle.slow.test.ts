import type pg from 'pg';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HEARTBEAT_BATCH_SQL, heartbeatBatchValues } from '../src/agents/claim-sql.ts';
import { sweepCommandLifecycle } from '../src/agents/lifecycle-sweep.ts';
import type { DomainEvent } from '../src/events/bus.ts';
import { createLicense, FakeClock, heartbeatBody, newAgentId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL, type TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * Commands end even when nobody reports on them. An admin cancels a pending,
 * sent or running command; a command expires before its agent started it; a lost answer is
 * delivered again; a deregistration drops what was not started. docs/agent/commands.md,
 * "Cancel, expiry and redelivery".
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
const events: DomainEvent[] = [];
useFleetPortal((f) => ({ portal, db, admin } = f), { clock, events });

let biz: LicenseFixture;

const asAdmin = (method: string, path: string, json?: unknown) =>
  http(portal.url, method, path, { headers: withToken(admin), ...(json === undefined ? {} : { json }) });
const cancel = (json: unknown) => asAdmin('POST', '/api/agent-commands/cancel', json);
const heartbeat = (agent: string) =>
  http(portal.url, 'POST', '/api/health', { headers: withKey(biz.key), json: heartbeatBody(agent) });
const poll = (agent: string) =>
  http(portal.url, 'GET', `/api/agent-commands?agent_id=${agent}`, { headers: withKey(biz.key) });
const report = (body: Record<string, unknown>) =>
  http(portal.url, 'PATCH', '/api/agent-commands', { headers: withKey(biz.key), json: body });

async function register(prefix: string): Promise<string> {
  const agent = newAgentId(prefix);
  expect((await heartbeat(agent)).status).toBe(200);
  return agent;
}

async function queue(agent: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await asAdmin('POST', '/api/agent-commands', {
    agent_id: agent,
    command_type: 'run_scan',
    payload: { targets: '10.9.9.9' },
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.commands[0].id as number;
}

/** A command of `agent` driven to `status` through the real transitions (heartbeat delivery, agent ack). */
async function commandIn(agent: string, status: 'pending' | 'sent' | 'acked'): Promise<number> {
  const id = await queue(agent);
  if (status === 'pending') return id;
  const hb = await heartbeat(agent);
  expect(hb.body.commands.map((c: { id: number }) => c.id)).toContain(id);
  if (status === 'acked') expect((await report({ command_id: id, agent_id: agent, status: 'acked' })).status).toBe(200);
  return id;
}

async function row(id: number) {
  const { rows } = await db.query(
    `SELECT c.status, c.completed_at, c.cancel_requested_at, c.cancel_requested_by, c.cancel_reason,
            r.exit_code, r.stderr
     FROM agent_commands c LEFT JOIN agent_command_results r ON r.command_id = c.id WHERE c.id = $1`,
    [id],
  );
  return rows[0] as Record<string, unknown>;
}

/** The command's audit events, oldest first. */
async function audits(id: number) {
  const { rows } = await db.query(
    `SELECT event_type, actor, data FROM audit_events WHERE data->>'command_id' = $1 ORDER BY id`,
    [String(id)],
  );
  return rows as { event_type: string; actor: string; data: Record<string, unknown> }[];
}

const published = async (type: string, id: number) => {
  await portal.ctx.events.drain();
  return events.filter((e) => e.event_type === type && e.data['command_id'] === id);
};

beforeAll(async () => {
  biz = await createLicense(portal, { tier: 'business' });
});
// The fake clock moves by minutes: each test signs in again (a token lasts an hour of it).
beforeEach(async () => {
  admin = await portal.adminToken();
});

describe('cancel (POST /api/agent-commands/cancel)', () => {
  it('a pending command fails at once with the reason, is audited and sent, and is never delivered', async () => {
    const agent = await register('cxl-p');
    const id = await commandIn(agent, 'pending');
    clock.advance(1_000);
    const res = await cancel({ command_id: id, reason: '  wrong target  ' });
    expect(res.status, res.text).toBe(200);
    const message = `Cancelled by ${ADMIN_EMAIL}: wrong target`;
    expect(res.body.success).toBe(true);
    expect(res.body.command).toMatchObject({ id, status: 'failed', completed_at: clock.now().toISOString() });
    expect(res.body.command.cancel_requested).toBeNull();
    expect(res.body.result).toMatchObject({ exit_code: null, stdout: '', stderr: message });
    expect(await row(id)).toMatchObject({ status: 'failed', exit_code: null, stderr: message });
    const data = {
      command_id: id,
      agent_id: agent,
      command_type: 'run_scan',
      exit_code: null,
      session_id: null,
      completed_at: clock.now().toISOString(),
      reason: 'cancelled',
      cancelled_by: ADMIN_EMAIL,
      cancel_reason: 'wrong target',
    };
    expect(await audits(id)).toEqual([{ event_type: 'command_failed', actor: ADMIN_EMAIL, data }]);
    expect((await published('command_failed', id)).map((e) => e.data)).toEqual([data]);
    // Never delivered, by heartbeat or poll.
    expect((await heartbeat(agent)).body.commands).toEqual([]);
    expect((await poll(agent)).body).toEqual({ commands: [] });
  });

  it('a sent command fails at once; the agent acking it later gets 409 and the result stays', async () => {
    const agent = await register('cxl-s');
    const id = await commandIn(agent, 'sent');
    const res = await cancel({ command_id: id });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.stderr).toBe(`Cancelled by ${ADMIN_EMAIL}`);
    const ack = await report({ command_id: id, agent_id: agent, status: 'acked' });
    expect(ack.status).toBe(409);
    expect(ack.body).toEqual({ error: 'Illegal status transition: failed -> acked' });
    expect(await row(id)).toMatchObject({ status: 'failed', stderr: `Cancelled by ${ADMIN_EMAIL}` });
  });

  it('a running command: cancel_requested, the agent is told by heartbeat and poll until it reports failed', async () => {
    const agent = await register('cxl-a');
    const other = await commandIn(agent, 'acked');
    const id = await commandIn(agent, 'acked');
    clock.advance(2_000);
    const requestedAt = clock.now().toISOString();
    const res = await cancel({ command_id: id, reason: 'maintenance window over' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.command.status).toBe('acked');
    expect(res.body.command.cancel_requested).toEqual({
      at: requestedAt,
      by: ADMIN_EMAIL,
      reason: 'maintenance window over',
    });
    expect(res.body.result).toBeNull();
    const reason = `Cancelled by ${ADMIN_EMAIL}: maintenance window over`;
    expect((await audits(id)).at(-1)).toEqual({
      event_type: 'command_cancel_requested',
      actor: ADMIN_EMAIL,
      data: {
        command_id: id,
        agent_id: agent,
        command_type: 'run_scan',
        cancelled_by: ADMIN_EMAIL,
        cancel_reason: 'maintenance window over',
      },
    });
    // Asked twice: 409, nothing changes.
    const again = await cancel({ command_id: id });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe(
      `Cancellation already requested by ${ADMIN_EMAIL} at ${requestedAt}; the agent has not confirmed it yet`,
    );

    const hb = await heartbeat(agent);
    expect(hb.body).toEqual({
      success: true,
      received_at: clock.now().toISOString(),
      commands: [],
      cancel: [{ id, reason }],
    });
    expect((await poll(agent)).body).toEqual({ commands: [], cancel: [{ id, reason }] });

    // The agent stops it and reports failed (exit 130, the reason in stderr): stored and audited as cancelled.
    clock.advance(3_000);
    const failed = await report({
      command_id: id,
      agent_id: agent,
      status: 'failed',
      exit_code: 130,
      stderr: `command cancelled: the process tree was killed\n${reason}\n`,
    });
    expect(failed.status, failed.text).toBe(200);
    expect(await row(id)).toMatchObject({ status: 'failed', exit_code: 130 });
    const [event] = await published('command_failed', id);
    expect(event?.actor).toBe(agent);
    expect(event?.data).toMatchObject({
      exit_code: 130,
      reason: 'cancelled',
      cancelled_by: ADMIN_EMAIL,
      cancel_reason: 'maintenance window over',
    });
    // Told no more; the other running command was never part of it.
    expect((await heartbeat(agent)).body).not.toHaveProperty('cancel');
    expect((await row(other)).status).toBe('acked');
  });

  it('404 for an unknown command, 409 for a finished one, 400 for a malformed body, 401 without a token', async () => {
    expect((await cancel({ command_id: 987_654_321 })).status).toBe(404);
    expect((await cancel({ command_id: 987_654_321 })).body).toEqual({ error: 'Command not found' });
    const agent = await register('cxl-x');
    const id = await commandIn(agent, 'acked');
    expect((await report({ command_id: id, agent_id: agent, status: 'completed', exit_code: 0 })).status).toBe(200);
    const done = await cancel({ command_id: id });
    expect(done.status).toBe(409);
    expect(done.body).toEqual({ error: 'Command is already completed: nothing to cancel' });
    expect((await cancel({ command_id: 'x' })).status).toBe(400);
    expect((await cancel({ command_id: id, reason: 'r'.repeat(501) })).status).toBe(400);
    expect((await cancel({ command_id: id, extra: true })).status).toBe(400);
    const anonymous = await http(portal.url, 'POST', '/api/agent-commands/cancel', { json: { command_id: id } });
    expect(anonymous.status).toBe(401);
    // The agent's key cannot cancel.
    const byKey = await http(portal.url, 'POST', '/api/agent-commands/cancel', {
      headers: withKey(biz.key),
      json: { command_id: id },
    });
    expect(byKey.status).toBe(401);
  });

  it('a running command whose agent never confirms is failed by the sweep after 10 minutes', async () => {
    const agent = await register('cxl-u');
    const id = await commandIn(agent, 'acked');
    expect((await cancel({ command_id: id, reason: 'stuck' })).status).toBe(200);
    clock.advance(599_000);
    await sweepCommandLifecycle(portal.ctx);
    expect((await row(id)).status).toBe('acked');
    clock.advance(1_000);
    await sweepCommandLifecycle(portal.ctx);
    const stderr = `Cancelled by ${ADMIN_EMAIL}: stuck; the agent did not confirm it stopped the command within 10 minutes`;
    expect(await row(id)).toMatchObject({ status: 'failed', exit_code: null, stderr });
    const [event] = await published('command_failed', id);
    expect(event?.actor).toBe('system');
    expect(event?.data).toMatchObject({ reason: 'cancelled', cancelled_by: ADMIN_EMAIL, cancel_reason: 'stuck' });
    // The agent's late report is a 409.
    expect((await report({ command_id: id, agent_id: agent, status: 'failed', exit_code: 130 })).status).toBe(409);
  });
});

describe('expiry', () => {
  it('defaults to 24 hours; expires_in_seconds is bounded with a 400 naming it', async () => {
    const agent = await register('exp-d');
    const res = await asAdmin('POST', '/api/agent-commands', { agent_id: agent, command_type: 'restart' });
    expect(res.status).toBe(201);
    expect(res.body.commands[0].expires_at).toBe(new Date(clock.now().getTime() + 86_400_000).toISOString());
    const detail = await asAdmin('GET', `/api/agent-commands?command_id=${res.body.commands[0].id}`);
    expect(detail.body.command.expires_at).toBe(res.body.commands[0].expires_at);
    for (const bad of [59, 30 * 86_400 + 1, 1.5, 'soon']) {
      const refused = await asAdmin('POST', '/api/agent-commands', {
        agent_id: agent,
        command_type: 'restart',
        expires_in_seconds: bad,
      });
      expect(refused.status, String(bad)).toBe(400);
      expect(refused.body.error, String(bad)).toContain('expires_in_seconds');
    }
  });

  it('an expired pending command is never delivered and the sweep fails it as expired, once', async () => {
    const agent = await register('exp-p');
    const id = await queue(agent, { expires_in_seconds: 120 });
    const expiresAt = new Date(clock.now().getTime() + 120_000);
    clock.advance(120_000);
    expect((await heartbeat(agent)).body.commands).toEqual([]);
    expect((await poll(agent)).body.commands).toEqual([]);
    expect((await row(id)).status).toBe('pending');
    // Two replicas sweeping at once: the command is failed and audited once.
    await Promise.all([sweepCommandLifecycle(portal.ctx), sweepCommandLifecycle(portal.ctx)]);
    const stderr = `Expired at ${expiresAt.toISOString()} before it was delivered`;
    expect(await row(id)).toMatchObject({ status: 'failed', exit_code: null, stderr });
    const failed = (await audits(id)).filter((a) => a.event_type === 'command_failed');
    expect(failed).toEqual([
      {
        event_type: 'command_failed',
        actor: 'system',
        data: {
          command_id: id,
          agent_id: agent,
          command_type: 'run_scan',
          exit_code: null,
          session_id: null,
          completed_at: clock.now().toISOString(),
          reason: 'expired',
          expires_at: expiresAt.toISOString(),
        },
      },
    ]);
    expect(await published('command_failed', id)).toHaveLength(1);
  });

  it('a sent command past its expiry: the agent acking it gets 409 and it is failed as expired at once', async () => {
    const agent = await register('exp-s');
    const id = await queue(agent, { expires_in_seconds: 300 });
    expect((await heartbeat(agent)).body.commands.map((c: { id: number }) => c.id)).toEqual([id]);
    clock.advance(300_000);
    const ack = await report({ command_id: id, agent_id: agent, status: 'acked' });
    expect(ack.status).toBe(409);
    const expiredAt = new Date(clock.now().getTime()).toISOString();
    expect(ack.body.error).toBe(`Expired at ${expiredAt} before the agent started it: not to be run`);
    expect(await row(id)).toMatchObject({
      status: 'failed',
      stderr: `Expired at ${expiredAt} before the agent started it`,
    });
    expect((await published('command_failed', id)).map((e) => e.data['reason'])).toEqual(['expired']);
  });
});

describe('redelivery of a lost answer', () => {
  it('a sent command not acked within 10 minutes is delivered again, and can then be acked', async () => {
    const agent = await register('rdl');
    const id = await queue(agent);
    expect((await heartbeat(agent)).body.commands.map((c: { id: number }) => c.id)).toEqual([id]);
    clock.advance(599_000);
    expect((await heartbeat(agent)).body.commands).toEqual([]);
    clock.advance(1_000);
    // By the poll as well as the heartbeat; once per window.
    const again = await poll(agent);
    expect(again.body.commands.map((c: { id: number }) => c.id)).toEqual([id]);
    expect((await heartbeat(agent)).body.commands).toEqual([]);
    const { rows } = await db.query('SELECT status, sent_at FROM agent_commands WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ status: 'sent', sent_at: clock.now() });
    expect((await report({ command_id: id, agent_id: agent, status: 'acked' })).status).toBe(200);
    clock.advance(600_000);
    expect((await heartbeat(agent)).body.commands).toEqual([]);
  });

  it('the batch statement delivers again, skips expired commands and lists cancellations per agent', async () => {
    const [a, b] = [await register('bat-a'), await register('bat-b')];
    const sentA = await commandIn(a, 'sent');
    const runningB = await commandIn(b, 'acked');
    const expiredB = await queue(b, { expires_in_seconds: 60 });
    expect((await cancel({ command_id: runningB, reason: 'stop' })).status).toBe(200);
    clock.advance(600_000);
    const values = heartbeatBatchValues(
      [a, b].map((agent_id) => ({
        version: '4.2.3',
        sent_at: clock.now(),
        status: 'running',
        uptime_seconds: 1,
        schedules: null,
        system_info: null,
        now: clock.now(),
        client_id: biz.record.client_id,
        agent_id,
        can_receive: true,
      })),
      20,
    );
    const { rows } = await db.query(HEARTBEAT_BATCH_SQL, values);
    expect(rows.map((r) => [r.i, r.id === null ? null : Number(r.id), r.cancel])).toEqual([
      [0, sentA, null],
      [1, null, [{ id: runningB, by: ADMIN_EMAIL, reason: 'stop' }]],
    ]);
    expect((await row(expiredB)).status).toBe('pending');
  });
});

describe('deregistration', () => {
  it('fails the open commands, lists them in its event, and a re-enable runs none', async () => {
    const agent = await register('dereg');
    const sent = await commandIn(agent, 'sent');
    const running = await commandIn(agent, 'acked');
    const pending = [await queue(agent), await queue(agent)];
    const res = await asAdmin('PATCH', '/api/agents', { agent_id: agent, action: 'deregister' });
    expect(res.status, res.text).toBe(200);
    for (const id of [sent, ...pending])
      expect(await row(id)).toMatchObject({ status: 'failed', exit_code: null, stderr: 'Agent deregistered' });
    // A running one too: a deregistered agent's report is refused (403), so it would stay acked.
    expect(await row(running)).toMatchObject({
      status: 'failed',
      exit_code: null,
      stderr: 'Agent deregistered while the command ran: its report is no longer accepted',
    });
    await portal.ctx.events.drain();
    const event = events.filter((e) => e.event_type === 'agent_deregistered' && e.data['agent_id'] === agent);
    expect(event.map((e) => e.data['dropped_command_ids'])).toEqual([
      [sent, running, ...pending].sort((x, y) => x - y),
    ]);
    expect((await asAdmin('PATCH', '/api/agents', { agent_id: agent, action: 'reenable' })).status).toBe(200);
    expect((await heartbeat(agent)).body.commands).toEqual([]);
  });
});
