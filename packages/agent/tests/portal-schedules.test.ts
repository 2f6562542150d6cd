import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DeliveredSchedule } from '@svc/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateSchedule } from '../src/commands/settings-commands.ts';
import { PortalSchedules, portalSchedulesFileOf } from '../src/portal-schedules.ts';
import type { ScheduledScan } from '../src/scan-child.ts';
import { Scheduler } from '../src/schedules.ts';
import type { AgentLogger, CommandHost } from '../src/types.ts';

/** Schedules kept by the portal on the agent's side: stored per portal, run, reported, not editable by update_schedule. */

let dir: string;
let logged: string[];
const log: AgentLogger = {
  debug: () => undefined,
  info: (m) => void logged.push(m),
  warning: (m, f) => void logged.push(`${m} ${JSON.stringify(f)}`),
  error: (m) => void logged.push(m),
};
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-psched-'));
  logged = [];
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const item = (over: Partial<DeliveredSchedule> = {}): DeliveredSchedule => ({
  id: 'psch_0123456789ab',
  name: 'Nightly',
  targets: '127.0.0.1',
  ports: 'T:22',
  profile: 'quick',
  cron: '0 3 * * *',
  timezone: 'Asia/Tokyo',
  upload: true,
  ...over,
});

function setUp(origin = 'https://portal.example') {
  const seen: ScheduledScan[] = [];
  const scheduler = new Scheduler({
    log,
    runScan: async (scan) => {
      seen.push(scan);
      return { exitCode: 0, sessionPath: null, stderrTail: '' };
    },
    retryMax: () => 0,
    retryBackoffMs: () => 1000,
  });
  const store = new PortalSchedules({
    stateDir: dir,
    agentId: 'svcd_a',
    log,
    origin: () => origin,
    childEnv: () => ({}),
    scheduler,
  });
  return { scheduler, store, seen };
}

describe('portal schedules on the agent', () => {
  it('are stored mode 600 per portal origin and loaded again at start, before any heartbeat', () => {
    const first = setUp();
    expect(first.store.restore()).toBe(0);
    expect(first.store.revision).toBe(0);
    first.store.take({ revision: 7, items: [item()] });
    const file = portalSchedulesFileOf(dir, 'https://portal.example', 'svcd_a');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const again = setUp();
    expect(again.store.restore()).toBe(1);
    expect(again.store.revision).toBe(7);
    const [reported] = again.scheduler.report();
    expect(reported).toMatchObject({
      config: 'portal',
      schedule_id: 'psch_0123456789ab',
      source: 'portal',
      name: 'Nightly',
      timezone: 'Asia/Tokyo',
      cron: '0 3 * * *',
      last_status: 'none',
      last_run: null,
      retry_count: 0,
    });
    // 03:00 in Tokyo is 18:00 UTC: the time zone is honoured.
    expect(new Date(reported?.next_run as string).getUTCHours()).toBe(18);

    // Another portal holds none of them.
    expect(setUp('https://other.example').store.restore()).toBe(0);
  });

  it('a new set replaces the portal ones only; local schedules stay and report source local', () => {
    const { scheduler, store } = setUp();
    scheduler.load([
      {
        config: 'n.conf',
        targets: '127.0.0.1',
        cron: '0 1 * * *',
        profile: undefined,
        ports: undefined,
        upload: false,
      },
    ]);
    store.take({ revision: 1, items: [item(), item({ id: 'psch_bbbbbbbbbbbb', name: 'B' })] });
    store.take({ revision: 2, items: [item({ id: 'psch_bbbbbbbbbbbb', name: 'B' })] });
    expect(scheduler.report().map((s) => [s.schedule_id.slice(0, 5), s.source, s.config])).toEqual([
      ['sched', 'local', 'n.conf'],
      ['psch_', 'portal', 'portal'],
    ]);
  });

  it('an item the agent refuses (its own scan budget, a bad cron) is logged and left out', () => {
    const { scheduler, store } = setUp();
    store.take({
      revision: 3,
      items: [
        item({ targets: '10.0.0.0/8' }),
        item({ id: 'psch_cccccccccccc', cron: '61 * * * *' }),
        item({ id: 'psch_dddddddddddd' }),
      ],
    });
    expect(scheduler.report().map((s) => s.schedule_id)).toEqual(['psch_dddddddddddd']);
    expect(logged.filter((l) => l.startsWith('portal schedule refused'))).toHaveLength(2);
    expect(store.revision).toBe(3);
  });

  it('an unreadable file is set aside and the agent starts with none', () => {
    const file = portalSchedulesFileOf(dir, 'https://portal.example', 'svcd_a');
    fs.writeFileSync(file, '{not json');
    const { store } = setUp();
    expect(store.restore()).toBe(0);
    expect(fs.readdirSync(dir).some((n) => n.includes('.corrupt-'))).toBe(true);
  });

  it('a scan of a portal schedule carries its id; update_schedule refuses it and points to the portal', async () => {
    const { scheduler, store, seen } = setUp();
    store.take({ revision: 1, items: [item({ cron: '* * * * * *', timezone: 'UTC' })] });
    scheduler.start();
    try {
      await expect.poll(() => seen.length).toBeGreaterThan(0);
    } finally {
      await scheduler.stop();
    }
    expect(seen[0]).toMatchObject({
      scheduleId: 'psch_0123456789ab',
      targets: '127.0.0.1',
      ports: 'T:22',
      upload: true,
    });
    const out = updateSchedule({ schedule_id: 'psch_0123456789ab', cron: '0 4 * * *' }, {
      schedules: scheduler,
    } as unknown as CommandHost);
    expect(out.exitCode).not.toBe(0);
    expect(out.stderr).toContain(
      'update_schedule: schedule psch_0123456789ab is kept by the portal: change, disable or delete it there',
    );
    expect(scheduler.report()[0]?.cron).toBe('* * * * * *');
  });
});
