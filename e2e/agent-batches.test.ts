import fs from 'node:fs';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { commandHistory, finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { untilValue as until } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { watchTree } from './helpers/process-watch.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';
import { openScanGate } from './helpers/scan-gate.ts';

/**
 * How svcd runs a batch of commands: a SIGTERM lets the running command finish and be reported,
 * the rest of the batch waits in the journal for the next start; heartbeats go on while a long
 * command runs. Real svcd, real portal, real `svc scan` of 127.0.0.1.
 */

const fixture = usePortalWithKey({ tier: 'business' });
const running: SvcdProcess[] = [];
const homes: string[] = [];
afterAll(async () => {
  await Promise.all(running.map((d) => d.stop()));
  for (const h of homes) fs.rmSync(h, { recursive: true, force: true });
});

async function agent(conf: Record<string, string>, reuse?: SvcdProcess): Promise<SvcdProcess> {
  const daemon = await startSvcd({
    ...(reuse ? { agentId: reuse.agentId, home: reuse.home, configDir: reuse.configDir } : {}),
    configs: { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, conf) },
  });
  running.push(daemon);
  if (!reuse) homes.push(daemon.home);
  await daemon.waitFor(/msg="svcd started"/);
  await untilRegistered(fixture.portal, daemon.agentId);
  return daemon;
}

/** The scan's nmap processes, once the watch has seen one. */
const nmapOf = (watch: ReturnType<typeof watchTree>) =>
  until(async () => {
    const pids = watch.pidsNamed('nmap');
    return pids.length > 0 ? pids : undefined;
  }, 'nmap under the daemon');

const started = (out: string, id: number) =>
  out.split('\n').filter((l) => l.includes(`command ${id} `) && / started/.test(l));

describe('svcd stops between commands', () => {
  it('SIGTERM during a batch: the running scan is reported, the next command waits for the next start', async () => {
    // A port that never answers holds the full scan until the test ends it (by killing its nmap).
    const gate = await openScanGate();
    onTestFinished(() => gate.close());
    const daemon = await agent({ DAEMON_HEARTBEAT_INTERVAL: '1' });
    const watch = watchTree(daemon.pid);
    onTestFinished(() => watch.stop());
    const { portal } = fixture;
    const scan = await queueCommand(portal, daemon.agentId, 'run_scan', { targets: '127.0.0.1', profile: 'full' });
    const level = await queueCommand(portal, daemon.agentId, 'set_log_level', { level: 'debug' });
    await daemon.waitFor(new RegExp(`command ${scan} run_scan started`), 30_000);
    await until(async () => (gate.accepted() > 0 ? true : undefined), 'the scan to reach the held port', 60_000);
    // Delivered with the scan or by a heartbeat while it is held: in the daemon's hands, not started.
    await until(
      async () => ((await commandHistory(portal, level)).command.status === 'sent' ? true : undefined),
      'the second command delivered',
    );
    const nmap = await nmapOf(watch);
    daemon.child.kill('SIGTERM');
    await daemon.waitFor(/msg="shutting down"/);
    // The scan ends only now, after the daemon was told to stop.
    for (const pid of nmap) process.kill(pid, 'SIGKILL');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });

    const out = daemon.output();
    expect(out).toMatch(new RegExp(`command ${scan} run_scan failed`));
    expect(started(out, level)).toEqual([]);
    const scanned = await commandHistory(portal, scan);
    expect(scanned.command.status, JSON.stringify(scanned.result)).toBe('failed');
    expect(scanned.result?.stderr).toContain('nmap exited with SIGKILL');
    expect((await commandHistory(portal, level)).command.status).toBe('sent');

    const again = await agent({ DAEMON_HEARTBEAT_INTERVAL: '1' }, daemon);
    expect(await finishedCommand(portal, level)).toMatchObject({
      command: { status: 'completed' },
      result: { exit_code: 0, stdout: 'log level debug\n' },
    });
    expect(started(again.output(), level)).toHaveLength(1);
    expect(started(again.output(), scan)).toEqual([]);
    await again.stop();
  });
});

describe('svcd heartbeats during a long command', () => {
  it('a held scan does not hold up the 1 s heartbeats; a command delivered meanwhile waits behind it', async () => {
    // A port that never answers holds the full scan until the test ends it.
    const gate = await openScanGate();
    onTestFinished(() => gate.close());
    const daemon = await agent({ DAEMON_HEARTBEAT_INTERVAL: '1' });
    const admin = await fixture.portal.adminToken();
    const api = agentsApi(fixture.portal, () => admin);
    const watch = watchTree(daemon.pid);
    onTestFinished(() => watch.stop());
    const scan = await queueCommand(fixture.portal, daemon.agentId, 'run_scan', {
      targets: '127.0.0.1',
      profile: 'full',
    });
    await daemon.waitFor(new RegExp(`command ${scan} run_scan started`), 30_000);
    await until(async () => (gate.accepted() > 0 ? true : undefined), 'the scan to reach the held port', 60_000);
    // Delivered by a later heartbeat while the scan runs: it waits behind the scan and runs once.
    const level = await queueCommand(fixture.portal, daemon.agentId, 'set_log_level', { level: 'debug' });
    await until(
      async () => ((await commandHistory(fixture.portal, level)).command.status === 'sent' ? true : undefined),
      'the second command delivered',
    );
    await api.laterHeartbeats(daemon.agentId, 3);
    // All of that while the scan was held: it is still running and the second command has not started.
    expect((await commandHistory(fixture.portal, scan)).command.status).toBe('acked');
    expect(started(daemon.output(), level)).toEqual([]);

    // The scan ends when its nmap does.
    const nmap = await nmapOf(watch);
    for (const pid of nmap) process.kill(pid, 'SIGKILL');
    const scanned = await finishedCommand(fixture.portal, scan);
    expect(scanned.command.status, JSON.stringify(scanned.result)).toBe('failed');
    expect(scanned.result?.stderr).toContain('nmap exited with SIGKILL');
    expect((await finishedCommand(fixture.portal, level)).result).toMatchObject({ stdout: 'log level debug\n' });
    const lines = daemon.output().split('\n');
    const scanEnd = lines.findIndex((l) => l.includes(`command ${scan} run_scan failed`));
    expect(started(daemon.output(), level)).toHaveLength(1);
    expect(lines.findIndex((l) => l.includes(`command ${level} set_log_level started`))).toBeGreaterThan(scanEnd);
    expect(scanEnd).toBeGreaterThan(0);
    await daemon.stop();
  });
});
