import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsApi } from './helpers/agents-api.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { portalConf, type SvcdProcess, startSvcd } from '@svc/test-support/svcd';

/**
 * SVC_AGENT_ID and SVC_AGENT_STATE_DIR in a config file, like every other key (docs/agent.md):
 * cloned hosts with one host name get their own ids from their configs instead of colliding into
 * one agent. The environment holds neither here.
 */

const fixture = usePortalWithKey({ tier: 'business' });
let admin = '';
let d: SvcdProcess | undefined;

beforeAll(async () => {
  admin = await fixture.portal.adminToken();
});
afterAll(async () => {
  await d?.stop();
  if (d) await fs.rm(d.home, { recursive: true, force: true });
});

describe('agent id and state directory from the configs directory', () => {
  it('registers under the configured id and keeps its state in the configured directory', async () => {
    const id = `cloned-${Date.now().toString(36)}`;
    const home = await fs.mkdtemp('/tmp/svcd-conf-id-');
    const stateDir = path.join(home, 'configured-state');
    d = await startSvcd({
      home,
      env: { SVC_AGENT_ID: undefined, SVC_AGENT_STATE_DIR: undefined },
      configs: {
        'p.conf': portalConf(fixture.uploadUrl, fixture.key),
        'identity.conf': { SVC_AGENT_ID: id, SVC_AGENT_STATE_DIR: stateDir },
      },
      args: ['--once'],
    });
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expect(d.output()).toContain(`agent_id=${id}`);
    const view = await agentsApi(fixture.portal, () => admin).view(id);
    expect(view?.agent_id).toBe(id);
    const state = JSON.parse(await fs.readFile(path.join(stateDir, 'status.json'), 'utf8')) as { agent_id: string };
    expect(state.agent_id).toBe(id);
  });
});
