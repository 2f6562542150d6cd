import fs from 'node:fs';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { commandHistory, finishedCommand, queueCommand, untilRegistered } from './helpers/agent-admin.ts';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd } from './helpers/svcd.ts';
import { listenOnQuickPort } from './helpers/quick-port.ts';
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

const started = (out: string, id: number) =>
  out.split('\n').filter((l) => l.includes(`command ${id} `) && / started/.test(l));

describe('svcd stops between commands', () => {
  it('SIGTERM during a batch: the running scan is reported, the next command waits for the next start', async () => {
    const server = await listenOnQuickPort();
    try {
      // A 2 s interval: both commands are queued well before the heartbeat that delivers them.
      const daemon = await agent({ DAEMON_HEARTBEAT_INTERVAL: '2' });
      const { portal } = fixture;
      const scan = await queueCommand(portal, daemon.agentId, 'run_scan', { targets: '127.0.0.1', profile: 'quick' });
      const level = await queueCommand(portal, daemon.agentId, 'set_log_level', { level: 'debug' });
      await daemon.waitFor(new RegExp(`command ${scan} run_scan started`), 30_000);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toEqual({ code: 0, signal: null });

      const out = daemon.output();
      expect(out).toMatch(new RegExp(`command ${scan} run_scan completed`));
      expect(started(out, level)).toEqual([]);
      const scanned = await commandHistory(portal, scan);
      expect(scanned.command.status, JSON.stringify(scanned.result)).toBe('completed');
      expect(scanned.result?.exit_code).toBe(0);
      expect((await commandHistory(portal, level)).command.status).toBe('sent');

      const again = await agent({ DAEMON_HEARTBEAT_INTERVAL: '2' }, daemon);
      expect(await finishedCommand(portal, level)).toMatchObject({
        command: { status: 'completed' },
        result: { exit_code: 0, stdout: 'log level debug\n' },
      });
      expect(started(again.output(), level)).toHaveLength(1);
      expect(started(again.output(), scan)).toEqual([]);
      await again.stop();
    } finally {
      server.close();
    }
  });
});

describe('svcd heartbeats during a long command', () => {
  it('a 5 s scan does not hold up the 1 s heartbeats', async () => {
    // A port that never answers holds the full scan, so only SVC_SCAN_TIMEOUT ends it.
    const gate = await openScanGate();
    onTestFinished(() => gate.close());
    const daemon = await agent({ DAEMON_HEARTBEAT_INTERVAL: '1', SVC_SCAN_TIMEOUT: '5' });
    const admin = await fixture.portal.adminToken();
    const api = agentsApi(fixture.portal, () => admin);
    const scan = await queueCommand(fixture.portal, daemon.agentId, 'run_scan', {
      targets: '127.0.0.1',
      profile: 'full',
    });
    await daemon.waitFor(new RegExp(`command ${scan} run_scan started`), 30_000);
    // Delivered by a later heartbeat while the scan runs: it waits behind the scan and runs once.
    const level = await queueCommand(fixture.portal, daemon.agentId, 'set_log_level', { level: 'debug' });
    const seen = new Set<string>();
    const finished = ['completed', 'failed'];
    while (!finished.includes((await commandHistory(fixture.portal, scan)).command.status)) {
      const view = await api.view(daemon.agentId);
      if (view !== undefined) seen.add(view.received_at);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect((await finishedCommand(fixture.portal, scan)).result).toMatchObject({ exit_code: 124 });
    // About five heartbeats in the five seconds; three leaves room for a slow machine.
    expect(seen.size).toBeGreaterThanOrEqual(3);
    expect((await finishedCommand(fixture.portal, level)).result).toMatchObject({ stdout: 'log level debug\n' });
    const lines = daemon.output().split('\n');
    const scanEnd = lines.findIndex((l) => l.includes(`command ${scan} run_scan failed`));
    expect(started(daemon.output(), level)).toHaveLength(1);
    expect(lines.findIndex((l) => l.includes(`command ${level} set_log_level started`))).toBeGreaterThan(scanEnd);
    expect(scanEnd).toBeGreaterThan(0);
    await daemon.stop();
  });
});
