import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleId } from '@svc/client/kit';
import { http, withToken } from '@svc/test-support/http';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { untilValue as until } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { watchTree } from './helpers/process-watch.ts';
import { openScanGate } from './helpers/scan-gate.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd } from '@svc/test-support/svcd';

// Cron schedules of a real svcd: `svc scan` children against loopback, scheduling metadata,
// upload, one run at a time, and retries when the scan fails.

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

type Scheduled = { schedule_id: string; last_run: string | null; last_status: string; retry_count: number };

async function reported(
  d: SvcdProcess,
  id: string,
  ok: (s: Scheduled) => boolean,
  timeoutMs = 60_000,
): Promise<Scheduled> {
  return until(
    async () => {
      const s = ((await api().view(d.agentId))?.schedules as Scheduled[] | undefined)?.find(
        (x) => x.schedule_id === id,
      );
      return s !== undefined && ok(s) ? s : undefined;
    },
    `schedule ${id} as reported`,
    timeoutMs,
  );
}

describe('a schedule every second against 127.0.0.1', () => {
  const cron = '* * * * * *';
  const targets = '127.0.0.1';
  let d: SvcdProcess;

  beforeAll(async () => {
    d = await startSvcd({
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key),
        'loopback.conf': {
          SCAN_TARGETS: targets,
          SCAN_CRON: cron,
          SCAN_PROFILE: 'quick',
          SCAN_PORTS: 'T:1',
          SCAN_UPLOAD: 'true',
        },
      },
    });
    started.push(d);
    await d.waitFor(/msg="scheduled scan done"/, 60_000);
  });

  it('runs svc scan: the session is marked scheduled by the daemon and uploaded', async () => {
    const done = /msg="scheduled scan done" schedule_id=(\S+) session=(\S+)/.exec(d.output());
    expect(done?.[1]).toBe(scheduleId(targets, cron));
    const dir = done?.[2] as string;
    expect(path.dirname(dir)).toBe(path.join(d.home, '.svc', 'sessions'));
    const doc = JSON.parse(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8'));
    expect(doc.metadata).toMatchObject({
      target: targets,
      is_scheduled: true,
      scheduled_by: 'daemon',
      schedule_id: scheduleId(targets, cron),
      schedule_cron: cron,
      schedule_profile: 'quick',
    });
    // The key came from the daemon's config file, and the session says which (not "env").
    expect(doc.metadata.license?.source).toBe(`svcd-config:${path.join(d.configDir, 'p.conf')}`);
    const stored = await http(fixture.portal.url, 'GET', `/api/sessions?session=${doc.metadata.session_id}`, {
      headers: withToken(admin),
    });
    expect(stored.status).toBe(200);
  });

  it('reports last_run, last_status and next_run in the heartbeat', async () => {
    const s = await reported(d, scheduleId(targets, cron), (x) => x.last_status === 'success');
    expect(s).toMatchObject({ config: 'loopback.conf', retry_count: 0 });
    expect(Date.parse(s.last_run as string)).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('one run of a schedule at a time', () => {
  it('never runs two scans of one schedule at once: ticks during a run are skipped', async () => {
    // The scan is held at a port that never answers until the test lets it go, so the run is
    // certainly in progress when the next ticks come, however fast the machine scans.
    const gate = await openScanGate();
    try {
      const d = await startSvcd({
        configs: {
          'p.conf': portalConf(fixture.uploadUrl, fixture.key),
          'held.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '* * * * * *', SCAN_PORTS: `T:${gate.port}` },
        },
      });
      started.push(d);
      await until(async () => (gate.accepted() > 0 ? true : undefined), 'the scan to reach the held port');
      await d.waitFor(/msg="schedule still running: this tick is skipped"/);
      expect(d.output()).not.toMatch(/msg="scheduled scan (done|failed)"/);
      gate.release();
      await until(
        async () => ((d.output().match(/msg="scheduled scan (done|failed)"/g) ?? []).length >= 2 ? true : undefined),
        'two runs',
        60_000,
      );
      const events = (d.output().match(/msg="scheduled scan (started|done|failed)"/g) ?? []).map((m) =>
        m.includes('started') ? 'start' : 'end',
      );
      for (let i = 0; i < events.length; i++) expect(events[i]).toBe(i % 2 === 0 ? 'start' : 'end');
    } finally {
      await gate.close();
    }
  });
});

/** PIDs whose command line contains `text` (this test's own sessions directory identifies its scans). */
async function processesWith(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await fs.readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(text)) found.push(Number(entry));
  }
  return found;
}

describe('SIGTERM during a scheduled scan', () => {
  it('ends the running scan with the daemon: no svc scan process and no temp file is left', async () => {
    // The scan is held at a port that never answers, so the daemon is stopped while its scan is
    // still running, not between two runs.
    const gate = await openScanGate();
    try {
      const tmp = await testTempDir('svcd-tmp-');
      const d = await startSvcd({
        configs: {
          'p.conf': portalConf(fixture.uploadUrl, fixture.key),
          'loop.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '* * * * * *', SCAN_PORTS: `T:${gate.port}` },
        },
        env: { TMPDIR: tmp },
      });
      started.push(d);
      await d.waitFor(/msg="scheduled scan started"/);
      const sessions = path.join(d.home, '.svc', 'sessions');
      await until(async () => ((await processesWith(sessions)).length > 0 ? true : undefined), 'the scan process');
      await until(async () => (gate.accepted() > 0 ? true : undefined), 'the scan to reach the held port');
      expect(d.output()).not.toMatch(/msg="scheduled scan (done|failed)"/);
      expect(await d.stop()).toEqual({ code: 0, signal: null });
      await until(
        async () => ((await processesWith(sessions)).length === 0 ? true : undefined),
        'the scan to end',
        10_000,
      );
      expect(await fs.readdir(tmp)).toEqual([]);
    } finally {
      await gate.close();
    }
  });
});

describe('a scheduled scan past SVC_SCAN_TIMEOUT', () => {
  it('is killed with its nmap: failed with exit 124, no svc scan or nmap process and no temp file left', async () => {
    // Held at a port that never answers: the scan cannot end before its deadline. The cron fires
    // once a minute, so no second run starts while the first one's processes are checked. The
    // deadline leaves `svc scan` room to start nmap on a loaded machine: at 3 s, a loaded run once
    // killed it before nmap existed.
    const gate = await openScanGate();
    try {
      const second = (new Date().getSeconds() + 5) % 60;
      // The daemon's temp directory, of this test alone: what the killed scan leaves there is checked.
      const tmp = await testTempDir('svcd-tmp-');
      const d = await startSvcd({
        configs: {
          'p.conf': portalConf(fixture.uploadUrl, fixture.key, { SVC_SCAN_TIMEOUT: '15', DAEMON_SCAN_RETRY_MAX: '0' }),
          'held.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: `${second} * * * * *`, SCAN_PORTS: `T:${gate.port}` },
        },
        env: { TMPDIR: tmp },
      });
      started.push(d);
      await d.waitFor(/msg="svcd started"/);
      const watch = watchTree(d.pid);
      let failed: string;
      try {
        failed = await d.waitFor(/msg="scheduled scan failed"/, 120_000);
      } finally {
        watch.stop();
      }
      expect(failed).toContain('exit_code=124');
      expect(failed).toContain('SVC_SCAN_TIMEOUT');
      expect(watch.names()).toContain('nmap');
      expect(watch.alive()).toEqual([]);
      expect(await fs.readdir(tmp)).toEqual([]);
      await d.stop();
    } finally {
      await gate.close();
    }
  });
});

describe('a failing scheduled scan', () => {
  it('is retried DAEMON_SCAN_RETRY_MAX times DAEMON_SCAN_RETRY_BACKOFF apart, then reported failed', async () => {
    // A PATH without nmap: bash and the two tools bin/svc needs, nothing else.
    const home = await fs.mkdtemp(path.join('/tmp', 'svcd-retry-'));
    const bin = path.join(home, 'bin');
    await fs.mkdir(bin);
    for (const tool of ['bash', 'dirname', 'readlink']) await fs.symlink(`/usr/bin/${tool}`, path.join(bin, tool));
    // Once a minute: one run in the test. Some seconds from now, usually after the daemon's start;
    // a slower start only means the next minute's run, which the wait below allows for.
    const second = (new Date().getSeconds() + 8) % 60;
    const cron = `${second} * * * * *`;
    const d = await startSvcd({
      home,
      env: { PATH: bin },
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key, {
          DAEMON_SCAN_RETRY_MAX: '2',
          DAEMON_SCAN_RETRY_BACKOFF: '1',
        }),
        'nightly.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: cron, SCAN_PORTS: 'T:1' },
      },
    });
    started.push(d);
    const id = scheduleId('127.0.0.1', cron);
    const s = await reported(d, id, (x) => x.retry_count === 3, 150_000);
    expect(s.last_status).toBe('failed');
    const failures = [...d.output().matchAll(/ts=(\S+) level=warning msg="scheduled scan failed" .*retry_count=(\d)/g)];
    expect(failures.map((m) => m[2])).toEqual(['1', '2', '3']);
    expect(d.output()).toContain('nmap not found on PATH');
    const starts = [...d.output().matchAll(/ts=(\S+) level=info msg="scheduled scan started" .*attempt=(\d)/g)];
    expect(starts.map((m) => m[2])).toEqual(['1', '2', '3']);
    // Each retry waits the backoff after the failure before it.
    for (let i = 1; i < starts.length; i++)
      expect(Date.parse((starts[i] as RegExpExecArray)[1] as string)).toBeGreaterThanOrEqual(
        Date.parse((failures[i - 1] as RegExpExecArray)[1] as string) + 1000,
      );
  }, 200_000);
});
