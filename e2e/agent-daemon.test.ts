import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '@svc/test-support/cli';
import { hostAddresses } from '@svc/agent/system-info';
import { licenseKeyFingerprint as keyFingerprint } from '@svc/protocol/node';
import { untilValue as until } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd, SVCD } from '@svc/test-support/svcd';

// A real svcd process against a real portal: heartbeats as stored, commands handed over, signals.

const fixture = usePortalWithKey({ tier: 'business' });
let admin: string;
const running: SvcdProcess[] = [];

beforeAll(async () => {
  admin = await fixture.portal.adminToken();
});

afterAll(async () => {
  await Promise.all(running.map((d) => d.stop()));
  await Promise.all(running.map((d) => fs.rm(d.home, { recursive: true, force: true })));
});

const api = () => agentsApi(fixture.portal, () => admin);

describe('svcd against a real portal', () => {
  let daemon: SvcdProcess;

  beforeAll(async () => {
    daemon = await startSvcd({
      configs: {
        'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, { CLIENT_ID: fixture.clientId }),
        // A schedule that will not fire during the test: it is reported, not run.
        'weekly.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '0 3 1 1 *', SCAN_PROFILE: 'quick' },
      },
    });
    running.push(daemon);
    await daemon.waitFor(/msg="svcd started"/);
  });

  it('heartbeats with the documented payload: status, uptime, client_id, schedules and system_info as stored', async () => {
    const view = await until(async () => {
      const v = await api().view(daemon.agentId);
      return v !== undefined && v.uptime_seconds >= 1 ? v : undefined;
    }, 'a second heartbeat');
    expect(view).toMatchObject({ agent_id: daemon.agentId, status: 'running', is_stale: false });
    expect(view.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(view.client_id).toBe(fixture.clientId);
    expect(view.schedules).toEqual([
      {
        config: 'weekly.conf',
        schedule_id: expect.stringMatching(/^sched_[0-9a-f]{12}$/),
        last_run: null,
        last_status: 'none',
        next_run: expect.stringMatching(/^\d{4}-01-01T\d{2}:00:00\.000Z$/),
        retry_count: 0,
        cron: '0 3 1 1 *',
        targets: '127.0.0.1',
        profile: 'quick',
        source: 'local',
      },
    ]);
    const info = view.system_info as Record<string, unknown>;
    expect(info).toMatchObject({ agent_version: view.version, kernel: expect.any(String), os: expect.any(String) });
    expect(info.cpu_count).toBeGreaterThan(0);
    expect(info.memory_total_mb).toBeGreaterThan(0);
    expect(info.disk_free_mb).toBeGreaterThanOrEqual(0);
    // The fleet names the agent by its host and addresses.
    expect(view).toMatchObject({ hostname: os.hostname(), ip_addresses: hostAddresses() });
  });

  it('hands the heartbeat commands to the runner: the command leaves `sent` with a result', async () => {
    const [id] = await api().queue({ agent_id: daemon.agentId }, 'set_log_level', { level: 'info' });
    const detail = await until(async () => {
      const d = await api().detail(id as number);
      return ['completed', 'failed'].includes(d.command.status) ? d : undefined;
    }, 'the command result');
    expect(detail.result).toMatchObject({ exit_code: expect.any(Number) });
  });

  it('svcd status shows what the daemon knows', async () => {
    await until(
      async () => ((await fs.stat(path.join(daemon.stateDir, 'status.json')).catch(() => null)) ? true : undefined),
      'status.json',
    );
    const shown = await runCli(SVCD, ['status'], { home: daemon.home, env: { SVC_AGENT_STATE_DIR: daemon.stateDir } });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`Agent id:        ${daemon.agentId}`);
    expect(shown.stdout).toContain(`Daemon:          running (pid ${daemon.pid})`);
    expect(shown.stdout).toContain(`Portal:          ${fixture.uploadUrl}`);
    expect(shown.stdout).toContain('Tier:            business');
    expect(shown.stdout).toMatch(/Last heartbeat: {2}\d{4}-\d{2}-\d{2}T/);
    expect(shown.stdout).toMatch(/ {2}sched_[0-9a-f]{12} weekly\.conf: last never \(none\), next \d{4}-01-01T/);
  });

  it('SIGTERM shuts it down gracefully with exit 0', async () => {
    const result = await daemon.stop();
    expect(result).toEqual({ code: 0, signal: null });
    expect(daemon.output()).toMatch(/msg="svcd stopped" code=0/);
  });
});

describe('svcd --once and --help', () => {
  it('--once sends one heartbeat and exits 0', async () => {
    const started = Date.now();
    const d = await startSvcd({ args: ['--once'], configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) } });
    running.push(d);
    expect(await d.exited).toEqual({ code: 0, signal: null });
    const lived = Math.ceil((Date.now() - started) / 1000);
    const view = await api().view(d.agentId);
    expect(view).toMatchObject({ agent_id: d.agentId, status: 'running' });
    // The uptime of this one short-lived process: a loaded machine may take a second or more to start it.
    const uptime = view?.uptime_seconds ?? -1;
    expect(uptime).toBeGreaterThanOrEqual(0);
    expect(uptime).toBeLessThanOrEqual(lived);
    expect(d.output()).toMatch(/msg="svcd stopped" code=0/);
  });

  it('--help names the options, the status command and the exit codes', async () => {
    const r = await runCli(SVCD, ['--help']);
    expect(r.code).toBe(0);
    for (const text of ['--config-dir <dir>', '--once', 'status', 'SIGHUP reloads', '4 the portal unregistered'])
      expect(r.stdout).toContain(text);
  });
});

describe('svcd start-up errors', () => {
  it('names a missing portal URL in one line and exits 3', async () => {
    const home = await fs.mkdtemp(path.join(process.env.TMPDIR ?? '/tmp', 'svcd-missing-'));
    const dir = path.join(home, 'configs');
    await fs.mkdir(dir);
    await fs.writeFile(path.join(dir, 'x.conf'), 'SVC_API_KEY=svc_biz_0\n');
    const r = await runCli(SVCD, ['--config-dir', dir], { home });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toBe('svcd: missing CONSULTATION_API_URL: set it in a config file or the environment\n');
    await fs.writeFile(path.join(dir, 'x.conf'), 'CONSULTATION_API_URL=http://127.0.0.1:9/api/upload\n');
    const noKey = await runCli(SVCD, ['--config-dir', dir], { home });
    expect(noKey).toMatchObject({ code: 3, stdout: '' });
    expect(noKey.stderr).toBe(
      'svcd: missing SVC_API_KEY (or CONSULTATION_API_KEY): set it in a config file or the environment\n',
    );
    await fs.rm(home, { recursive: true, force: true });
  });

  it('refuses a schedule with an invalid cron at start: one line naming the file, exit 3', async () => {
    const home = await fs.mkdtemp(path.join(process.env.TMPDIR ?? '/tmp', 'svcd-cron-'));
    const dir = path.join(home, 'configs');
    await fs.mkdir(dir);
    await fs.writeFile(
      path.join(dir, 'a.conf'),
      'CONSULTATION_API_URL=http://127.0.0.1:9/api/upload\nSVC_API_KEY=svc_biz_0\n',
    );
    await fs.writeFile(path.join(dir, 'nightly.conf'), 'SCAN_TARGETS=127.0.0.1\nSCAN_CRON=61 * * * *\n');
    const r = await runCli(SVCD, ['--config-dir', dir], { home });
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toMatch(/^svcd: nightly\.conf: SCAN_CRON "61 \* \* \* \*" is not a valid cron pattern: .+\n$/);
    // A pattern that never comes round (31 February) is refused alike, not reported as next_run 1970.
    await fs.writeFile(path.join(dir, 'nightly.conf'), 'SCAN_TARGETS=127.0.0.1\nSCAN_CRON=0 0 31 2 *\n');
    const never = await runCli(SVCD, ['--config-dir', dir], { home });
    expect(never).toMatchObject({ code: 3, stdout: '' });
    expect(never.stderr).toBe('svcd: nightly.conf: SCAN_CRON "0 0 31 2 *" never runs\n');
    await fs.rm(home, { recursive: true, force: true });
  });
});

describe('below the business tier', () => {
  it('delivered commands are skipped with a warning, never acknowledged', async () => {
    // The portal's last answer, cached and fresh (no online check for 24 h), said professional:
    // the daemon goes by it even though this key still gets commands delivered.
    const home = await fs.mkdtemp(path.join('/tmp', 'svcd-tier-'));
    await fs.mkdir(path.join(home, '.svc'), { mode: 0o700 });
    const now = new Date().toISOString();
    await fs.writeFile(
      path.join(home, '.svc', 'license_cache.json'),
      JSON.stringify({
        version: 1,
        fingerprint: keyFingerprint(fixture.key),
        valid: true,
        tier: 'professional',
        reason: 'ok',
        client_id: fixture.clientId,
        expires_at: null,
        validated_at: now,
        portal_checked_at: now,
      }),
      { mode: 0o600 },
    );
    const d = await startSvcd({ home, configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) } });
    running.push(d);
    await until(() => api().view(d.agentId), 'the first heartbeat');
    const [id] = await api().queue({ agent_id: d.agentId }, 'set_log_level', { level: 'debug' });
    const line = await d.waitFor(/msg="commands skipped: agent commands need the business tier"/);
    expect(line).toMatch(new RegExp(`level=warning .* tier=professional commands=${id}$`));
    // Delivered (sent) by the portal, but never acted on: not in the cycle that delivered it,
    // nor by the time two more heartbeats have come in.
    await api().laterHeartbeats(d.agentId, 2);
    const detail = await api().detail(id as number);
    expect(detail.command.status).toBe('sent');
    expect(detail.result).toBeNull();
    expect(d.output()).not.toMatch(/level=debug/);
  });
});
