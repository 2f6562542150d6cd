import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DomainEvent } from '../src/events/bus.ts';
import { createLicense, FakeClock, heartbeatBody, newAgentId, type LicenseFixture } from '@svc/test-support/factories';
import { http, withKey, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { useFleetPortal } from '@svc/test-support/fleet-portal';

/**
 * Progress reports: PATCH /api/agent-commands with status `acked` and a `progress`
 * for a command that is acked already stores the progress and its time and nothing else; the
 * admin history answers it. docs/api.md#agents-and-commands, "Progress reports".
 */

let portal: TestPortal;
let db: pg.Client;
let admin: string;
const clock = new FakeClock();
const events: DomainEvent[] = [];
useFleetPortal((f) => ({ portal, db, admin } = f), { clock, events });

let biz: LicenseFixture;
let defaultAgent: string;

const report = (body: Record<string, unknown>) =>
  http(portal.url, 'PATCH', '/api/agent-commands', { headers: withKey(biz.key), json: body });
const history = (query: string) =>
  http(portal.url, 'GET', `/api/agent-commands?${query}`, { headers: withToken(admin) });

beforeAll(async () => {
  biz = await createLicense(portal, { tier: 'business' });
  defaultAgent = await registered('prog');
});

async function registered(prefix: string): Promise<string> {
  const id = newAgentId(prefix);
  const hb = await http(portal.url, 'POST', '/api/health', { headers: withKey(biz.key), json: heartbeatBody(id) });
  expect(hb.status, hb.text).toBe(200);
  return id;
}

/** A run_scan command driven to `status` through the real transitions. */
async function scanCommand(
  status: 'pending' | 'sent' | 'acked' | 'completed' | 'failed',
  agent = defaultAgent,
): Promise<number> {
  const queued = await http(portal.url, 'POST', '/api/agent-commands', {
    headers: withToken(admin),
    json: { agent_id: agent, command_type: 'run_scan', payload: { targets: '10.9.9.9' } },
  });
  expect(queued.status, queued.text).toBe(201);
  const id = queued.body.commands[0].id as number;
  if (status === 'pending') return id;
  const polled = await http(portal.url, 'GET', `/api/agent-commands?agent_id=${agent}`, { headers: withKey(biz.key) });
  expect(polled.body.commands.map((c: { id: number }) => c.id)).toContain(id);
  if (status === 'sent') return id;
  expect((await report({ command_id: id, agent_id: agent, status: 'acked' })).status).toBe(200);
  if (status === 'acked') return id;
  expect(
    (await report({ command_id: id, agent_id: agent, status, exit_code: status === 'completed' ? 0 : 1 })).status,
  ).toBe(200);
  return id;
}

async function commandRow(id: number) {
  const { rows } = await db.query(
    'SELECT status, sent_at, acked_at, completed_at, progress_task, progress_percent, progress_at FROM agent_commands WHERE id = $1',
    [id],
  );
  return rows[0] as Record<string, unknown>;
}

async function auditCount(id: number): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM audit_events WHERE data->>'command_id' = $1`, [
    String(id),
  ]);
  return rows[0].n as number;
}

describe('progress reports', () => {
  it('on an acked command: stored with its time, answered by the history, nothing else changes', async () => {
    const id = await scanCommand('acked');
    const ackedAt = clock.now();
    const before = await commandRow(id);
    expect(before).toEqual({
      status: 'acked',
      sent_at: ackedAt,
      acked_at: ackedAt,
      completed_at: null,
      progress_task: null,
      progress_percent: null,
      progress_at: null,
    });
    expect((await history(`command_id=${id}`)).body.command.progress).toBeNull();
    const audits = await auditCount(id);
    await portal.ctx.events.drain();
    const seen = events.length;

    clock.advance(15_000);
    const res = await report({
      command_id: id,
      agent_id: defaultAgent,
      status: 'acked',
      progress: { task: 'SYN Stealth Scan', percent: 45.2 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, command_id: id, status: 'acked' });
    expect(await commandRow(id)).toEqual({
      ...before,
      progress_task: 'SYN Stealth Scan',
      progress_percent: 45.2,
      progress_at: clock.now(),
    });
    const progress = { task: 'SYN Stealth Scan', percent: 45.2, reported_at: clock.now().toISOString() };
    const detail = await history(`command_id=${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.command.progress).toEqual(progress);
    expect(detail.body.command.status).toBe('acked');
    expect(detail.body.result).toBeNull();
    const list = await history('limit=500');
    expect(list.body.commands.find((c: { id: number }) => c.id === id).progress).toEqual(progress);

    // A later report replaces the earlier one.
    clock.advance(15_000);
    const next = await report({
      command_id: id,
      agent_id: defaultAgent,
      status: 'acked',
      progress: { task: 'Service scan', percent: 100 },
    });
    expect(next.status).toBe(200);
    expect((await history(`command_id=${id}`)).body.command.progress).toEqual({
      task: 'Service scan',
      percent: 100,
      reported_at: clock.now().toISOString(),
    });

    // No audit event, no domain event (webhooks are sent from these).
    expect(await auditCount(id)).toBe(audits);
    await portal.ctx.events.drain();
    expect(events.slice(seen)).toEqual([]);

    // The command still ends as before, and keeps its last progress.
    const done = await report({ command_id: id, agent_id: defaultAgent, status: 'completed', exit_code: 0 });
    expect(done.status).toBe(200);
    expect((await history(`command_id=${id}`)).body.command).toMatchObject({
      status: 'completed',
      progress: { task: 'Service scan', percent: 100, reported_at: clock.now().toISOString() },
    });
  });

  it("names the pipeline's stage when the report does; a stage outside the list is a 400", async () => {
    const id = await scanCommand('acked');
    const res = await report({
      command_id: id,
      agent_id: defaultAgent,
      status: 'acked',
      progress: { task: 'Uploading to the portal', percent: 0, stage: 'upload' },
    });
    expect(res.status, res.text).toBe(200);
    expect((await history(`command_id=${id}`)).body.command.progress).toEqual({
      task: 'Uploading to the portal',
      percent: 0,
      stage: 'upload',
      reported_at: clock.now().toISOString(),
    });
    const before = await commandRow(id);
    const bad = await report({
      command_id: id,
      agent_id: defaultAgent,
      status: 'acked',
      progress: { task: 'Coffee', percent: 0, stage: 'coffee' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid body: progress\.stage /);
    expect(await commandRow(id)).toEqual(before);
  });

  it('a command that never reported progress answers progress: null', async () => {
    const id = await scanCommand('completed');
    const detail = await history(`command_id=${id}`);
    expect(detail.body.command.progress).toBeNull();
  });

  it.each([['pending'], ['sent'], ['completed'], ['failed']] as const)(
    'on a %s command is a 409 that changes nothing',
    async (status) => {
      const id = await scanCommand(status);
      const before = await commandRow(id);
      const res = await report({
        command_id: id,
        agent_id: defaultAgent,
        status: 'acked',
        progress: { task: 'Ping Scan', percent: 1 },
      });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: `Progress can be reported only for an acked command; this one is ${status}` });
      expect(await commandRow(id)).toEqual(before);
    },
  );

  it('acked → acked without progress stays a 409', async () => {
    const id = await scanCommand('acked');
    const res = await report({ command_id: id, agent_id: defaultAgent, status: 'acked' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'Illegal status transition: acked -> acked' });
  });

  it.each([
    [{ task: 'SYN Stealth Scan', percent: 100.5 }, 'Invalid body: progress.percent must be <= 100'],
    [{ task: 'SYN Stealth Scan', percent: -1 }, 'Invalid body: progress.percent must be >= 0'],
    [{ task: 'SYN Stealth Scan', percent: '45' }, 'Invalid body: progress.percent must be number'],
    [{ task: 'x'.repeat(65), percent: 1 }, 'Invalid body: progress.task must NOT have more than 64 characters'],
    [{ task: '', percent: 1 }, 'Invalid body: progress.task must NOT have fewer than 1 characters'],
    [{ task: 'SYN', percent: 1, eta: 3 }, 'Invalid body: progress must NOT have additional properties (eta)'],
    [{ percent: 1 }, 'Invalid body: missing required field task'],
    ['45%', 'Invalid body: progress must be object'],
    [{ task: 'SYN\nStealth', percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
    [{ task: 'SYN\u001b[31m', percent: 1 }, 'progress.task must be one line of 1 to 64 characters'],
  ])('a malformed progress %j is a 400: %s', async (progress, error) => {
    const id = await scanCommand('acked');
    const before = await commandRow(id);
    const res = await report({ command_id: id, agent_id: defaultAgent, status: 'acked', progress });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
    expect(await commandRow(id)).toEqual(before);
  });

  it('progress with a status other than acked is a 400 and ends nothing', async () => {
    const id = await scanCommand('acked');
    const before = await commandRow(id);
    const res = await report({
      command_id: id,
      agent_id: defaultAgent,
      status: 'completed',
      exit_code: 0,
      progress: { task: 'Service scan', percent: 100 },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'progress is reported with status acked, not completed' });
    expect(await commandRow(id)).toEqual(before);
  });

  it("another agent's command is a 404, as for every report", async () => {
    const id = await scanCommand('acked');
    const other = await createLicense(portal, { tier: 'business' });
    const res = await http(portal.url, 'PATCH', '/api/agent-commands', {
      headers: withKey(other.key),
      json: { command_id: id, agent_id: defaultAgent, status: 'acked', progress: { task: 'Ping Scan', percent: 1 } },
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Agent not found' });
  });
});

describe('the fleet listing', () => {
  const fleetView = async (id: string) => {
    const res = await http(portal.url, 'GET', `/api/health?agents=true&q=${id}`, { headers: withToken(admin) });
    expect(res.status, res.text).toBe(200);
    return (res.body.agents as { agent_id: string; running: unknown }[]).find((a) => a.agent_id === id);
  };

  it('shows the commands each agent runs now (acked), with their latest progress', async () => {
    const a = await registered('fleetprog');
    expect((await fleetView(a))?.running).toEqual([]);
    const done = await scanCommand('completed', a);
    const running = await scanCommand('acked', a);
    const ackedAt = clock.now().toISOString();
    await scanCommand('pending', a);
    expect(done).toBeLessThan(running);
    expect((await fleetView(a))?.running).toEqual([
      { id: running, command_type: 'run_scan', acked_at: ackedAt, progress: null },
    ]);

    clock.advance(15_000);
    const res = await report({
      command_id: running,
      agent_id: a,
      status: 'acked',
      progress: { task: 'SYN Stealth Scan', percent: 12.5 },
    });
    expect(res.status, res.text).toBe(200);
    expect((await fleetView(a))?.running).toEqual([
      {
        id: running,
        command_type: 'run_scan',
        acked_at: ackedAt,
        progress: { task: 'SYN Stealth Scan', percent: 12.5, reported_at: clock.now().toISOString() },
      },
    ]);

    expect((await report({ command_id: running, agent_id: a, status: 'completed', exit_code: 0 })).status).toBe(200);
    expect((await fleetView(a))?.running).toEqual([]);
  });
});
