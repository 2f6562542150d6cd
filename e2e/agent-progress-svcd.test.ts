import fs from 'node:fs';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { commandHistory, finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * A long run_scan's progress reaches the portal: a real `svcd` runs a real
 * `svc scan --progress-json` child, whose nmap scans one loopback port the test opens. The port
 * accepts and never speaks, so nmap's service scan waits on it for about 25 s (its probes time
 * out) and reports its progress meanwhile (`--stats-every`, 10 s by default); svcd sends it as a
 * progress report, and the admin's command history shows it while the command is acked.
 */

const fixture = usePortalWithKey({ tier: 'business' });
const sockets = new Set<net.Socket>();
let silent: net.Server | undefined;
let daemon: SvcdProcess | undefined;

afterAll(async () => {
  await daemon?.stop();
  if (daemon) fs.rmSync(daemon.home, { recursive: true, force: true });
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
});

interface Progress {
  task: string;
  percent: number;
  stage?: string;
  reported_at: string;
}

describe('svcd reports run_scan progress to the portal', () => {
  it('the history shows the progress while the command is acked; the final report is as before', async () => {
    silent = net.createServer((s) => {
      s.on('error', () => {});
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => silent?.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;

    daemon = await startSvcd({ configs: { 'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key) } });
    await daemon.waitFor(/msg="svcd started"/);
    await untilRegistered(fixture.portal, daemon.agentId);
    const id = await queueCommand(fixture.portal, daemon.agentId, 'run_scan', {
      targets: '127.0.0.1',
      profile: 'quick',
      ports: `T:${port}`,
    });

    // Until the first progress report has reached the portal (the scan's service scan lasts ~25 s).
    const until = Date.now() + 90_000;
    let seen: { status: string; progress: Progress | null };
    for (;;) {
      seen = (await commandHistory(fixture.portal, id)).command as unknown as typeof seen;
      // The first report is the nmap stage's start ("Starting nmap"); nmap's own follow, at most one per 15 s.
      if (seen.progress?.task === 'Service scan' || ['completed', 'failed'].includes(seen.status) || Date.now() > until)
        break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(seen.status, daemon.output()).toBe('acked');
    const progress = seen.progress as Progress;
    expect(progress).toEqual({
      task: 'Service scan',
      percent: expect.any(Number),
      stage: 'nmap',
      reported_at: expect.any(String),
    });
    expect(progress.percent).toBeGreaterThanOrEqual(0);
    expect(progress.percent).toBeLessThanOrEqual(100);
    expect(new Date(progress.reported_at).toISOString()).toBe(progress.reported_at);

    const done = await finishedCommand(fixture.portal, id, 180_000);
    expect(done.command.status, JSON.stringify(done.result)).toBe('completed');
    expect(done.result?.exit_code).toBe(0);
    // svc's progress lines went to the portal as progress, not into the report's stderr.
    expect(done.result?.stderr.includes('{"progress"')).toBe(false);
    expect(done.result?.stderr.includes('nmap: ')).toBe(true);
    // The command keeps its last progress: the service scan's, or the scripts' that follow it.
    const last = (done.command as unknown as { progress: Progress | null }).progress as Progress;
    expect(['Service scan', 'NSE']).toContain(last.task);
    expect(last.reported_at >= progress.reported_at).toBe(true);
  }, 300_000);
});
