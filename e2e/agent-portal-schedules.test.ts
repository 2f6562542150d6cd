import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everySeconds, schedulesApi } from '@svc/test-support/portal-schedules';
import { untilValue } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { doneSessions, reportedSchedule, storedSessionFile } from './helpers/portal-schedules.ts';
import { portalConf, type SvcdProcess, startSvcd } from '@svc/test-support/svcd';

// A schedule kept by the portal, end to end: created through the API for a group, delivered to
// a real svcd in its heartbeat answer, run at its time against 127.0.0.1, its session uploaded
// with the schedule's id, and still loaded and reported after the daemon restarts.

const fixture = usePortalWithKey({ tier: 'msp' });
let admin = '';
const agents = () => agentsApi(fixture.portal, () => admin);
const schedules = () => schedulesApi(fixture.portal.url, () => admin);
const started: SvcdProcess[] = [];

beforeAll(async () => {
  admin = await fixture.portal.adminToken();
});

afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
  await fs.rm(started[0]?.home ?? '/nonexistent', { recursive: true, force: true });
});

describe('a portal schedule for a group', () => {
  const group = 'lab-east';
  let d: SvcdProcess;
  let id = '';

  beforeAll(async () => {
    d = await startSvcd({
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key),
        // A local schedule beside it (once a year): both are reported, each with its source.
        'yearly.conf': { SCAN_TARGETS: '127.0.0.1', SCAN_CRON: '0 3 1 1 *', SCAN_PORTS: 'T:1' },
      },
    });
    started.push(d);
    await untilValue(async () => (await agents().view(d.agentId)) ?? undefined, 'the first heartbeat');
    expect((await schedules().join(d.agentId, group)).status).toBe(201);
    const res = await schedules().create({
      group_name: group,
      name: 'loopback every few seconds',
      targets: '127.0.0.1',
      ports: 'T:1',
      profile: 'quick',
      cron: everySeconds(3),
      timezone: 'Europe/Berlin',
      upload: true,
    });
    expect(res.status, res.text).toBe(201);
    id = res.body.schedule.id;
  });

  it('is delivered, runs at its time, and its uploaded session carries the schedule id', async () => {
    await d.waitFor(new RegExp(`msg="portal schedules received" revision=\\d+ schedules=${id}`));
    await untilValue(async () => (doneSessions(d.output(), id).length > 0 ? true : undefined), 'a scan', 90_000);
    const [session] = doneSessions(d.output(), id);
    const doc = await untilValue(
      () => storedSessionFile(fixture.portal.url, admin, session as string).catch(() => undefined),
      'the uploaded session',
    );
    expect(doc.metadata).toMatchObject({
      session_id: session,
      target: '127.0.0.1',
      is_scheduled: true,
      scheduled_by: 'daemon',
      schedule_id: id,
      schedule_cron: everySeconds(3),
      schedule_profile: 'quick',
    });
  });

  it('is reported in the heartbeat with source portal beside the local one', async () => {
    const s = await reportedSchedule(agents().view, d.agentId, id, (x) => x.last_status === 'success');
    expect(s).toMatchObject({ config: 'portal', source: 'portal', retry_count: 0 });
    expect(Date.parse(s.next_run)).toBeGreaterThan(Date.parse(s.last_run as string));
    const local = (await agents().view(d.agentId))?.schedules as { source?: string; config: string }[];
    expect(local.map((x) => `${x.source}:${x.config}`).sort()).toEqual(['local:yearly.conf', 'portal:portal']);
  });

  it('after a restart it is loaded from the state directory and reported before the portal sends anything', async () => {
    expect(await d.stop()).toEqual({ code: 0, signal: null });
    const again = await startSvcd({ agentId: d.agentId, home: d.home, configDir: d.configDir });
    started.push(again);
    await again.waitFor(new RegExp(`msg="scheduled scan started" schedule_id=${id}`), 60_000);
    const s = await reportedSchedule(agents().view, again.agentId, id, (x) => x.last_run !== null);
    expect(s.source).toBe('portal');
    // Nothing changed on the portal: the restarted daemon ran and reported the stored set unasked.
    expect(again.output()).not.toContain('msg="portal schedules received"');
  });
});
