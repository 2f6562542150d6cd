import fs from 'node:fs';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DeliveredCommand } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createCommandRunner } from '@svc/agent/commands';
import { Journal, journalFileOf } from '@svc/agent/journal';
import type { CommandHost, ScheduleChange } from '@svc/agent/types';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { deadAddress } from '@svc/test-support/ports';
import { commandHistory, queueCommand } from './helpers/agent-admin.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { watchTree } from './helpers/process-watch.ts';
import { NODE_COMPILE_CACHE, SVC } from '@svc/test-support/cli';
import { listenOnQuickPort } from './helpers/quick-port.ts';
import { openScanGate } from './helpers/scan-gate.ts';

/**
 * The command runner against a real portal: commands queued by the admin over HTTP, delivered
 * by a heartbeat, run by the runner (real `svc` and nmap children for run_scan and push_session),
 * and their results read back from the command history.
 */

const fixture = usePortalWithKey();
const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) fs.rmSync(d, { recursive: true, force: true });
});

interface Recorded {
  logs: string[];
  config: [string, string][];
  levels: string[];
  schedules: [string, string, ScheduleChange][];
  restarts: number;
  reloads: number;
  shutdowns: boolean[];
}

/** A CommandHost whose portal calls go to whichever real client `portal.use` names (for outages). */
function agentHost(over: Partial<CommandHost> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-runner-'));
  tmp.push(dir);
  const agentId = `svcd_${randomBytes(4).toString('hex')}`;
  const rec: Recorded = { logs: [], config: [], levels: [], schedules: [], restarts: 0, reloads: 0, shutdowns: [] };
  const clientFor = (uploadUrl: string) =>
    createPortalClient({ target: { uploadUrl, apiKey: fixture.key, jwt: null, timeoutS: 5 } });
  let current: PortalClient = clientFor(fixture.uploadUrl);
  const portal = new Proxy({} as PortalClient, { get: (_t, k) => current[k as keyof PortalClient] });
  const logAs =
    (level: string) =>
    (m: string): void => {
      rec.logs.push(`${level}: ${m}`);
    };
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  // The children's temp directory, of this host alone: what a scan leaves there is checked.
  const tmpDir = path.join(dir, 'tmp');
  fs.mkdirSync(tmpDir);
  const host: CommandHost = {
    agentId,
    stateDir: path.join(dir, 'state'),
    portal,
    portalOrigin: 'http://127.0.0.1:1',
    commandTimeoutMs: 120_000,
    scanTimeoutMs: 120_000,
    sessionsRoot: path.join(dir, 'sessions'),
    svcCommand: [SVC],
    childEnv: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: tmpDir,
      LANG: 'C.UTF-8',
      NODE_COMPILE_CACHE,
      CONSULTATION_API_URL: fixture.uploadUrl,
      SVC_API_KEY: fixture.key,
    },
    log: { debug: logAs('debug'), info: logAs('info'), warning: logAs('warning'), error: logAs('error') },
    schedules: {
      has: (id) => id === 'nightly',
      apply: (id, action, change) => {
        rec.schedules.push([id, action, change]);
        return `schedule ${id} ${action}d`;
      },
    },
    applyConfig: (k, v) => rec.config.push([k, v]),
    setLogLevel: (l) => rec.levels.push(l),
    restart: () => rec.restarts++,
    reload: () => rec.reloads++,
    shutdown: (g) => rec.shutdowns.push(g),
    stopping: () => false,
    install: { kind: 'image' },
    ...over,
  };
  const heartbeat = async (): Promise<DeliveredCommand[]> =>
    (
      await current.heartbeat({
        agent_id: agentId,
        version: '1.0.0',
        timestamp: new Date().toISOString(),
        status: 'running',
        uptime_seconds: 1,
      })
    ).commands;
  const use = async (where: 'portal' | 'nowhere') => {
    current = clientFor(
      where === 'portal' ? fixture.uploadUrl : `http://127.0.0.1:${(await deadAddress()).port}/api/upload`,
    );
  };
  return { host, rec, agentId, heartbeat, use, tmpDir };
}

describe('the command runner with a real portal', () => {
  it('runs delivered commands in received order, reports each, and stops the batch at restart', async () => {
    const { host, rec, agentId, heartbeat } = agentHost();
    await heartbeat();
    const { portal } = fixture;
    const level = await queueCommand(portal, agentId, 'set_log_level', { level: 'debug' });
    const config = await queueCommand(portal, agentId, 'push_config', {
      config_key: 'ALERT_RISK_THRESHOLD',
      config_value: 75,
    });
    const schedule = await queueCommand(portal, agentId, 'update_schedule', {
      schedule_id: 'weekly',
      cron: '0 1 * * 1',
    });
    const restart = await queueCommand(portal, agentId, 'restart');
    const after = await queueCommand(portal, agentId, 'update_schedule', { schedule_id: 'nightly', action: 'delete' });

    const delivered = await heartbeat();
    expect(delivered.map((c) => c.id)).toEqual([level, config, schedule, restart, after]);
    const runner = createCommandRunner(host);
    await runner.run(delivered);

    expect(await commandHistory(portal, level)).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: 'log level debug\n', stderr: '', session_id: null },
    });
    expect(rec.levels).toEqual(['debug']);
    expect((await commandHistory(portal, config)).result).toMatchObject({
      exit_code: 0,
      stdout: 'ALERT_RISK_THRESHOLD=75 applied\n',
    });
    expect(rec.config).toEqual([['ALERT_RISK_THRESHOLD', '75']]);
    expect(await commandHistory(portal, schedule)).toMatchObject({
      command: { status: 'failed' },
      result: { exit_code: 1, stderr: 'update_schedule: no loaded schedule weekly\n' },
    });
    expect(await commandHistory(portal, restart)).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: 'restarting in place\n' },
    });
    expect(rec.restarts).toBe(1);
    // Delivered after the restart: kept in the journal, not run by this process.
    expect((await commandHistory(portal, after)).command.status).toBe('sent');
    expect(rec.schedules).toEqual([]);

    // The next start (a re-exec) runs what was left, once; a second delivery of any id is refused.
    const next = createCommandRunner(host);
    await next.recover();
    expect((await commandHistory(portal, after)).result).toMatchObject({
      exit_code: 0,
      stdout: 'schedule nightly deleted\n',
    });
    expect(rec.schedules).toEqual([['nightly', 'delete', { cron: undefined, profile: undefined, targets: undefined }]]);
    await next.run(delivered);
    expect(rec.levels).toEqual(['debug']);
    expect(rec.schedules).toHaveLength(1);
    expect(rec.logs.filter((l) => l.includes('was delivered again'))).toHaveLength(delivered.length);
  });

  it('keeps reports on disk through a portal outage and sends them in order when it is back', async () => {
    const { host, rec, agentId, heartbeat, use } = agentHost();
    await heartbeat();
    const id = await queueCommand(fixture.portal, agentId, 'set_log_level', { level: 'warning' });
    const delivered = await heartbeat();
    await use('nowhere');
    const runner = createCommandRunner(host);
    await runner.run(delivered);
    expect(rec.levels).toEqual(['warning']);
    expect((await commandHistory(fixture.portal, id)).command.status).toBe('sent');
    const journal = Journal.open(host.stateDir, () => undefined, journalFileOf(host.portalOrigin, agentId));
    expect(journal.outbox.map((r) => r.status)).toEqual(['acked', 'completed']);
    expect(rec.logs.some((l) => l.startsWith(`warning: status report kept for later: command ${id} acked`))).toBe(true);

    // A new process (as after a restart) finds them on disk.
    await use('portal');
    await createCommandRunner(host).flush();
    expect(await commandHistory(fixture.portal, id)).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: 'log level warning\n' },
    });
    expect(Journal.open(host.stateDir, () => undefined, journalFileOf(host.portalOrigin, agentId)).outbox).toEqual([]);
  });

  it('reports a command cut short by a crash as failed on recovery, never runs it again, and drops what the portal refuses for good', async () => {
    const { host, rec, agentId, heartbeat } = agentHost();
    await heartbeat();
    const id = await queueCommand(fixture.portal, agentId, 'set_log_level', { level: 'error' });
    const [delivered] = await heartbeat();
    // What a kill -9 leaves: the command started (acked queued), its report never written. Before
    // it, a report the portal will refuse (a command id it never issued to this agent).
    const journal = Journal.open(host.stateDir, () => undefined, journalFileOf(host.portalOrigin, agentId));
    const stranger = { ...(delivered as DeliveredCommand), id: 2_000_000_000 };
    journal.enqueue([stranger, delivered as DeliveredCommand]);
    journal.begin((c) => ({ command_id: c.id, agent_id: agentId, status: 'acked' }), new Date());
    journal.finish({ command_id: stranger.id, agent_id: agentId, status: 'completed', exit_code: 0 });
    journal.begin((c) => ({ command_id: c.id, agent_id: agentId, status: 'acked' }), new Date('2026-11-25T17:00:00Z'));

    const runner = createCommandRunner(host);
    await runner.recover();
    expect(await commandHistory(fixture.portal, id)).toMatchObject({
      command: { status: 'failed' },
      result: {
        exit_code: 125,
        stdout: '',
        stderr:
          'interrupted: the agent stopped while set_log_level ran (started 2026-11-25T17:00:00.000Z); it is not run again\n',
      },
    });
    expect(rec.levels).toEqual([]);
    expect(
      rec.logs.filter((l) => l.startsWith('warning: status report refused by the portal, dropped: command 2000000000')),
    ).toHaveLength(2);
    await runner.run([delivered as DeliveredCommand]);
    expect(rec.levels).toEqual([]);
  });
});

describe('run_scan and push_session through real svc processes', () => {
  let server: net.Server;
  let port = 0;
  beforeAll(async () => {
    server = await listenOnQuickPort();
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => {
    server.close();
  });

  it('run_scan with upload links the uploaded session; push_session uploads the latest', async () => {
    const { host, agentId, heartbeat } = agentHost();
    await heartbeat();
    const scan = await queueCommand(fixture.portal, agentId, 'run_scan', {
      targets: '127.0.0.1',
      profile: 'quick',
      upload: true,
    });
    const push = await queueCommand(fixture.portal, agentId, 'push_session');
    await createCommandRunner(host).run(await heartbeat());

    const scanned = await commandHistory(fixture.portal, scan);
    expect(scanned.command.status, JSON.stringify(scanned.result)).toBe('completed');
    const sessionId = scanned.result?.session_id as string;
    expect(sessionId).toMatch(/^\d{8}_\d{6}/);
    expect(JSON.parse(scanned.result?.stdout as string)).toMatchObject({
      // The session directory by its name: the host's paths stay on the host.
      path: sessionId.slice(0, 15),
      upload: { session_id: sessionId },
    });
    const client = createPortalClient({
      target: { uploadUrl: fixture.uploadUrl, apiKey: fixture.key, jwt: null, timeoutS: 10 },
    });
    const stored = JSON.parse((await client.download(sessionId)).toString('utf8'));
    expect(stored.metadata.target).toBe('127.0.0.1');
    // The port the test opened is seen (other quick-profile ports may be open on this host too).
    expect(stored.topology.nodes).toMatchObject([{ ip: '127.0.0.1' }]);
    expect(stored.topology.nodes[0].port_count).toBeGreaterThanOrEqual(1);
    expect(port).toBeGreaterThan(0);

    const pushed = await commandHistory(fixture.portal, push);
    expect(pushed.command.status, JSON.stringify(pushed.result)).toBe('completed');
    expect(pushed.result?.session_id).toMatch(/^\d{8}_\d{6}/);
  });

  it('past SVC_SCAN_TIMEOUT the scan and its nmap are killed, the command fails with exit 124 and no temp file is left', async () => {
    // A port that never answers holds the full scan: it cannot end before its deadline. The
    // deadline leaves a loaded machine room to start svc and its nmap, which the kill must meet.
    const gate = await openScanGate();
    onTestFinished(() => gate.close());
    const { host, agentId, heartbeat, tmpDir } = agentHost({ scanTimeoutMs: 10_000 });
    await heartbeat();
    const id = await queueCommand(fixture.portal, agentId, 'run_scan', { targets: '127.0.0.1', profile: 'full' });
    const delivered = await heartbeat();
    // Every process of the tree as it runs (nmap leads its own group under svc), to check none outlives the kill.
    const watch = watchTree(process.pid);
    const started = Date.now();
    try {
      await createCommandRunner(host).run(delivered);
    } finally {
      watch.stop();
    }
    // Killed at the deadline: the held scan alone would last minutes.
    expect(Date.now() - started).toBeLessThan(40_000);
    const h = await commandHistory(fixture.portal, id);
    expect(h.command.status).toBe('failed');
    expect(h.result?.exit_code).toBe(124);
    expect(h.result?.stderr).toContain('command timed out: the process tree was killed');
    expect(h.result?.session_id).toBeNull();
    expect(watch.names()).toContain('nmap');
    expect(watch.alive()).toEqual([]);
    // The killed scan could not remove its own temp directories (the tools' output is the customer's).
    expect(fs.readdirSync(tmpDir)).toEqual([]);
  });
});
