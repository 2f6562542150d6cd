import { AUDIT_MAX_DAYS, type AgentView, type AuditEvent, agentSearchProblem } from '@svc/protocol';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { identity } from '../auth/session.ts';
import { type AgentAction, changeAgent, listAgents } from '../api/agents.ts';
import { listAuditEvents } from '../api/audit.ts';
import { useAction } from '../ui/use-action.ts';
import { formatCount, formatDate, NO_VALUE, formatAge, formatDuration } from '../ui/format.ts';
import { useData } from '../ui/use-load.ts';
import { useRefresh } from '../ui/use-refresh.ts';
import { useDraft } from '../ui/use-draft.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { CursorPager, usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError, Notice } from '../ui/alert.tsx';
import { DataTable, TableWrap } from '../ui/table-wrap.tsx';
import {
  agentName,
  agentState,
  FLEET_IDLE_POLL_MS,
  FLEET_POLL_MS,
  type FleetFilters,
  fleetFiltersOf,
  fleetHref,
  fleetQuery,
  NO_FILTERS,
  scheduleRows,
  systemInfoRows,
} from './agent-view.ts';
import { deregisteredAgents } from './deregistered.ts';
import { RunningCommands } from './command-progress.tsx';
import { FleetFilterForm } from './fleet-filters.tsx';
import { GroupsSection } from './groups-section.tsx';
import { Page } from '../ui/page.tsx';

/** Agents per page of the fleet listing (the portal pages it by agent id). */
const AGENTS_PER_PAGE = 25;

/**
 * Fleet: registered agents (online or stale), found by host name, address or agent id (the
 * portal's fleet search), their details, deregistration, and the agents
 * awaiting re-enable or purge. Registration changes are admin-only at the portal, so a scoped
 * user sees its clients' agents and groups without them.
 */
export function FleetPage() {
  const isAdmin = identity.value?.role === 'admin';
  const [open, setOpen] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const action = useAction();
  // The filters live in the address, so a view can be linked to (the overview's stale agents) and gone back to.
  const { query, route } = useLocation();
  const filters = fleetFiltersOf(query);
  const filtersKey = JSON.stringify(filters);
  // Back and forward change the filters under the form: it shows them again.
  const [form, setForm] = useDraft<FleetFilters>(filters);
  // cursors[i] is the cursor of page i of these filters; page 0 has none. Other filters start at page 0.
  const [paging, setPaging] = useState({ of: filtersKey, cursors: [''] });
  const cursors = paging.of === filtersKey ? paging.cursors : [''];
  const setCursors = (next: string[]) => setPaging({ of: filtersKey, cursors: next });
  const cursor = cursors.at(-1) ?? '';
  const agents = useData(() => listAgents(fleetQuery(filters, AGENTS_PER_PAGE, cursor)), [cursor, filtersKey]);
  const running = (agents.data?.agents ?? []).some((a) => a.running.length > 0);
  useRefresh(agents.reload, running ? FLEET_POLL_MS : FLEET_IDLE_POLL_MS, [agents.data, agents.failure]);
  const filtered = filtersKey !== JSON.stringify(NO_FILTERS);
  const [searchError, setSearchError] = useState<string | null>(null);
  const applyFilters = (event: Event) => {
    event.preventDefault();
    const problem = form.q.trim() === '' ? null : agentSearchProblem(form.q.trim());
    setSearchError(problem);
    if (problem !== null) return;
    route(fleetHref(form));
  };
  const audit = useData(
    () =>
      isAdmin
        ? listAuditEvents({ days: AUDIT_MAX_DAYS, limit: 5000 }).then((a) => a.events)
        : Promise.resolve<AuditEvent[]>([]),
    // Read again after an action (act), not at each refresh of a page whose agents run commands.
    [isAdmin],
  );

  const act = async (agentId: string, clientId: string | null, verb: AgentAction) => {
    setNotice(null);
    const ok = await action.run(() => changeAgent(agentId, clientId, verb));
    if (ok) {
      const done = { deregister: 'deregistered', reenable: 're-enabled', purge: 'purged' }[verb];
      setNotice(`Agent ${agentId} ${done}`);
      agents.reload();
      audit.reload();
    }
  };

  const page = agents.data;
  return (
    <Page title="Fleet">
      <div class="adm-page">
        <ErrorMessage error={action.error} />
        {notice && <Notice>{notice}</Notice>}
        <section aria-labelledby="fleet-agents">
          <h2 id="fleet-agents">Agents</h2>
          <LoadError load={agents} />
          <FleetFilterForm form={form} onChange={setForm} onSubmit={applyFilters} />
          <ErrorMessage error={searchError} />
          {page && (
            <p class="fleet-counts" role="status" data-counts>
              <span data-count="online">{formatCount(page.counts.online)} online</span>
              <span data-count="stale">{formatCount(page.counts.stale)} stale</span>
              <span data-count="deregistered">{formatCount(page.counts.deregistered)} deregistered</span>
            </p>
          )}
          {page && (
            <p class="adm-hint">
              An agent is stale when its last heartbeat is older than {formatDuration(page.stale_threshold_seconds)}.
            </p>
          )}
          {page && page.agents.length === 0 && (
            <p>
              {filtered ? 'No agents match these filters' : 'No registered agents'}
              {cursors.length > 1 ? ' on this page' : ''}.
            </p>
          )}
          {page && page.agents.length > 0 && (
            <DataTable
              label="Agents"
              columns={['Agent', 'Client', 'State', 'Last heartbeat', 'Version', 'Uptime', 'Schedules', 'Actions']}
              stack={{ lead: ['State', 'Agent'] }}
            >
              {page.agents.map((a) => {
                const key = `${a.client_id ?? ''}/${a.agent_id}`;
                const state = agentState(a);
                return [
                  <tr key={key} data-agent={a.agent_id}>
                    <th scope="row">
                      <span class="fleet-name">{agentName(a)}</span>
                      {a.ip_addresses.length > 0 && <span class="fleet-ip">{a.ip_addresses.join(', ')}</span>}
                    </th>
                    <td>{a.client_id ?? NO_VALUE}</td>
                    <td>
                      <span class={`adm-badge adm-state-${state}`}>{state}</span>
                      <RunningCommands commands={a.running} />
                    </td>
                    <td title={formatDate(a.received_at)}>{formatAge(a.age_seconds)}</td>
                    <td>{a.version}</td>
                    <td>{formatDuration(a.uptime_seconds)}</td>
                    <td>{scheduleRows(a.schedules).length}</td>
                    <td>
                      <div class="adm-actions">
                        <button
                          type="button"
                          aria-expanded={open === key}
                          aria-controls={`agent-detail-${a.agent_id}`}
                          aria-label={`${open === key ? 'Hide details of' : 'Details of'} ${agentName(a)}`}
                          onClick={() => setOpen(open === key ? null : key)}
                        >
                          {open === key ? 'Hide details' : 'Details'}
                        </button>
                        {isAdmin && state === 'deregistered' && (
                          <>
                            <ConfirmButton
                              label="Re-enable"
                              question={`Re-enable ${agentName(a)}? Its heartbeats are accepted again.`}
                              disabled={action.busy}
                              onConfirm={() => act(a.agent_id, a.client_id, 'reenable')}
                            />
                            <ConfirmButton
                              label="Purge"
                              question={`Purge ${agentName(a)}? Its record, commands and results are deleted for good.`}
                              disabled={action.busy}
                              onConfirm={() => act(a.agent_id, a.client_id, 'purge')}
                            />
                          </>
                        )}
                        {isAdmin && state !== 'deregistered' && (
                          <ConfirmButton
                            label="Deregister"
                            question={`Deregister ${agentName(a)} (${a.agent_id})? Its heartbeats are refused until it is re-enabled.`}
                            disabled={action.busy}
                            onConfirm={() => act(a.agent_id, a.client_id, 'deregister')}
                          />
                        )}
                      </div>
                    </td>
                  </tr>,
                  open === key && (
                    <tr key={`${key}-detail`} id={`agent-detail-${a.agent_id}`}>
                      <td colSpan={8}>
                        <AgentDetail agent={a} />
                      </td>
                    </tr>
                  ),
                ];
              })}
            </DataTable>
          )}
          <CursorPager
            label="Agent pages"
            position={`Page ${cursors.length}`}
            hasPrevious={cursors.length > 1}
            hasNext={Boolean(page?.next_cursor)}
            onPrevious={() => setCursors(cursors.slice(0, -1))}
            onNext={() => page?.next_cursor && setCursors([...cursors, page.next_cursor])}
          />
        </section>
        {isAdmin && (
          <DeregisteredSection
            events={audit.data}
            error={audit.error}
            busy={action.busy}
            onAct={(id, clientId, verb) => act(id, clientId, verb)}
          />
        )}
        <GroupsSection agents={page?.agents ?? []} />
      </div>
    </Page>
  );
}

/** Copies the id for a command line or a support ticket; says so where a screen reader hears it. */
function CopyButton({ text }: { text: string }) {
  const [done, setDone] = useState<'' | 'Copied' | 'Copy failed'>('');
  const copy = () =>
    navigator.clipboard.writeText(text).then(
      () => setDone('Copied'),
      () => setDone('Copy failed'),
    );
  return (
    <>
      <button type="button" class="button-quiet" onClick={() => void copy()}>
        Copy id
      </button>{' '}
      <span role="status">{done}</span>
    </>
  );
}

function AgentDetail({ agent }: { agent: AgentView }) {
  const schedules = scheduleRows(agent.schedules);
  const info = systemInfoRows(agent.system_info);
  return (
    <div class="adm-page">
      <dl class="adm-dl">
        <dt>Agent id</dt>
        <dd>
          <code data-field="agent-id">{agent.agent_id}</code> <CopyButton text={agent.agent_id} />
        </dd>
        <dt>Addresses</dt>
        <dd>{agent.ip_addresses.join(', ') || NO_VALUE}</dd>
        <dt>Status</dt>
        <dd>{agent.status}</dd>
        <dt>First seen</dt>
        <dd>{formatDate(agent.first_seen_at)}</dd>
        <dt>Last heartbeat</dt>
        <dd>{formatDate(agent.received_at)}</dd>
        <dt>Sent at</dt>
        <dd>{formatDate(agent.timestamp)}</dd>
      </dl>
      <h3>Schedules</h3>
      {schedules.length === 0 ? (
        <p>No schedules reported.</p>
      ) : (
        <TableWrap label={`Schedules of ${agent.agent_id}`}>
          <table>
            <thead>
              <tr>
                <th scope="col">Schedule</th>
                <th scope="col">Source</th>
                <th scope="col">Config or name</th>
                <th scope="col">Last run</th>
                <th scope="col">Last status</th>
                <th scope="col">Next run</th>
                <th scope="col">Retries</th>
              </tr>
            </thead>
            <tbody>
              {schedules.map((s) => (
                <tr key={s.id + s.config}>
                  <td>{s.id}</td>
                  <td>{s.source}</td>
                  <td>{s.config}</td>
                  <td>{s.lastRun}</td>
                  <td>{s.lastStatus}</td>
                  <td>{s.nextRun}</td>
                  <td>{s.retries}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <h3>System</h3>
      {info.length === 0 ? (
        <p>No system information reported.</p>
      ) : (
        <dl class="adm-dl">{info.map(([k, v]) => [<dt key={`${k}-t`}>{k}</dt>, <dd key={`${k}-d`}>{v}</dd>])}</dl>
      )}
    </div>
  );
}

function DeregisteredSection(props: {
  events: AuditEvent[] | null;
  error: string | null;
  busy: boolean;
  onAct: (agentId: string, clientId: string | null, verb: 'reenable' | 'purge') => Promise<void>;
}) {
  const list = props.events === null ? [] : deregisteredAgents(props.events);
  const { page, controls: pager } = usePages(list, 'Deregistered agents');
  return (
    <section aria-labelledby="fleet-deregistered">
      <h2 id="fleet-deregistered">Deregistered agents</h2>
      <ErrorMessage error={props.error} />
      {props.events !== null && list.length === 0 && <p>No deregistered agents in the last 90 days.</p>}
      {page.items.length > 0 && (
        <DataTable
          label="Deregistered agents"
          columns={['Agent', 'Client', 'Deregistered', 'By', 'Actions']}
          stack={{ lead: ['Agent'] }}
        >
          {page.items.map((a) => (
            <tr key={`${a.client_id ?? ''}/${a.agent_id}`} data-deregistered={a.agent_id}>
              <th scope="row">{a.agent_id}</th>
              <td>{a.client_id ?? NO_VALUE}</td>
              <td>{formatDate(a.deregistered_at)}</td>
              <td>{a.deregistered_by}</td>
              <td>
                <div class="adm-actions">
                  <ConfirmButton
                    label="Re-enable"
                    question={`Re-enable ${a.agent_id}? Its heartbeats are accepted again.`}
                    disabled={props.busy}
                    onConfirm={() => props.onAct(a.agent_id, a.client_id, 'reenable')}
                  />
                  <ConfirmButton
                    label="Purge"
                    question={`Purge ${a.agent_id}? Its record, commands and results are deleted for good.`}
                    disabled={props.busy}
                    onConfirm={() => props.onAct(a.agent_id, a.client_id, 'purge')}
                  />
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {pager}
    </section>
  );
}
