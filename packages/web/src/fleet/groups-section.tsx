import type { AgentView } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { addToGroup, type GroupMember, listGroups, type Membership, removeFromGroup } from '../api/agent-groups.ts';
import { useAction } from '../ui/use-action.ts';
import { useData } from '../ui/use-load.ts';
import { ConfirmButton } from '../ui/confirm.tsx';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, Notice } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { formatDate, NO_VALUE } from '../ui/format.ts';
import { agentKey, agentLabels, agentName } from './agent-view.ts';

interface MemberRow extends GroupMember {
  group: string;
}

/** An agent's membership of a group; an agent without a client names none. */
const membership = (agent: { agent_id: string; client_id: string | null }, group: string): Membership => ({
  agent_id: agent.agent_id,
  group_name: group,
  ...(agent.client_id === null ? {} : { client_id: agent.client_id }),
});

/** Agent groups: one row per membership, add an agent to a group, remove it (confirmed). */
export function GroupsSection({ agents }: { agents: readonly AgentView[] }) {
  const groups = useData(listGroups, []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [agentChoice, setAgentChoice] = useState('');
  const [groupName, setGroupName] = useState('');
  const rows: MemberRow[] = Object.entries(groups.data?.groups ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([group, members]) => members.map((m) => ({ ...m, group })));
  const { page, controls: pager } = usePages(rows, 'Group members');
  const labels = agentLabels(agents);
  // Members are listed by id; the agents on the fleet page give their host names.
  const nameOf = (m: GroupMember) => {
    const a = agents.find((x) => agentKey(x) === agentKey(m));
    return a ? agentName(a) : m.agent_id;
  };

  const add = async (event: Event) => {
    event.preventDefault();
    setNotice(null);
    const agent = agents.find((a) => agentKey(a) === agentChoice);
    if (!agent) return void action.run(() => Promise.reject(new Error('Choose an agent')));
    const name = groupName.trim();
    const ok = await action.run(() => addToGroup(membership(agent, name)));
    if (ok) {
      setNotice(`Added ${agentName(agent)} to ${name}`);
      setGroupName('');
      groups.reload();
    }
  };

  const remove = async (m: MemberRow) => {
    setNotice(null);
    const ok = await action.run(() => removeFromGroup(membership(m, m.group)));
    if (ok) {
      setNotice(`Removed ${m.agent_id} from ${m.group}`);
      groups.reload();
    }
  };

  return (
    <section aria-labelledby="fleet-groups">
      <h2 id="fleet-groups">Groups</h2>
      <ErrorMessage error={groups.error ?? action.error} />
      {notice && <Notice>{notice}</Notice>}
      <form class="adm-form" onSubmit={add} aria-label="Add an agent to a group">
        <div class="adm-field">
          <label for="group-agent">Agent</label>
          <select id="group-agent" value={agentChoice} onChange={(e) => setAgentChoice(e.currentTarget.value)} required>
            <option value="">Choose an agent</option>
            {agents.map((a) => (
              <option key={agentKey(a)} value={agentKey(a)} title={a.agent_id}>
                {labels.get(agentKey(a))}
              </option>
            ))}
          </select>
        </div>
        <label>
          Group name
          <input value={groupName} onInput={(e) => setGroupName(e.currentTarget.value)} required maxLength={64} />
        </label>
        <button type="submit" disabled={action.busy}>
          Add to group
        </button>
      </form>
      {groups.data && rows.length === 0 && <p>No groups yet.</p>}
      {page.items.length > 0 && (
        <DataTable
          label="Group members"
          columns={['Group', 'Agent', 'Client', 'Added', 'Actions']}
          stack={{ lead: ['Group', 'Agent'] }}
        >
          {page.items.map((m) => (
            <tr key={`${m.group}/${m.client_id ?? ''}/${m.agent_id}`} data-group={m.group} data-member={m.agent_id}>
              <th scope="row">{m.group}</th>
              <td>
                {nameOf(m)}
                {nameOf(m) !== m.agent_id && (
                  <>
                    {' '}
                    <code class="fleet-ip">{m.agent_id}</code>
                  </>
                )}
              </td>
              <td>{m.client_id ?? NO_VALUE}</td>
              <td>{formatDate(m.created_at)}</td>
              <td>
                <ConfirmButton
                  label="Remove"
                  question={`Remove ${nameOf(m)} from group ${m.group}?`}
                  disabled={action.busy}
                  onConfirm={() => remove(m)}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {pager}
    </section>
  );
}
