import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createPortalClient, scheduleId } from '@svc/client/kit';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { freePort } from '@svc/test-support/ports';
import { commandHistory, finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { agentsApi } from './helpers/agents-api.ts';
import { startPortalWithKey, usePortalWithKey } from './helpers/portal-with-key.ts';
import { watchTree } from './helpers/process-watch.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';
import { REPO } from '@svc/test-support/cli';
import { listenOnQuickPort } from './helpers/quick-port.ts';
import { openScanGate } from './helpers/scan-gate.ts';

/**
 * Commands through a real `svcd` process: queued by the admin over HTTP, delivered by the
 * daemon's heartbeat, run by its command runner (real `svc` and nmap children), the results read
 * back from the command history.
 */

const fixture = usePortalWithKey({ tier: 'business' });
const running: SvcdProcess[] = [];
const homes: string[] = [];
afterAll(async () => {
  await Promise.all(running.map((d) => d.stop()));
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
});

const SCHEDULE = { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '0 3 1 1 *', SCAN_PROFILE: 'quick' };

async function agent(
  opts: { portal?: TestPortal; url?: string; key?: string; conf?: Record<string, string> } = {},
  reuse?: SvcdProcess,
) {
  const daemon = await startSvcd({
    ...(reuse ? { agentId: reuse.agentId, home: reuse.home, configDir: reuse.configDir } : {}),
    configs: {
      'a-portal.conf': portalConf(opts.url ?? fixture.uploadUrl, opts.key ?? fixture.key, opts.conf),
      'nightly.conf': SCHEDULE,
    },
  });
  running.push(daemon);
  if (!reuse) homes.push(daemon.home);
  await daemon.waitFor(/msg="svcd started"/);
  await untilRegistered(opts.portal ?? fixture.portal, daemon.agentId);
  return daemon;
}

async function untilStatus(portal: TestPortal, id: number, status: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while ((await commandHistory(portal, id)).command.status !== status) {
    if (Date.now() > end) throw new Error(`command ${id} never became ${status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const commandLines = (out: string, id: number) => out.split('\n').filter((l) => l.includes(`command ${id} `));

describe('svcd runs every command type', () => {
  it('in-process commands, run_scan with upload, push_session, restart in place and shutdown', async () => {
    const server = await listenOnQuickPort();
    try {
      const daemon = await agent();
      const { portal } = fixture;
      const nightly = scheduleId(SCHEDULE.SCAN_TARGETS, SCHEDULE.SCAN_CRON);
      const ids = {
        level: await queueCommand(portal, daemon.agentId, 'set_log_level', { level: 'debug' }),
        config: await queueCommand(portal, daemon.agentId, 'push_config', {
          config_key: 'DAEMON_SCAN_RETRY_MAX',
          config_value: 5,
        }),
        schedule: await queueCommand(portal, daemon.agentId, 'update_schedule', {
          schedule_id: nightly,
          cron: '30 4 1 1 *',
        }),
        unknownSchedule: await queueCommand(portal, daemon.agentId, 'update_schedule', { schedule_id: 'sched_none' }),
        scan: await queueCommand(portal, daemon.agentId, 'run_scan', {
          targets: '127.0.0.1',
          profile: 'quick',
          upload: true,
        }),
        push: await queueCommand(portal, daemon.agentId, 'push_session'),
        restart: await queueCommand(portal, daemon.agentId, 'restart'),
        afterRestart: await queueCommand(portal, daemon.agentId, 'set_log_level', { level: 'info' }),
      };

      expect(await finishedCommand(portal, ids.level)).toMatchObject({
        command: { status: 'completed' },
        result: { exit_code: 0, stdout: 'log level debug\n', stderr: '', session_id: null },
      });
      expect((await finishedCommand(portal, ids.config)).result).toMatchObject({
        exit_code: 0,
        stdout: 'DAEMON_SCAN_RETRY_MAX=5 applied\n',
      });
      const overrides = path.join(daemon.configDir, '.c2_overrides.conf');
      expect(fs.readFileSync(overrides, 'utf8')).toContain('DAEMON_SCAN_RETRY_MAX=5\n');
      expect(fs.statSync(overrides).mode & 0o777).toBe(0o600);
      expect(await finishedCommand(portal, ids.schedule)).toMatchObject({
        command: { status: 'completed' },
        result: { exit_code: 0 },
      });
      expect(await finishedCommand(portal, ids.unknownSchedule)).toMatchObject({
        command: { status: 'failed' },
        result: { exit_code: 1, stderr: 'update_schedule: no loaded schedule sched_none\n' },
      });

      const scan = await finishedCommand(portal, ids.scan, 120_000);
      expect(scan.command.status, JSON.stringify(scan.result)).toBe('completed');
      const sessionId = scan.result?.session_id as string;
      expect(sessionId).toMatch(/^\d{8}_\d{6}/);
      const client = createPortalClient({
        target: { uploadUrl: fixture.uploadUrl, apiKey: fixture.key, jwt: null, timeoutS: 10 },
      });
      expect(JSON.parse((await client.download(sessionId)).toString('utf8')).topology.nodes).toMatchObject([
        { ip: '127.0.0.1' },
      ]);
      const pushed = await finishedCommand(portal, ids.push, 60_000);
      expect(pushed.command.status, JSON.stringify(pushed.result)).toBe('completed');
      expect(pushed.result?.session_id).toMatch(/^\d{8}_\d{6}/);

      expect(await finishedCommand(portal, ids.restart)).toMatchObject({
        command: { status: 'completed' },
        result: { exit_code: 0, stdout: 'restarting in place\n' },
      });
      // Re-executed in place: the same process, started again, and it ran what followed the restart.
      expect((await finishedCommand(portal, ids.afterRestart)).result).toMatchObject({ stdout: 'log level info\n' });
      expect(daemon.output().match(/msg="svcd started"/g)).toHaveLength(2);
      expect(daemon.child.exitCode).toBeNull();
      // Through bin/svcd again: node runs the bundle, in lite mode.
      expect(fs.readFileSync(`/proc/${daemon.pid}/cmdline`, 'utf8').split('\0')).toEqual(
        expect.arrayContaining(['--lite-mode', path.join(REPO, 'packages/agent/dist/svcd.mjs')]),
      );
      for (const id of Object.values(ids))
        expect(commandLines(daemon.output(), id).filter((l) => / started/.test(l))).toHaveLength(1);

      const shutdown = await queueCommand(portal, daemon.agentId, 'shutdown');
      expect(await daemon.exited).toEqual({ code: 0, signal: null });
      expect(await commandHistory(portal, shutdown)).toMatchObject({
        command: { status: 'completed' },
        result: { exit_code: 0, stdout: 'shutting down gracefully\n' },
      });
    } finally {
      server.close();
    }
  });

  it('run_scan has SVC_SCAN_TIMEOUT, not SVC_CMD_TIMEOUT: past it the scan and its nmap are killed, failed, exit 124', async () => {
    // A port that never answers holds the full scan: it cannot end before its deadline. The
    // deadline leaves a loaded machine room to start svc and its nmap, which the kill must meet.
    const gate = await openScanGate();
    const daemon = await agent({ conf: { SVC_CMD_TIMEOUT: '600', SVC_SCAN_TIMEOUT: '10' } });
    const watch = watchTree(daemon.pid);
    try {
      const id = await queueCommand(fixture.portal, daemon.agentId, 'run_scan', {
        targets: '127.0.0.1',
        profile: 'full',
      });
      const h = await finishedCommand(fixture.portal, id, 120_000);
      expect(h.command.status).toBe('failed');
      expect(h.result).toMatchObject({ exit_code: 124, session_id: null });
      expect(h.result?.stderr).toContain('command timed out: the process tree was killed');
    } finally {
      watch.stop();
      await gate.close();
    }
    expect(watch.names()).toContain('nmap');
    expect(watch.alive()).toEqual([]);
    await daemon.stop();
  });

  it('kill -9 mid-command: the next start reports it failed and does not run it again', async () => {
    // The scan is held at a port that never answers: it is still running when the daemon is killed.
    const gate = await openScanGate();
    onTestFinished(() => gate.close());
    const daemon = await agent({ conf: { SVC_SCAN_TIMEOUT: '600' } });
    const watch = watchTree(daemon.pid);
    const id = await queueCommand(fixture.portal, daemon.agentId, 'run_scan', {
      targets: '127.0.0.1',
      profile: 'full',
    });
    await untilStatus(fixture.portal, id, 'acked');
    const end = Date.now() + 60_000;
    while ((watch.pidsNamed('nmap').length === 0 || gate.accepted() === 0) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 100));
    watch.stop();
    const [nmap] = watch.pidsNamed('nmap');
    expect(nmap).toBeDefined();
    daemon.child.kill('SIGKILL');
    expect((await daemon.exited).signal).toBe('SIGKILL');
    // Its own process group outlives the daemon until the next start stops it.
    expect(watch.alive().length).toBeGreaterThan(0);

    const again = await agent({ conf: { SVC_SCAN_TIMEOUT: '600' } }, daemon);
    const h = await finishedCommand(fixture.portal, id, 30_000);
    expect(h).toMatchObject({ command: { status: 'failed' }, result: { exit_code: 125, session_id: null } });
    expect(h.result?.stderr).toMatch(
      /^interrupted: the agent stopped while run_scan ran \(started .*\); it is not run again\n$/,
    );
    // The orphan got its SIGKILL before the report; its exit comes when the kernel next runs it.
    await vi.waitFor(() => expect(watch.alive()).toEqual([]), { timeout: 30_000, interval: 50 });
    // Heartbeats go on; the command never starts in the new process and left no session.
    const admin = await fixture.portal.adminToken();
    await agentsApi(fixture.portal, () => admin).laterHeartbeats(again.agentId, 2);
    expect(commandLines(again.output(), id).filter((l) => / started/.test(l))).toEqual([]);
    // The killed scan wrote no session (it writes at the end) and nothing started another.
    expect(fs.existsSync(path.join(daemon.home, '.svc', 'sessions'))).toBe(false);
    await again.stop();
  });
});

describe('svcd through a portal outage', () => {
  it('keeps the result on disk while the portal is down and delivers it when it is back', async () => {
    const port = await freePort();
    const dataDir = fs.mkdtempSync(path.join(fixture.portal.dataDir, '..', 'svcd-outage-'));
    homes.push(dataDir);
    const own = await startPortalWithKey({ portal: { env: { PORT: String(port), SVC_DATA_DIR: dataDir } } });
    let portal: TestPortal = own.portal;
    try {
      const daemon = await agent({ portal, url: own.uploadUrl, key: own.key });
      const id = await queueCommand(portal, daemon.agentId, 'run_scan', { targets: '127.0.0.1', profile: 'quick' });
      await untilStatus(portal, id, 'acked');
      await portal.close();
      await daemon.waitFor(new RegExp(`status report kept for later: command ${id} (completed|failed)`), 90_000);
      portal = await startTestPortal({
        databaseUrl: own.portal.databaseUrl,
        env: { PORT: String(port), SVC_DATA_DIR: dataDir },
      });
      const h = await finishedCommand(portal, id, 60_000);
      expect(h.command.status, JSON.stringify(h.result)).toBe('completed');
      expect(h.result?.exit_code).toBe(0);
      // Not uploaded: the first line names the session kept on the agent, the rest is svc scan's answer.
      const [note, ...answer] = String(h.result?.stdout).split('\n');
      const local = JSON.parse(answer.join('\n')) as { session_id: string };
      expect(local.session_id).toMatch(/^\d{8}_\d{6}$/);
      expect(note).toBe(
        `session ${local.session_id} was not uploaded: it stays on the agent (push_session uploads it)`,
      );
      await daemon.stop();
    } finally {
      await portal.close();
    }
  });
});

describe('one state directory, two portals', () => {
  it("runs portal B's command 1 after portal A's command 1 ran: the journal is per portal and agent", async () => {
    const a = await startPortalWithKey();
    const b = await startPortalWithKey();
    try {
      const first = await agent({ portal: a.portal, url: a.uploadUrl, key: a.key });
      const idA = await queueCommand(a.portal, first.agentId, 'set_log_level', { level: 'debug' });
      expect(idA).toBe(1);
      expect((await finishedCommand(a.portal, idA, 30_000)).command.status).toBe('completed');
      await first.stop();

      const moved = await agent({ portal: b.portal, url: b.uploadUrl, key: b.key }, first);
      const idB = await queueCommand(b.portal, moved.agentId, 'set_log_level', { level: 'info' });
      expect(idB).toBe(1);
      const h = await finishedCommand(b.portal, idB, 30_000);
      expect(h).toMatchObject({ command: { status: 'completed' }, result: { exit_code: 0 } });
      expect(moved.output()).not.toContain('delivered again');
      await moved.stop();

      // Back on A: its command 1 is not run again, its next one runs.
      const back = await agent({ portal: a.portal, url: a.uploadUrl, key: a.key }, first);
      const idA2 = await queueCommand(a.portal, back.agentId, 'set_log_level', { level: 'warning' });
      expect(idA2).toBe(2);
      expect((await finishedCommand(a.portal, idA2, 30_000)).command.status).toBe('completed');
      expect(commandLines(back.output(), idA).filter((l) => / started/.test(l))).toEqual([]);
      await back.stop();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('SVC_SCAN_TIMEOUT from the portal', () => {
  it('is logged at start, pushed with push_config and in force after a restart', async () => {
    const daemon = await agent();
    expect(daemon.output()).toMatch(/msg="svcd started" .*scan_timeout_s=14400 /);
    const push = await queueCommand(fixture.portal, daemon.agentId, 'push_config', {
      config_key: 'SVC_SCAN_TIMEOUT',
      config_value: 7200,
    });
    expect((await finishedCommand(fixture.portal, push, 30_000)).result).toMatchObject({
      exit_code: 0,
      stdout: 'SVC_SCAN_TIMEOUT=7200 applied\n',
    });
    expect(fs.readFileSync(path.join(daemon.configDir, '.c2_overrides.conf'), 'utf8')).toContain(
      'SVC_SCAN_TIMEOUT=7200\n',
    );
    const restart = await queueCommand(fixture.portal, daemon.agentId, 'restart');
    expect((await finishedCommand(fixture.portal, restart, 30_000)).command.status).toBe('completed');
    await daemon.waitFor(/msg="svcd started" .*scan_timeout_s=7200 /, 30_000);
    await daemon.stop();
  });
});

describe('svcd polls between heartbeats', () => {
  it('gets a command within DAEMON_POLL_INTERVAL while its next heartbeat is an hour away', async () => {
    const daemon = await agent({ conf: { DAEMON_HEARTBEAT_INTERVAL: '3600', DAEMON_POLL_INTERVAL: '1' } });
    const id = await queueCommand(fixture.portal, daemon.agentId, 'set_log_level', { level: 'debug' });
    const h = await finishedCommand(fixture.portal, id, 30_000);
    expect(h).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: 'log level debug\n' },
    });
    // A pushed interval applies at once: the daemon logs the new one before it waits again.
    const push = await queueCommand(fixture.portal, daemon.agentId, 'push_config', {
      config_key: 'DAEMON_POLL_INTERVAL',
      config_value: 10,
    });
    expect((await finishedCommand(fixture.portal, push, 30_000)).command.status).toBe('completed');
    await daemon.waitFor(/msg="polling for commands" every_s=10/, 30_000);
    await daemon.stop();
  });
});
