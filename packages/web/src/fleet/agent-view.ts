import { AGENT_STATES, type AgentState, type AgentsQuery, type AgentView } from '@svc/protocol';
import { formatDate, NO_VALUE } from '../ui/format.ts';

/** How often the fleet page is read again while one of its agents runs a command (progress comes every 15 s at most). */
export const FLEET_POLL_MS = 5000;
/** How often otherwise, while the tab is shown: a new agent appears and states age without a reload. */
export const FLEET_IDLE_POLL_MS = 30_000;

/**
 * How the Fleet page reads an agent record: its state, ages in words, schedules and host
 * telemetry. Schedules and system_info are stored as the daemon sent them (JSON), so each
 * entry is read defensively and shown as text, never trusted to have a shape.
 */

export type { AgentState };

export function agentState(agent: Pick<AgentView, 'is_stale' | 'deregistered_at'>): AgentState {
  if (agent.deregistered_at !== null) return 'deregistered';
  return agent.is_stale ? 'stale' : 'online';
}

export interface ScheduleRow {
  id: string;
  /** `portal`: kept by the portal; `local`: a config file of the agent (also when an older agent does not say). */
  source: 'local' | 'portal';
  /** The config file, or a portal schedule's name. */
  config: string;
  lastRun: string;
  lastStatus: string;
  nextRun: string;
  retries: string;
}

const str = (v: unknown): string => (typeof v === 'string' && v !== '' ? v : NO_VALUE);

/** The heartbeat's schedules as table rows (docs/agent.md#heartbeat); anything not an object is skipped. */
export function scheduleRows(schedules: readonly unknown[] | null): ScheduleRow[] {
  const rows: ScheduleRow[] = [];
  for (const item of schedules ?? []) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    const s = item as Record<string, unknown>;
    const portal = s['source'] === 'portal';
    rows.push({
      id: str(s['schedule_id']),
      source: portal ? 'portal' : 'local',
      config: str(portal ? (s['name'] ?? s['config']) : s['config']),
      lastRun: typeof s['last_run'] === 'string' ? formatDate(s['last_run']) : NO_VALUE,
      lastStatus: str(s['last_status']),
      nextRun: typeof s['next_run'] === 'string' ? formatDate(s['next_run']) : NO_VALUE,
      retries: typeof s['retry_count'] === 'number' ? String(s['retry_count']) : NO_VALUE,
    });
  }
  return rows;
}

/** system_info as label/value pairs, nested values as compact JSON, at most `max` entries. */
export function systemInfoRows(info: Record<string, unknown> | null, max = 24): Array<[string, string]> {
  if (info === null) return [];
  return Object.entries(info)
    .slice(0, max)
    .map(([key, value]) => [key, typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))]);
}

/** One agent of one client: agent ids repeat across clients. */
export const agentKey = (a: { client_id: string | null; agent_id: string }): string =>
  JSON.stringify([a.client_id, a.agent_id]);

/** What a person calls an agent: the host name its heartbeat reports, else its id. */
export const agentName = (a: { hostname: string | null; agent_id: string }): string => a.hostname ?? a.agent_id;

/**
 * A label per agent for pickers and tables: `name · first address (client)`. Where two listed
 * agents would read the same, the id is added, so no two choices look alike.
 */
export function agentLabels(agents: readonly AgentView[]): Map<string, string> {
  const base = (a: AgentView) =>
    `${agentName(a)}${a.ip_addresses[0] ? ` · ${a.ip_addresses[0]}` : ''}${a.client_id ? ` (${a.client_id})` : ''}`;
  const seen = new Map<string, number>();
  for (const a of agents) seen.set(base(a), (seen.get(base(a)) ?? 0) + 1);
  return new Map(
    agents.map((a) => {
      const label = base(a);
      return [agentKey(a), (seen.get(label) ?? 0) > 1 && a.hostname !== null ? `${label} — ${a.agent_id}` : label];
    }),
  );
}

/**
 * Agents by what a person calls them (host name, else id), then by client and id: the order of
 * a picker, where heartbeat or id order would scatter the hosts one is looking for.
 */
export function byName<T extends Pick<AgentView, 'hostname' | 'agent_id' | 'client_id'>>(agents: readonly T[]): T[] {
  const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });
  return [...agents].sort(
    (a, b) =>
      collator.compare(agentName(a), agentName(b)) ||
      collator.compare(a.client_id ?? '', b.client_id ?? '') ||
      collator.compare(a.agent_id, b.agent_id),
  );
}

/** The fleet page's filters as the form holds them; '' is "any". */
export interface FleetFilters {
  /** The fleet search (protocol AgentsQuery.q): host name, address or agent id. */
  q: string;
  state: '' | AgentState;
  client: string;
  group: string;
  version: string;
}

export const NO_FILTERS: FleetFilters = { q: '', state: '', client: '', group: '', version: '' };

/** Each filter's name in the Fleet page's address, the same as in the portal's fleet query. */
const FILTER_PARAMS = Object.entries({
  q: 'q',
  state: 'state',
  client: 'client_id',
  group: 'group',
  version: 'version',
} satisfies Record<keyof FleetFilters, string>) as [keyof FleetFilters, string][];

/** The filters an address names (`/console/fleet?state=stale&client_id=acme`); an unknown state is left out. */
export function fleetFiltersOf(query: Readonly<Record<string, string | undefined>>): FleetFilters {
  const f = { ...NO_FILTERS };
  for (const [key, param] of FILTER_PARAMS) {
    const v = query[param];
    if (typeof v === 'string') f[key] = v as never;
  }
  if (!(AGENT_STATES as readonly string[]).includes(f.state)) f.state = '';
  return f;
}

/** The filters that are set, each under its name in FILTER_PARAMS. */
function filterParams(f: FleetFilters): Record<string, string> {
  const set: Record<string, string> = {};
  for (const [key, param] of FILTER_PARAMS) if (f[key].trim() !== '') set[param] = f[key].trim();
  return set;
}

/** The Fleet page's address for these filters: a view that can be linked to, bookmarked and gone back to. */
export function fleetHref(f: FleetFilters): string {
  const qs = new URLSearchParams(filterParams(f)).toString();
  return qs === '' ? '/console/fleet' : `/console/fleet?${qs}`;
}

/** The portal's fleet query (GET /api/health's agent listing) for the filters, a page size and a cursor. */
export function fleetQuery(f: FleetFilters, limit: number, cursor: string): Omit<AgentsQuery, 'agents'> {
  // The state is one of AGENT_STATES (FleetFilters.state), the other filters the portal checks.
  const query = { limit, ...filterParams(f) } as Omit<AgentsQuery, 'agents'>;
  if (cursor !== '') query.cursor = cursor;
  return query;
}
