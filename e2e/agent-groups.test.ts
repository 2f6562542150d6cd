import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import { untilValue as until } from '@svc/test-support/wait';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { newAgentId, portalConf, type SvcdProcess, startSvcd } from '@svc/test-support/svcd';

// A group broadcast reaches three real agents: each gets its own command and reports it.

const fixture = usePortalWithKey({ tier: 'business' });
let admin = '';
const api = () => agentsApi(fixture.portal, () => admin);
const agents: SvcdProcess[] = [];

beforeAll(async () => {
  admin = await fixture.portal.adminToken();
  for (const n of [1, 2, 3])
    agents.push(
      await startSvcd({
        agentId: newAgentId(`g${n}`),
        configs: { 'p.conf': portalConf(fixture.uploadUrl, fixture.key) },
      }),
    );
  for (const d of agents) await until(() => api().view(d.agentId), `the first heartbeat of ${d.agentId}`);
});

afterAll(async () => {
  await Promise.all(agents.map((d) => d.stop()));
  await Promise.all(agents.map((d) => fs.rm(d.home, { recursive: true, force: true })));
});

describe('agent groups', () => {
  it('a broadcast to a group of three agents is run and reported by each', async () => {
    for (const d of agents) {
      const added = await http(fixture.portal.url, 'POST', '/api/agent-groups', {
        headers: withToken(admin),
        json: { agent_id: d.agentId, group_name: 'lab-fleet' },
      });
      expect(added.status, added.text).toBeLessThan(300);
    }
    const ids = await api().queue({ group_target: 'lab-fleet' }, 'set_log_level', { level: 'debug' });
    expect(ids).toHaveLength(3);
    const details = await Promise.all(
      ids.map((id) =>
        until(async () => {
          const d = await api().detail(id);
          return d.command.status === 'completed' ? d : undefined;
        }, `command ${id}`),
      ),
    );
    expect(details.map((d) => d.command.agent_id).sort()).toEqual(agents.map((d) => d.agentId).sort());
    for (const d of details) {
      expect(d.command.group_target).toBe('lab-fleet');
      expect(d.result).toMatchObject({ exit_code: 0 });
    }
    // Each daemon changed its own level.
    for (const d of agents) await d.waitFor(/level=debug msg="heartbeat sent"/);
  });
});
