import { COMMAND_STATUSES, isFinalCommandStatus, type CommandStatus, sessionHref } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { identity } from '../auth/session.ts';
import { getCommand, listCommands } from '../api/agent-commands.ts';
import { useData } from '../ui/use-load.ts';
import { useRefresh } from '../ui/use-refresh.ts';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { formatDate, NO_VALUE } from '../ui/format.ts';
import { commandElapsed, commandTarget, needsPolling } from './command-status.ts';
import { CommandProgressBar } from './command-progress.tsx';
import { QueueForm } from './queue-form.tsx';
import { CancelCommand, CancelRequested } from './cancel-command.tsx';
import { AnySelect, chosenOf } from '../ui/any-select.tsx';
import { Page } from '../ui/page.tsx';

/** How often history and an open command are refreshed while something can still change. */
export const POLL_MS = 2000;
const HISTORY_LIMIT = 500;

/** Commands: queue to an agent or a group, the history with live status, one command's result. */
export function CommandsPage() {
  const [status, setStatus] = useState('');
  const [selected, setSelected] = useState<number | null>(null);
  const history = useData(() => listCommands(HISTORY_LIMIT, chosenOf(status, COMMAND_STATUSES)), [status]);
  const commands = history.data?.commands ?? [];
  const polling = needsPolling(commands);
  useRefresh(history.reload, polling ? POLL_MS : null, [history.data, history.failure]);
  const { page, first: firstPage, controls: pager } = usePages(commands, 'Command history');

  return (
    <Page title="Commands">
      <div class="adm-page">
        {identity.value?.role === 'admin' ? (
          <QueueForm onQueued={history.reload} />
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
        {selected !== null && (
          <CommandView id={selected} onClose={() => setSelected(null)} onChanged={history.reload} />
        )}
      </div>
    </Page>
  );
}

function StatusBadge({ status }: { status: CommandStatus }) {
  return <span class={`adm-badge adm-status-${status}`}>{status}</span>;
}

function CommandView(props: { id: number; onClose: () => void; onChanged: () => void }) {
  const { id, onClose } = props;
  const detail = useData(() => getCommand(id), [id]);
  const command = detail.data?.command;
  const live = command !== undefined && !isFinalCommandStatus(command.status);
  useRefresh(detail.reload, live ? POLL_MS : null, [detail.data, detail.failure]);
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
      {command && identity.value?.role === 'admin' && (
        <CancelCommand
          command={command}
          onCancelled={() => {
            detail.reload();
            props.onChanged();
          }}
        />
      )}
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
          <dt>Expires</dt>
          <dd data-field="expires">
            {isFinalCommandStatus(command.status) ? NO_VALUE : formatDate(command.expires_at)}
          </dd>
          <CancelRequested command={command} />
          <dt>Time</dt>
          <dd data-field="elapsed">{commandElapsed(command, Date.now()) ?? NO_VALUE}</dd>
          {command.status === 'acked' && command.progress !== null && (
            <>
              <dt>Progress</dt>
              <dd>
                <CommandProgressBar id={command.id} progress={command.progress} />
              </dd>
            </>
          )}
          <dt>Exit code</dt>
          <dd data-field="exit-code">{result?.exit_code ?? NO_VALUE}</dd>
          <dt>Session</dt>
          <dd>
            {result?.session_id ? (
              <a href={sessionHref(result.session_id, command.client_id)}>{result.session_id}</a>
            ) : (
              NO_VALUE
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
