import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EXIT_CANCELLED } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork, scannerTools } from '@svc/test-support/netlab/scanner-tools';
import { schedulesApi } from '@svc/test-support/portal-schedules';
import { ADMIN_EMAIL } from '@svc/test-support/portal';
import { untilValue } from '@svc/test-support/wait';
import { commandHistory, finishedCommand, queueCommand } from './helpers/agent-admin.ts';
import { agentsApi } from './helpers/agents-api.ts';
import { doneSessions, reportedSchedule, storedSessionFile } from './helpers/portal-schedules.ts';
import { type PortalWithKey, startPortalWithKey } from './helpers/portal-with-key.ts';
import { watchTree } from './helpers/process-watch.ts';
import { portalConf, type SvcdProcess, startSvcd, untilRegistered } from '@svc/test-support/svcd';

/**
 * A real portal and three real `svcd` whose nmap enters the test network's
 * scanner namespace. A schedule created in the portal for their group runs on all three at its
 * time and its sessions carry its id; it survives a restart; a run_scan shows its progress in the
 * fleet listing and, cancelled while it runs, has its nmap killed and is failed with the reason;
 * a command that expired before its agent came back is never delivered; a deregistered agent
 * whose next heartbeat is an hour away stops at its next poll. Needs root; nothing outside the
 * harness subnet and loopback is contacted.
 *
 * The portal's clock is real time plus a shift the test moves (to pass a command's expiry
 * without waiting for it); the agents keep the real clock.
 */

/** The portal's clock: real time plus `shift`. */
let shift = 0;
const portalNow = () => new Date(Date.now() + shift);
const GROUP = 'lab-fleet';

let lab: Netlab;
let fixture: PortalWithKey;
let work: string;
let admin = '';
let data: string;
let legacy: string;
const agents: SvcdProcess[] = [];
const api = () => agentsApi(fixture.portal, () => admin);
const schedules = () => schedulesApi(fixture.portal.url, () => admin);

async function agent(n: number, extra: Record<string, string> = {}, reuse?: SvcdProcess): Promise<SvcdProcess> {
  const d = await startSvcd({
    agentId: reuse?.agentId ?? `svcd_f1ee700${n}`,
    ...(reuse ? { home: reuse.home, configDir: reuse.configDir } : {}),
    configs: {
      'a-portal.conf': portalConf(fixture.uploadUrl, fixture.key, {
        DAEMON_POLL_INTERVAL: '1',
        // Members that start in one second get one session id: all but one are refused at upload
        // and retry (docs/findings-of-record.md#session-ids), soon and often enough for the test.
        DAEMON_SCAN_RETRY_BACKOFF: '2',
        DAEMON_SCAN_RETRY_MAX: '10',
        ...extra,
      }),
    },
    // Every nmap the daemon's scans start enters the scanner namespace first.
    env: { PATH: `${path.join(work, 'bin')}:${process.env['PATH'] ?? '/usr/bin:/bin'}` },
  });
  agents.push(d);
  await d.waitFor(/msg="svcd started"/);
  await untilRegistered(fixture.portal, d.agentId);
  return d;
}

/** A 6-field cron that fires once a day at the wall-clock second of `at` (UTC). */
const dailyAt = (at: Date) => `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;

beforeAll(async () => {
  [lab, fixture] = await Promise.all([
    startNetlab({ smb: false }),
    startPortalWithKey({ tier: 'msp', portal: { now: portalNow } }),
  ]);
  admin = await fixture.portal.adminToken();
  data = lab.hosts.data.ip;
  legacy = lab.hosts.legacy.ip;
  assertInTestNetwork([data, legacy]);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-fleet-netlab-'));
  await scannerTools(lab.wrapper, path.join(work, 'bin'), ['nmap']);
  for (const n of [1, 2, 3]) {
    const d = await agent(n);
    expect((await schedules().join(d.agentId, GROUP)).status).toBe(201);
  }
}, 3 * 60_000);

afterAll(async () => {
  await Promise.all(agents.map((d) => d.stop()));
  lab?.stop();
  await fixture?.close();
  for (const dir of [work, ...agents.map((d) => d.home)]) if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('running a fleet from the portal', () => {
  let scheduleId = '';
  let due: Date;

  it(
    'a schedule created in the portal for a group runs on all three at its time; its sessions carry its id',
    async () => {
      // Due in 25 s: time to reach all three in their heartbeat answers (every second).
      due = new Date(Math.ceil((Date.now() + 25_000) / 1000) * 1000);
      const res = await schedules().create({
        group_name: GROUP,
        name: 'lab database daily',
        targets: data,
        ports: 'T:5432',
        profile: 'quick',
        cron: dailyAt(due),
        timezone: 'UTC',
        upload: true,
      });
      expect(res.status, res.text).toBe(201);
      scheduleId = res.body.schedule.id;
      const [a1, a2, a3] = agents as [SvcdProcess, SvcdProcess, SvcdProcess];
      const sessions: string[] = [];
      for (const d of [a1, a2, a3]) {
        const done = await untilValue(
          async () =>
            doneSessions(d.output(), scheduleId).length > 0 ? doneSessions(d.output(), scheduleId) : undefined,
          `the scheduled scan on ${d.agentId}`,
          3 * 60_000,
        );
        expect(done).toHaveLength(1);
        sessions.push(done[0] as string);
        const started = new RegExp(
          `^ts=(\\S+) level=info msg="scheduled scan started" schedule_id=${scheduleId} `,
          'm',
        );
        const at = Date.parse(started.exec(d.output())?.[1] ?? '');
        // At its time: not before it, and within the few seconds a loaded machine may take to fire the tick.
        expect(at).toBeGreaterThanOrEqual(due.getTime());
        expect(at - due.getTime()).toBeLessThan(15_000);
        const local = JSON.parse(
          await fs.readFile(path.join(d.home, '.svc', 'sessions', done[0] as string, 'session_results.json'), 'utf8'),
        );
        expect(local.metadata).toMatchObject({ target: data, is_scheduled: true, schedule_id: scheduleId });
        const stored = await untilValue(
          () => storedSessionFile(fixture.portal.url, admin, done[0] as string).catch(() => undefined),
          `the session ${done[0]} in the portal`,
        );
        // The portal holds this agent's own run of the scan, not another member's under its id.
        expect(local.metadata.run_id).toMatch(/^[0-9a-f]{32}$/);
        expect(stored.metadata).toMatchObject({ target: data, schedule_id: scheduleId, run_id: local.metadata.run_id });
        const reported = await reportedSchedule(api().view, d.agentId, scheduleId, (s) => s.last_status === 'success');
        expect(reported).toMatchObject({ source: 'portal', retry_count: 0 });
        // The next run is the same time tomorrow.
        expect(Date.parse(reported.next_run)).toBe(due.getTime() + 86_400_000);
      }
      // One session per agent in the portal: a scan that got another member's id was refused and run again.
      expect(new Set(sessions).size).toBe(3);
    },
    6 * 60_000,
  );

  it(
    'survives an agent restart: loaded from the state directory and reported before the portal sends anything',
    async () => {
      const before = agents[0] as SvcdProcess;
      expect(await before.stop()).toEqual({ code: 0, signal: null });
      const again = await agent(1, {}, before);
      const reported = await reportedSchedule(
        api().view,
        again.agentId,
        scheduleId,
        (s) => Date.parse(s.next_run) === due.getTime() + 86_400_000,
      );
      expect(reported.source).toBe('portal');
      expect(again.output()).not.toContain('msg="portal schedules received"');
    },
    2 * 60_000,
  );

  it(
    "a run_scan's progress appears in the fleet listing; cancelled while it runs, its nmap stops and it is failed with the reason",
    async () => {
      const d = agents[1] as SvcdProcess;
      const watch = watchTree(d.pid, 50);
      // inetutils telnetd answers no nmap signature: version detection waits out every probe on it (about 45 s).
      const id = await queueCommand(fixture.portal, d.agentId, 'run_scan', {
        targets: legacy,
        profile: 'quick',
        ports: 'T:23',
      });
      const running = await untilValue(
        async () => {
          const view = (await api().view(d.agentId))?.running.find((c) => c.id === id);
          return view?.progress?.stage === 'nmap' ? view : undefined;
        },
        'the scan running with its progress in the fleet listing',
        2 * 60_000,
      );
      expect(running).toMatchObject({ id, command_type: 'run_scan', progress: { stage: 'nmap' } });
      await untilValue(async () => (watch.pidsNamed('nmap').length > 0 ? true : undefined), 'nmap under the daemon');

      const cancel = await http(fixture.portal.url, 'POST', '/api/agent-commands/cancel', {
        headers: withToken(admin),
        json: { command_id: id, reason: 'change window closed' },
      });
      expect(cancel.status, cancel.text).toBe(200);
      const done = await finishedCommand(fixture.portal, id, 2 * 60_000);
      watch.stop();
      expect(done.command.status).toBe('failed');
      expect(done.result?.exit_code).toBe(EXIT_CANCELLED);
      expect(done.result?.stderr).toContain(`Cancelled by ${ADMIN_EMAIL}: change window closed`);
      expect(watch.alive()).toEqual([]);
      expect((await api().view(d.agentId))?.running).toEqual([]);
    },
    4 * 60_000,
  );

  it(
    'a command that expired while its agent was away is never delivered',
    async () => {
      const away = agents[2] as SvcdProcess;
      expect(await away.stop()).toEqual({ code: 0, signal: null });
      const res = await http(fixture.portal.url, 'POST', '/api/agent-commands', {
        headers: withToken(admin),
        json: {
          agent_id: away.agentId,
          command_type: 'set_log_level',
          payload: { level: 'debug' },
          expires_in_seconds: 60,
        },
      });
      expect(res.status, res.text).toBe(201);
      const id = res.body.commands[0].id as number;
      shift += 120_000;
      // Back with its next heartbeat an hour away: it polls every second (and stops at a poll, below).
      const back = await agent(3, { DAEMON_HEARTBEAT_INTERVAL: '3600' }, away);
      const failed = await untilValue(
        async () => {
          const h = await commandHistory(fixture.portal, id);
          return h.command.status === 'failed' ? h : undefined;
        },
        'the expired command failed by the sweep',
        3 * 60_000,
      );
      expect((failed.command as { sent_at?: string | null }).sent_at).toBeNull();
      expect(failed.result?.stderr).toMatch(/^Expired at .* before it was delivered/);
      // It polled every second until the sweep failed the command, and never got it.
      expect(back.output()).not.toMatch(new RegExp(`command ${id}\\b`));
    },
    5 * 60_000,
  );

  it(
    'a deregistered agent stops at its next poll, its heartbeat an hour away',
    async () => {
      const d = agents.at(-1) as SvcdProcess;
      const asked = Date.now();
      expect(await api().patchAgent(d.agentId, 'deregister')).toBe(200);
      expect(await d.exited).toEqual({ code: 4, signal: null });
      expect(Date.now() - asked).toBeLessThan(60_000);
      const out = d.output();
      const at = out.search(/level=error msg="agent unregistered by the portal: shutting down" .*source=poll/);
      expect(at).toBeGreaterThan(0);
      expect(out.slice(at)).not.toMatch(/msg="scheduled scan started"/);
    },
    2 * 60_000,
  );
});
