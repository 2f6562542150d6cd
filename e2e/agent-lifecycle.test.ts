import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '@svc/client/kit';
import { untilValue as until } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd } from '@svc/test-support/svcd';
import { startTcpSwitch } from './helpers/tcp-switch.ts';

// Restart in place, overrides across SIGHUP and restart, deregistration and a portal outage,
// each with a real svcd process against a real portal.

const fixture = usePortalWithKey({ tier: 'business' });
let admin = '';
const api = () => agentsApi(fixture.portal, () => admin);
const started: SvcdProcess[] = [];

beforeAll(async () => {
  admin = await fixture.portal.adminToken();
});

afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  await Promise.all(started.map((d) => fs.rm(d.home, { recursive: true, force: true })));
});

async function daemon(opts: Parameters<typeof startSvcd>[0]): Promise<SvcdProcess> {
  const d = await startSvcd(opts);
  started.push(d);
  await d.waitFor(/msg="svcd started"/);
  // Commands can be queued only for an agent the portal has seen.
  await until(() => api().view(d.agentId), `the first heartbeat of ${d.agentId}`);
  return d;
}

const count = (text: string, re: RegExp) => (text.match(new RegExp(re, 'g')) ?? []).length;

async function completed(id: number) {
  return until(async () => {
    const d = await api().detail(id);
    return ['completed', 'failed'].includes(d.command.status) ? d : undefined;
  }, `command ${id}`);
}

describe('restart', () => {
  it('re-executes in place: same PID, uptime reset, heartbeats go on', async () => {
    const d = await daemon({
      configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) },
    });
    const before = await until(async () => {
      const v = await api().view(d.agentId);
      return v !== undefined && v.uptime_seconds >= 3 ? v : undefined;
    }, 'three seconds of uptime');
    const [id] = await api().queue({ agent_id: d.agentId }, 'restart');
    await d.waitFor(/msg="re-executing in place"/);
    await until(async () => (count(d.output(), /msg="svcd started"/) === 2 ? true : undefined), 'the second start');
    const restartedAt = Date.now();
    const starts = d.output().match(/msg="svcd started".*/g) ?? [];
    expect(starts.map((l) => /pid=(\d+)/.exec(l)?.[1])).toEqual([String(d.pid), String(d.pid)]);
    const after = await until(async () => {
      const v = await api().view(d.agentId);
      return v !== undefined && Date.parse(v.received_at) > restartedAt ? v : undefined;
    }, 'a heartbeat after the restart');
    expect(after.uptime_seconds).toBeLessThan(before.uptime_seconds);
    expect(after.uptime_seconds).toBeLessThanOrEqual(1);
    expect((await completed(id as number)).command.status).toBe('completed');
    // The process the test started is still the daemon.
    expect(d.child.exitCode).toBeNull();
    process.kill(d.pid, 0);
  });
});

describe('overrides', () => {
  it('push_config beats the config file and survives SIGHUP and restart; SIGHUP re-checks the file', async () => {
    const d = await daemon({
      configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key, { DAEMON_LOG_LEVEL: 'info' }) },
    });
    expect(d.output()).not.toContain('level=debug');
    const [id] = await api().queue({ agent_id: d.agentId }, 'push_config', {
      config_key: 'DAEMON_LOG_LEVEL',
      config_value: 'debug',
    });
    await d.waitFor(/level=debug msg="heartbeat sent"/);
    expect((await completed(id as number)).command.status).toBe('completed');
    const file = path.join(d.configDir, '.c2_overrides.conf');
    expect(await fs.readFile(file, 'utf8')).toBe('DAEMON_LOG_LEVEL=debug\n');
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);

    // Hand edits: a key outside the allowlist and a value with a newline are refused on reload.
    await fs.appendFile(file, 'CONSULTATION_API_URL=http://127.0.0.1:9/api/upload\nDAEMON_SCAN_RETRY_MAX="2\n3"\n');
    process.kill(d.pid, 'SIGHUP');
    await d.waitFor(/msg="configuration reloaded"/);
    expect(d.output()).toContain(
      'level=warning msg="override refused" line="CONSULTATION_API_URL: Config key not in remote-update allowlist"',
    );
    expect(d.output()).toContain(
      'level=warning msg="override refused" line="DAEMON_SCAN_RETRY_MAX: config_value must not contain control characters"',
    );
    let mark = d.output().length;
    await until(
      async () => (d.output().slice(mark).includes('level=debug msg="heartbeat sent"') ? true : undefined),
      'debug after SIGHUP',
    );

    const [restart] = await api().queue({ agent_id: d.agentId }, 'restart');
    await d.waitFor(/msg="re-executing in place"/);
    await completed(restart as number);
    mark = d.output().indexOf('msg="re-executing in place"');
    await until(
      async () => (d.output().slice(mark).includes('level=debug msg="heartbeat sent"') ? true : undefined),
      'debug after restart',
    );
    // The refused URL never took over: heartbeats still reach the portal.
    const v = await api().view(d.agentId);
    expect(v?.is_stale).toBe(false);
  });
});

describe('deregistration', () => {
  it('the next heartbeat gets 403 Agent unregistered: logged, exit 4', async () => {
    const d = await daemon({ configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) } });
    expect(await api().patchAgent(d.agentId, 'deregister')).toBe(200);
    expect(await d.exited).toEqual({ code: 4, signal: null });
    expect(d.output()).toMatch(/level=error msg="agent unregistered by the portal: shutting down"/);
  });
});

describe('deregistration seen by a poll', () => {
  it('the poll gets 403 Agent unregistered: exit 4 with the heartbeat an hour away, and no schedule starts after it', async () => {
    const d = await daemon({
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key, {
          DAEMON_HEARTBEAT_INTERVAL: '3600',
          DAEMON_POLL_INTERVAL: '1',
        }),
        // Every second, so one is always due when the poll learns of the deregistration.
        'loopback.conf': {
          SCAN_TARGETS: '127.0.0.1',
          SCAN_CRON: '* * * * * *',
          SCAN_PROFILE: 'quick',
          SCAN_PORTS: 'T:1',
        },
      },
    });
    await d.waitFor(/msg="scheduled scan started"/, 60_000);
    expect(await api().patchAgent(d.agentId, 'deregister')).toBe(200);
    expect(await d.exited).toEqual({ code: 4, signal: null });
    const out = d.output();
    const at = out.search(/level=error msg="agent unregistered by the portal: shutting down" .*source=poll/);
    expect(at).toBeGreaterThan(0);
    expect(out.slice(at)).not.toMatch(/msg="scheduled scan started"/);
  });
});

describe('portal outage', () => {
  it('heartbeats back off while the portal is gone and resume without a burst, state kept', async () => {
    const sw = await startTcpSwitch(Number(new URL(fixture.portal.url).port));
    try {
      const d = await daemon({
        configs: {
          'p.conf': portalConf(`${sw.url}/api/upload`, fixture.key, { DAEMON_HEARTBEAT_INTERVAL: '2' }),
        },
      });
      const before = await until(async () => {
        const v = await api().view(d.agentId);
        return v !== undefined && v.uptime_seconds >= 2 ? v : undefined;
      }, 'heartbeats through the switch');
      sw.down();
      await d.waitFor(/msg="heartbeat failed".*failures=3/, 30_000);
      // Jittered between half and all of the capped wait (the 2 s interval here).
      const waits = [
        ...d.output().matchAll(/level=warning msg="heartbeat failed" error=.* failures=\d+ retry_in_ms=(\d+)/g),
      ];
      expect(waits.length).toBeGreaterThanOrEqual(3);
      for (const w of waits) expect(Number(w[1])).toBeGreaterThanOrEqual(1000);
      for (const w of waits) expect(Number(w[1])).toBeLessThanOrEqual(2000);
      const back = Date.now();
      sw.up();
      await d.waitFor(/msg="portal reachable again" after_failures=\d+/);
      const after = await until(async () => {
        const v = await api().view(d.agentId);
        return v !== undefined && Date.parse(v.received_at) > back ? v : undefined;
      }, 'a heartbeat after the outage');
      // Same process, uptime counted on: nothing was reset by the outage.
      expect(after.uptime_seconds).toBeGreaterThan(before.uptime_seconds);
      expect(d.child.exitCode).toBeNull();
      // No burst on return: four heartbeats after it, each a whole interval after the one before.
      // A burst (missed beats made up) would be beats back to back; the margin below the 2 s
      // interval is for the switch, which notes a request only when this process gets to it.
      const afterBack = () => sw.requests.filter((r) => r.line === 'POST /api/health' && r.at >= back);
      await until(async () => (afterBack().length >= 4 ? true : undefined), 'four heartbeats after the outage');
      const beats = afterBack();
      for (let i = 1; i < beats.length; i++)
        expect((beats[i] as { at: number }).at - (beats[i - 1] as { at: number }).at).toBeGreaterThan(1000);
    } finally {
      await sw.close();
    }
  });
});

describe('schedule control and shutdown', () => {
  it('update_schedule changes a schedule in memory only; delete drops it from heartbeats, not from disk', async () => {
    const d = await daemon({
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key),
        'yearly.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '0 3 1 1 *' },
      },
    });
    const id = scheduleId('127.0.0.1', '0 3 1 1 *');
    const [update] = await api().queue({ agent_id: d.agentId }, 'update_schedule', {
      schedule_id: id,
      cron: '0 4 1 1 *',
    });
    expect((await completed(update as number)).result?.stdout).toBe(
      `Schedule ${id} updated in memory (not persisted)\n`,
    );
    const updated = await until(async () => {
      const s = ((await api().view(d.agentId))?.schedules ?? []) as { cron: string; next_run: string }[];
      return s[0]?.cron === '0 4 1 1 *' ? s[0] : undefined;
    }, 'the new cron in a heartbeat');
    expect(new Date(updated.next_run).getHours()).toBe(4);
    expect(await fs.readFile(path.join(d.configDir, 'yearly.conf'), 'utf8')).toContain('SCAN_CRON=0 3 1 1 *');

    const [bad] = await api().queue({ agent_id: d.agentId }, 'update_schedule', {
      schedule_id: id,
      cron: '61 * * * *',
    });
    const refused = await completed(bad as number);
    expect(refused.command.status).toBe('failed');
    expect(refused.result).toMatchObject({ exit_code: 1, stdout: '' });
    expect(refused.result?.stderr).toMatch(/^update_schedule: Invalid cron pattern "61 \* \* \* \*": /);

    const [del] = await api().queue({ agent_id: d.agentId }, 'update_schedule', { schedule_id: id, action: 'delete' });
    expect((await completed(del as number)).result?.stdout).toBe(
      `Schedule ${id} deleted in memory (its config file yearly.conf is kept)\n`,
    );
    await until(
      async () => (((await api().view(d.agentId))?.schedules ?? ['x']).length === 0 ? true : undefined),
      'no schedule in a heartbeat',
    );
    await fs.access(path.join(d.configDir, 'yearly.conf'));
  });

  it('shutdown stops the daemon after reporting the command: exit 0', async () => {
    const d = await daemon({
      configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) },
    });
    const [id] = await api().queue({ agent_id: d.agentId }, 'shutdown', { graceful: true });
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expect((await api().detail(id as number)).command.status).toBe('completed');
    expect(d.output()).toMatch(/msg="shutting down" graceful=true/);
  });
});
