import fs from 'node:fs';
import type pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EXIT_CANCELLED } from '@svc/protocol';
import { openDb } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { ADMIN_EMAIL } from '@svc/test-support/portal';
import { commandHistory, finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { watchTree } from './helpers/process-watch.ts';
import { openScanGate, type ScanGate } from './helpers/scan-gate.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * With a real `svcd`: a run_scan cancelled while it runs has its `svc scan`
 * child and nmap killed and is reported failed with the admin's reason; a command cancelled
 * after delivery but before its turn is refused by the portal when it starts and is not run;
 * a delivered command handed out again (its answer or its `acked` lost) runs once.
 * The scans are held on a loopback port that accepts and never speaks (helpers/scan-gate.ts).
 */

const fixture = usePortalWithKey({ tier: 'business' });
let db: pg.Client;
let gate: ScanGate;
let daemon: SvcdProcess | undefined;

beforeAll(async () => {
  db = await openDb(fixture.portal);
  gate = await openScanGate();
});
afterEach(async () => {
  gate.release();
  await daemon?.stop();
  if (daemon) fs.rmSync(daemon.home, { recursive: true, force: true });
  daemon = undefined;
  gate.hold();
});
afterAll(async () => {
  await db?.end();
  await gate?.close();
});

async function startDaemon(): Promise<SvcdProcess> {
  daemon = await startSvcd({
    configs: { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, { DAEMON_POLL_INTERVAL: '1' }) },
  });
  await daemon.waitFor(/msg="svcd started"/);
  await untilRegistered(fixture.portal, daemon.agentId);
  return daemon;
}

const heldScan = (agentId: string) =>
  queueCommand(fixture.portal, agentId, 'run_scan', {
    targets: '127.0.0.1',
    profile: 'quick',
    ports: `T:${gate.port}`,
  });

async function cancel(id: number, reason?: string) {
  const res = await http(fixture.portal.url, 'POST', '/api/agent-commands/cancel', {
    headers: withToken(await fixture.portal.adminToken()),
    json: reason === undefined ? { command_id: id } : { command_id: id, reason },
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${timeoutMs} ms: ${what}\n${daemon?.output() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const statusOf = async (id: number) => (await commandHistory(fixture.portal, id)).command.status;
const lines = (re: RegExp) => (daemon?.output() ?? '').split('\n').filter((l) => re.test(l));

describe('svcd and cancelled commands', () => {
  it('a running run_scan is stopped: its nmap is killed and it is failed with exit 130 and the reason', async () => {
    const d = await startDaemon();
    const watch = watchTree(d.pid, 50);
    const id = await heldScan(d.agentId);
    await until('the scan is acked and nmap reached the held port', async () => {
      return (await statusOf(id)) === 'acked' && gate.accepted() > 0;
    });
    expect(watch.pidsNamed('nmap').length, watch.names().join(',')).toBeGreaterThan(0);

    const answer = await cancel(id, 'change window closed');
    expect(answer.command.cancel_requested).toMatchObject({ by: ADMIN_EMAIL, reason: 'change window closed' });
    const done = await finishedCommand(fixture.portal, id, 60_000);
    watch.stop();
    const reason = `Cancelled by ${ADMIN_EMAIL}: change window closed`;
    expect(done.command.status, d.output()).toBe('failed');
    expect(done.result?.exit_code).toBe(EXIT_CANCELLED);
    expect(done.result?.stderr).toContain('command cancelled: the process tree was killed\n');
    expect(done.result?.stderr.endsWith(`${reason}\n`), done.result?.stderr).toBe(true);
    // Nothing of the scan's tree is left: svc scan and nmap are gone.
    expect(watch.alive()).toEqual([]);
    expect(lines(new RegExp(`command ${id} cancelled by the portal: stopping it`))).toHaveLength(1);

    // The daemon goes on: the next command runs.
    const next = await queueCommand(fixture.portal, d.agentId, 'set_log_level', { level: 'info' });
    expect((await finishedCommand(fixture.portal, next)).command.status).toBe('completed');
  }, 180_000);

  it('a command cancelled after delivery but before its turn is refused at its start and not run', async () => {
    const d = await startDaemon();
    const scan = await heldScan(d.agentId);
    await until('the scan runs', async () => (await statusOf(scan)) === 'acked' && gate.accepted() > 0);
    const waiting = await queueCommand(fixture.portal, d.agentId, 'set_log_level', { level: 'debug' });
    await until('the second command is delivered', async () => (await statusOf(waiting)) === 'sent');
    const answer = await cancel(waiting, 'not needed');
    expect(answer.command.status).toBe('failed');

    gate.release();
    expect((await finishedCommand(fixture.portal, scan, 120_000)).command.status).toBe('completed');
    await d.waitFor(new RegExp(`command ${waiting} set_log_level not run: the portal refused its start`), 30_000);
    const after = await commandHistory(fixture.portal, waiting);
    expect(after.command.status).toBe('failed');
    expect(after.result?.stderr).toBe(`Cancelled by ${ADMIN_EMAIL}: not needed`);
    // Never run: the level never changed.
    expect(lines(/log level changed/)).toEqual([]);
  }, 240_000);

  it('a command delivered again runs once; a running one whose acked was lost is reported started again', async () => {
    const d = await startDaemon();
    const scan = await heldScan(d.agentId);
    await until('the scan runs', async () => (await statusOf(scan)) === 'acked' && gate.accepted() > 0);
    const waiting = await queueCommand(fixture.portal, d.agentId, 'set_log_level', { level: 'info' });
    await until('the second command is delivered', async () => (await statusOf(waiting)) === 'sent');
    // As if the answers were lost: both went out 11 minutes ago, and the scan's acked never arrived.
    await db.query(
      `UPDATE agent_commands SET status = 'sent', sent_at = now() - interval '11 minutes' WHERE id = ANY($1::bigint[])`,
      [[scan, waiting]],
    );
    await d.waitFor(new RegExp(`command ${waiting} was delivered again while it waits its turn; it runs once`));
    await d.waitFor(new RegExp(`command ${scan} was delivered again; it runs only once: its start is reported again`));
    await until('the scan is acked again', async () => (await statusOf(scan)) === 'acked');

    gate.release();
    expect((await finishedCommand(fixture.portal, scan, 120_000)).command.status).toBe('completed');
    expect((await finishedCommand(fixture.portal, waiting)).command.status).toBe('completed');
    expect(lines(new RegExp(`command ${scan} run_scan started`))).toHaveLength(1);
    expect(lines(new RegExp(`command ${waiting} set_log_level started`))).toHaveLength(1);
  }, 240_000);
});
