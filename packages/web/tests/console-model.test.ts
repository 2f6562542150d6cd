import { type AgentView, CONSOLE_ACCESS, type ConsolePath, mayOpen, permissionsOf } from '@svc/protocol';
import { describe, expect, it } from 'vitest';
import { fallbackCaller, sectionsFor } from '../src/auth/section-access.ts';
import { agentKey, agentLabels, agentName, byName, fleetQuery, NO_FILTERS } from '../src/fleet/agent-view.ts';

const sections = (Object.keys(CONSOLE_ACCESS) as ConsolePath[]).map((path) => ({ path }));
const paths = (caller: Parameters<typeof sectionsFor>[1]) => sectionsFor(sections, caller).map((s) => s.path);
const scoped = (tier: 'professional' | 'business' | 'msp') => ({ admin: false, permissions: [...permissionsOf(tier)] });

describe('sections by permission', () => {
  it('opens every section to an admin', () => {
    expect(paths({ admin: true, permissions: [] })).toEqual(Object.keys(CONSOLE_ACCESS));
  });

  it("opens a scoped user's sections by its tier, never licenses or users", () => {
    expect(paths(scoped('professional'))).toEqual([
      '/console/overview',
      '/console/sessions',
      '/console/findings',
      '/console/changes',
    ]);
    expect(paths(scoped('business'))).toEqual([
      '/console/overview',
      '/console/sessions',
      '/console/findings',
      '/console/changes',
      '/console/commands',
      '/console/webhooks',
    ]);
    expect(paths(scoped('msp'))).toEqual([
      '/console/overview',
      '/console/sessions',
      '/console/findings',
      '/console/changes',
      '/console/fleet',
      '/console/commands',
      '/console/webhooks',
      '/console/audit',
      '/console/health',
    ]);
    expect(mayOpen('/console/licenses', scoped('msp'))).toBe(false);
  });

  it('falls back to the overview and the sessions for a scoped user until the portal answers', () => {
    const who = { subject: 's', email: 'e', clientIds: ['acme'] };
    expect(paths(fallbackCaller({ ...who, role: 'member' }))).toEqual([
      '/console/overview',
      '/console/sessions',
      '/console/findings',
      '/console/changes',
    ]);
    expect(paths(fallbackCaller({ ...who, role: 'admin' }))).toEqual(Object.keys(CONSOLE_ACCESS));
  });
});

function agentOf(o: Partial<AgentView> & { agent_id: string }): AgentView {
  return {
    version: '1',
    timestamp: '',
    status: 'running',
    uptime_seconds: 0,
    client_id: 'acme',
    schedules: null,
    system_info: null,
    received_at: '',
    first_seen_at: '',
    deregistered_at: null,
    is_stale: false,
    age_seconds: 0,
    hostname: null,
    running: [],
    ip_addresses: [],
    ...o,
  };
}

describe('agents by name', () => {
  it('names an agent by its host name, else its id', () => {
    expect(agentName(agentOf({ agent_id: 'svcd_1', hostname: 'edge-01' }))).toBe('edge-01');
    expect(agentName(agentOf({ agent_id: 'svcd_1' }))).toBe('svcd_1');
  });

  it('labels agents with name, first address and client, adding the id only where two would read the same', () => {
    const a = agentOf({ agent_id: 'svcd_a', hostname: 'edge-01', ip_addresses: ['10.0.0.1', 'fd00::1'] });
    const b = agentOf({ agent_id: 'svcd_b', hostname: 'db', ip_addresses: ['10.0.0.2'] });
    const c = agentOf({ agent_id: 'svcd_c', hostname: 'db', ip_addresses: ['10.0.0.2'] });
    const d = agentOf({ agent_id: 'svcd_a', client_id: 'beta' });
    const e = agentOf({ agent_id: 'svcd_e', client_id: null });
    const labels = agentLabels([a, b, c, d, e]);
    expect([a, b, c, d, e].map((x) => labels.get(agentKey(x)))).toEqual([
      'edge-01 · 10.0.0.1 (acme)',
      'db · 10.0.0.2 (acme) — svcd_b',
      'db · 10.0.0.2 (acme) — svcd_c',
      'svcd_a (beta)',
      'svcd_e',
    ]);
  });

  it('builds the fleet query from the filters, leaving out the empty ones', () => {
    expect(fleetQuery(NO_FILTERS, 25, '')).toEqual({ limit: 25 });
    expect(
      fleetQuery({ q: '', state: 'stale', client: ' acme ', group: 'edge', version: '4.2.3' }, 25, 'svcd_0a&b'),
    ).toEqual({ limit: 25, state: 'stale', client_id: 'acme', group: 'edge', version: '4.2.3', cursor: 'svcd_0a&b' });
    expect(fleetQuery({ ...NO_FILTERS, q: ' raspberry ' }, 25, '')).toEqual({ limit: 25, q: 'raspberry' });
  });

  it('orders a picker by host name (any case, numbers as numbers), then client and id', () => {
    const agents = [
      { hostname: 'edge-10', agent_id: 'svcd_1', client_id: 'acme' },
      { hostname: null, agent_id: 'svcd_0', client_id: 'acme' },
      { hostname: 'Edge-9', agent_id: 'svcd_2', client_id: 'acme' },
      { hostname: 'raspberrypi', agent_id: 'svcd_4', client_id: 'beta' },
      { hostname: 'raspberrypi', agent_id: 'svcd_3', client_id: 'acme' },
    ];
    expect(byName(agents).map((a) => a.agent_id)).toEqual(['svcd_2', 'svcd_1', 'svcd_3', 'svcd_4', 'svcd_0']);
  });
});
