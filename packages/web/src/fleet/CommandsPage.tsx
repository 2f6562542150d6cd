import {
  type AgentView,
  COMMAND_STATUSES,
  isFinalCommandStatus,
  COMMAND_TYPES,
  type CommandRecord,
  type CommandStatus,
  type QueueCommandResponse,
  sessionHref,
} from '@svc/protocol';
import { useEffect, useState } from 'preact/hooks';
import { identity } from '../auth/session.ts';
import type { ConsoleClient } from '../api/client.ts';
import { Notice, useAction } from '../admin/ui.tsx';
import { useData } from '../ui/use-load.ts';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { formatDate } from '../ui/format.ts';
import { agentKey, agentLabels } from './agent-view.ts';
import {
  COMMAND_FIELDS,
  type CommandField,
  configValueChoices,
  configValueHint,
  draftQueueBody,
  type FormValues,
  isCommandType,
} from './command-form.ts';
import { commandTarget, needsPolling } from './command-status.ts';
import type { Groups } from './GroupsSection.tsx';
import { AnySelect } from '../ui/any-select.tsx';
import { Page } from '../ui/page.tsx';

/** How often history and an open command are refreshed while something can still change. */
export const POLL_MS = 2000;
const HISTORY_LIMIT = 500;

interface CommandDetail {
  command: CommandRecord;
  result: {
    exit_code: number | null;
    stdout: string;
    stderr: string;
    session_id: string | null;
    completed_at: string;
  } | null;
}

/** Commands: queue to an agent or a group, the history with live status, one command's result. */
export function CommandsPage({ client }: { client: ConsoleClient }) {
  const [status, setStatus] = useState('');
  const [selected, setSelected] = useState<number | null>(null);
  const history = useData(
    () =>
      client.api<{ commands: CommandRecord[] }>(
        'GET',
        `/api/agent-commands?limit=${HISTORY_LIMIT}${status ? `&status=${status}` : ''}`,
      ),
    [status],
  );
  const commands = history.data?.commands ?? [];
  const polling = needsPolling(commands);
  useEffect(() => {
    if (!polling) return;
    const timer = setTimeout(history.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [polling, history.data, history.reload]);
  const { page, first: firstPage, controls: pager } = usePages(commands, 'Command history');

  return (
    <Page title="Commands">
      <div class="adm-page">
        {identity.value?.role === 'admin' ? (
          <QueueForm client={client} onQueued={history.reload} />
        ) : (
          <p>Commands are queued by administrators; the history below shows your clients' agents.</p>
        )}
        <section aria-labelledby="cmd-history">
          <h2 id="cmd-history">History</h2>
          <div class="adm-row">
            <AnySelect
              class="adm-field"
              label="Status"
              value={status}
              options={COMMAND_STATUSES}
              onChange={(v) => {
                setStatus(v);
                firstPage();
              }}
            />
            <span class="adm-hint" role="status">
              {polling ? 'Updating live' : ''}
            </span>
          </div>
          <LoadError load={history} />
          {history.data && commands.length === 0 && <p>No commands.</p>}
          {page.items.length > 0 && (
            <DataTable
              label="Command history"
              columns={['Id', 'Type', 'Target', 'Status', 'Priority', 'Queued', 'By']}
              stack={{ lead: ['Status', 'Type'] }}
            >
              {page.items.map((c) => (
                <tr key={c.id} data-command={c.id}>
                  <th scope="row">
                    <button
                      type="button"
                      class="adm-link"
                      aria-label={`Show command ${c.id}`}
                      aria-pressed={selected === c.id}
                      onClick={() => setSelected(c.id)}
                    >
                      #{c.id}
                    </button>
                  </th>
                  <td>{c.command_type}</td>
                  <td>
                    {commandTarget(c)}
                    {c.client_id ? ` · ${c.client_id}` : ''}
                  </td>
                  <td>
                    <StatusBadge status={c.status} />
                  </td>
                  <td>{c.priority}</td>
                  <td>{formatDate(c.created_at)}</td>
                  <td>{c.created_by}</td>
                </tr>
              ))}
            </DataTable>
          )}
          {pager}
        </section>
        {selected !== null && <CommandView client={client} id={selected} onClose={() => setSelected(null)} />}
      </div>
    </Page>
  );
}

function StatusBadge({ status }: { status: CommandStatus }) {
  return <span class={`adm-badge adm-status-${status}`}>{status}</span>;
}

function CommandView({ client, id, onClose }: { client: ConsoleClient; id: number; onClose: () => void }) {
  const detail = useData(() => client.api<CommandDetail>('GET', `/api/agent-commands?command_id=${id}`), [id]);
  const command = detail.data?.command;
  const live = command !== undefined && !isFinalCommandStatus(command.status);
  useEffect(() => {
    if (!live) return;
    const timer = setTimeout(detail.reload, POLL_MS);
    return () => clearTimeout(timer);
  }, [live, detail.data, detail.reload]);
  const result = detail.data?.result ?? null;
  return (
    <section aria-labelledby="cmd-detail" id="command-detail">
      <div class="adm-row">
        <h2 id="cmd-detail">Command #{id}</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <ErrorMessage error={detail.error} />
      {command && (
        <dl class="adm-dl">
          <dt>Type</dt>
          <dd>{command.command_type}</dd>
          <dt>Target</dt>
          <dd>{commandTarget(command)}</dd>
          <dt>Agent id</dt>
          <dd>
            <code>{command.agent_id}</code>
            {command.client_id ? ` (${command.client_id})` : ''}
          </dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={command.status} />
          </dd>
          <dt>Payload</dt>
          <dd>
            <code>{JSON.stringify(command.payload)}</code>
          </dd>
          <dt>Queued</dt>
          <dd>{formatDate(command.created_at)}</dd>
          <dt>Sent</dt>
          <dd>{formatDate(command.sent_at)}</dd>
          <dt>Completed</dt>
          <dd>{formatDate(command.completed_at)}</dd>
          <dt>Exit code</dt>
          <dd data-field="exit-code">{result?.exit_code ?? '—'}</dd>
          <dt>Session</dt>
          <dd>
            {result?.session_id ? (
              <a href={sessionHref(result.session_id, command.client_id)}>{result.session_id}</a>
            ) : (
              '—'
            )}
          </dd>
        </dl>
      )}
      {result && (
        <>
          <h3>stdout</h3>
          <pre class="adm-pre" data-field="stdout">
            {result.stdout || '(empty)'}
          </pre>
          <h3>stderr</h3>
          <pre class="adm-pre" data-field="stderr">
            {result.stderr || '(empty)'}
          </pre>
        </>
      )}
    </section>
  );
}

function QueueForm({ client, onQueued }: { client: ConsoleClient; onQueued: () => void }) {
  const agents = useData(() => client.api<{ agents: AgentView[] }>('GET', '/api/health?agents=true&limit=1000'), []);
  const groups = useData(() => client.api<{ groups: Groups }>('GET', '/api/agent-groups'), []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [targetKind, setTargetKind] = useState<'agent' | 'group'>('agent');
  const [agentChoice, setAgentChoice] = useState('');
  const [groupKey, setGroupKey] = useState('');
  const [allClients, setAllClients] = useState(false);
  const [type, setType] = useState<string>('run_scan');
  const [values, setValues] = useState<FormValues>({});
  const [priority, setPriority] = useState('5');

  const labels = agentLabels(agents.data?.agents ?? []);
  const groupChoices = [
    ...new Set(
      Object.entries(groups.data?.groups ?? {}).flatMap(([name, members]) =>
        members.map((m) => JSON.stringify([m.client_id, name])),
      ),
    ),
  ]
    .map((k) => JSON.parse(k) as [string | null, string])
    .sort((a, b) => a[1].localeCompare(b[1]));

  const submit = async (event: Event) => {
    event.preventDefault();
    setNotice(null);
    setFormError(null);
    let draft: ReturnType<typeof draftQueueBody>;
    if (targetKind === 'agent') {
      const agent = agents.data?.agents.find((a) => agentKey(a) === agentChoice);
      draft = draftQueueBody(
        type,
        { kind: 'agent', agent_id: agent?.agent_id ?? '', client_id: agent?.client_id ?? undefined },
        values,
        priority,
      );
    } else {
      const [clientId, name] = groupKey ? (JSON.parse(groupKey) as [string | null, string]) : [null, ''];
      draft = draftQueueBody(
        type,
        { kind: 'group', group_name: name, client_id: clientId ?? undefined, all_clients: allClients },
        values,
        priority,
      );
    }
    if (!draft.ok) return setFormError(draft.message);
    const body = draft.body;
    let answer: QueueCommandResponse | null = null;
    const ok = await action.run(async () => {
      answer = await client.api<QueueCommandResponse>('POST', '/api/agent-commands', body);
    });
    if (ok && answer !== null) {
      const { commands, skipped } = answer as QueueCommandResponse;
      const ids = commands.map((c) => `#${c.id}`).join(', ');
      setNotice(
        `Queued ${commands.length} command${commands.length === 1 ? '' : 's'} ${ids}` +
          (skipped?.length ? `; skipped ${skipped.map((s) => `${s.agent_id} (${s.reason})`).join(', ')}` : ''),
      );
      onQueued();
    }
  };

  const fields = isCommandType(type) ? COMMAND_FIELDS[type] : [];
  return (
    <section aria-labelledby="cmd-queue">
      <h2 id="cmd-queue">Queue a command</h2>
      <ErrorMessage error={agents.error ?? groups.error} />
      <form class="adm-form" onSubmit={submit} aria-labelledby="cmd-queue" noValidate>
        <fieldset>
          <legend>Send to</legend>
          <label class="adm-check">
            <input
              type="radio"
              name="target-kind"
              checked={targetKind === 'agent'}
              onChange={() => setTargetKind('agent')}
            />
            An agent
          </label>
          <label class="adm-check">
            <input
              type="radio"
              name="target-kind"
              checked={targetKind === 'group'}
              onChange={() => setTargetKind('group')}
            />
            A group
          </label>
        </fieldset>
        {targetKind === 'agent' ? (
          <div class="adm-field">
            <label for="queue-agent">Agent</label>
            <select id="queue-agent" value={agentChoice} onChange={(e) => setAgentChoice(e.currentTarget.value)}>
              <option value="">Choose an agent</option>
              {(agents.data?.agents ?? []).map((a) => (
                <option key={agentKey(a)} value={agentKey(a)} title={a.agent_id}>
                  {labels.get(agentKey(a))}
                  {a.is_stale ? ' — stale' : ''}
                </option>
              ))}
            </select>
          </div>
        ) : (
          <>
            <div class="adm-field">
              <label for="queue-group">Group</label>
              <select id="queue-group" value={groupKey} onChange={(e) => setGroupKey(e.currentTarget.value)}>
                <option value="">Choose a group</option>
                {groupChoices.map(([clientId, name]) => (
                  <option key={`${clientId}/${name}`} value={JSON.stringify([clientId, name])}>
                    {name}
                    {clientId ? ` (${clientId})` : ''}
                  </option>
                ))}
              </select>
            </div>
            <label class="adm-check">
              <input type="checkbox" checked={allClients} onChange={(e) => setAllClients(e.currentTarget.checked)} />
              Every client that has this group
            </label>
          </>
        )}
        <label>
          Command
          <select
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value);
              setValues({});
            }}
          >
            {COMMAND_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {fields.map((f) => (
          <PayloadField
            key={`${type}-${f.key}`}
            field={f}
            values={values}
            onChange={(v) => setValues({ ...values, [f.key]: v })}
          />
        ))}
        <label>
          Priority (0-10)
          <input
            type="number"
            min={0}
            max={10}
            step={1}
            value={priority}
            onInput={(e) => setPriority(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Queue command
        </button>
      </form>
      <ErrorMessage error={formError ?? action.error} />
      {notice && <Notice>{notice}</Notice>}
    </section>
  );
}

function PayloadField(props: { field: CommandField; values: FormValues; onChange: (v: string) => void }) {
  const { field, values } = props;
  const value = values[field.key] ?? '';
  const hintId = `hint-${field.key}`;
  const choices =
    field.key === 'config_value' ? configValueChoices(values['config_key'] ?? '') : (field.options ?? null);
  const hint = field.key === 'config_value' ? configValueHint(values['config_key'] ?? '') : (field.hint ?? null);
  const label = `${field.label}${field.required ? '' : ' (optional)'}`;
  const id = `payload-${field.key}`;
  return (
    <div class="adm-field">
      <label for={id}>{label}</label>
      {choices ? (
        <select
          id={id}
          value={value}
          aria-describedby={hint ? hintId : undefined}
          onChange={(e) => props.onChange(e.currentTarget.value)}
        >
          {!choices.includes('') && <option value="">Choose</option>}
          {choices.map((c) => (
            <option key={c} value={c}>
              {c === '' ? 'Default' : c}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          value={value}
          aria-describedby={hint ? hintId : undefined}
          onInput={(e) => props.onChange(e.currentTarget.value)}
          spellcheck={false}
        />
      )}
      {hint && (
        <span class="adm-hint" id={hintId}>
          {hint}
        </span>
      )}
    </div>
  );
}
