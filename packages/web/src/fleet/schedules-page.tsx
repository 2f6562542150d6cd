import type { PortalSchedule, PortalScheduleCreateBody } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { listAgents } from '../api/agents.ts';
import { createSchedule, deleteSchedule, listSchedules, updateSchedule } from '../api/agent-schedules.ts';
import { useAction } from '../ui/use-action.ts';
import { ErrorMessage, Notice } from '../ui/alert.tsx';
import { ConfirmButton } from '../ui/confirm.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { useData } from '../ui/use-load.ts';
import { PICKER_LIMIT } from './agent-picker.tsx';
import { agentKey, agentLabels } from './agent-view.ts';
import { EMPTY_SCHEDULE_FORM, formOf, type ScheduleForm, scanBody, targetLabel } from './schedule-form.ts';
import { NO_VALUE } from '../ui/format.ts';

/**
 * Scan schedules kept by the portal (docs/agent.md "Schedules kept by the portal"): list,
 * create for an agent or a group, edit, enable or disable, delete. Agents receive a change
 * with their next heartbeat; the Fleet page shows what each agent reports of them.
 */
export function SchedulesPage() {
  const list = useData(listSchedules, []);
  const agents = useData(() => listAgents({ limit: PICKER_LIMIT }), []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [form, setForm] = useState<ScheduleForm>(EMPTY_SCHEDULE_FORM);
  const [editing, setEditing] = useState<PortalSchedule | null>(null);
  const agentList = agents.data?.agents ?? [];
  const labels = agentLabels(agentList);
  const set = (patch: Partial<ScheduleForm>) => setForm({ ...form, ...patch });
  const done = (message: string) => {
    setNotice(message);
    setForm(EMPTY_SCHEDULE_FORM);
    setEditing(null);
    list.reload();
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setNotice(null);
    if (editing !== null) {
      const id = editing.id;
      if (await action.run(() => updateSchedule(id, scanBody(form)))) done(`Saved ${form.name.trim()}`);
      return;
    }
    let target: Pick<PortalScheduleCreateBody, 'agent_id' | 'group_name' | 'client_id'>;
    if (form.target === 'agent') {
      const agent = agentList.find((a) => agentKey(a) === form.agent);
      if (!agent) return void action.run(() => Promise.reject(new Error('Choose an agent')));
      target = { agent_id: agent.agent_id, ...(agent.client_id === null ? {} : { client_id: agent.client_id }) };
    } else {
      target = {
        group_name: form.group.trim(),
        ...(form.client.trim() === '' ? {} : { client_id: form.client.trim() }),
      };
    }
    if (await action.run(() => createSchedule({ ...target, ...scanBody(form) }))) done(`Created ${form.name.trim()}`);
  };

  const toggle = async (s: PortalSchedule) => {
    setNotice(null);
    if (await action.run(() => updateSchedule(s.id, { enabled: !s.enabled }))) {
      setNotice(`${s.enabled ? 'Disabled' : 'Enabled'} ${s.name}`);
      list.reload();
    }
  };

  const remove = async (s: PortalSchedule) => {
    await deleteSchedule(s.id);
    setNotice(`Deleted ${s.name}`);
    list.reload();
  };

  const rows = list.data?.schedules ?? [];
  return (
    <div class="adm-page">
      <h1>Schedules</h1>
      <p>Scan schedules kept by the portal run on the agent or the group they name, in their own time zone.</p>
      <ErrorMessage error={list.error ?? agents.error ?? action.error} />
      {notice && <Notice>{notice}</Notice>}
      <form class="adm-form" onSubmit={submit} aria-label={editing ? `Edit schedule ${editing.name}` : 'New schedule'}>
        <h2>{editing ? `Edit ${editing.name}` : 'New schedule'}</h2>
        {editing ? (
          <p>Runs on {targetLabel(editing)}.</p>
        ) : (
          <>
            <div class="adm-field">
              <label for="sched-target">Runs on</label>
              <select
                id="sched-target"
                value={form.target}
                onChange={(e) => set({ target: e.currentTarget.value as ScheduleForm['target'] })}
              >
                <option value="agent">One agent</option>
                <option value="group">A group</option>
              </select>
            </div>
            {form.target === 'agent' ? (
              <div class="adm-field">
                <label for="sched-agent">Agent</label>
                <select id="sched-agent" value={form.agent} onChange={(e) => set({ agent: e.currentTarget.value })}>
                  <option value="">Choose an agent</option>
                  {agentList.map((a) => (
                    <option key={agentKey(a)} value={agentKey(a)}>
                      {labels.get(agentKey(a))}
                    </option>
                  ))}
                </select>
              </div>
            ) : (
              <>
                <Field id="sched-group" label="Group name" value={form.group} onInput={(v) => set({ group: v })} />
                <Field
                  id="sched-client"
                  label="Client (when the group name is used by several, or has no members yet)"
                  value={form.client}
                  optional
                  onInput={(v) => set({ client: v })}
                />
              </>
            )}
          </>
        )}
        <Field id="sched-name" label="Name" value={form.name} onInput={(v) => set({ name: v })} />
        <Field id="sched-targets" label="Targets" value={form.targets} onInput={(v) => set({ targets: v })} />
        <Field id="sched-ports" label="Ports" value={form.ports} optional onInput={(v) => set({ ports: v })} />
        <Field id="sched-profile" label="Profile" value={form.profile} optional onInput={(v) => set({ profile: v })} />
        <Field
          id="sched-cron"
          label="Cron (5 fields, or 6 with seconds)"
          value={form.cron}
          onInput={(v) => set({ cron: v })}
        />
        <Field id="sched-tz" label="Time zone" value={form.timezone} onInput={(v) => set({ timezone: v })} />
        <label>
          <input type="checkbox" checked={form.upload} onChange={(e) => set({ upload: e.currentTarget.checked })} />{' '}
          Upload sessions
        </label>
        <label>
          <input type="checkbox" checked={form.enabled} onChange={(e) => set({ enabled: e.currentTarget.checked })} />{' '}
          Enabled
        </label>
        <button type="submit" disabled={action.busy}>
          {editing ? 'Save schedule' : 'Create schedule'}
        </button>
        {editing && (
          <button
            type="button"
            onClick={() => {
              setEditing(null);
              setForm(EMPTY_SCHEDULE_FORM);
            }}
          >
            Cancel
          </button>
        )}
      </form>
      <h2>Schedules</h2>
      {list.data && rows.length === 0 && <p>No schedules yet.</p>}
      {rows.length > 0 && (
        <DataTable
          label="Portal schedules"
          columns={['Name', 'Runs on', 'Client', 'When', 'Scan', 'State', 'Actions']}
          stack={{ lead: ['Name', 'State'] }}
        >
          {rows.map((s) => (
            <tr key={s.id} data-schedule={s.id}>
              <th scope="row">{s.name}</th>
              <td>{targetLabel(s)}</td>
              <td>{s.client_id ?? NO_VALUE}</td>
              <td>
                <code>{s.cron}</code> {s.timezone}
              </td>
              <td>
                {s.targets}
                {s.ports === null ? '' : ` ports ${s.ports}`}
                {s.profile === null ? '' : ` (${s.profile})`}
                {s.upload ? ', uploaded' : ''}
              </td>
              <td>{s.enabled ? 'enabled' : 'disabled'}</td>
              <td>
                <button
                  type="button"
                  onClick={() => {
                    setEditing(s);
                    setForm(formOf(s));
                    setNotice(null);
                  }}
                >
                  Edit
                </button>{' '}
                <button type="button" disabled={action.busy} onClick={() => toggle(s)}>
                  {s.enabled ? 'Disable' : 'Enable'}
                </button>{' '}
                <ConfirmButton
                  label="Delete"
                  question={`Delete schedule ${s.name}? Its agents drop it with their next heartbeat.`}
                  disabled={action.busy}
                  onConfirm={() => remove(s)}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </div>
  );
}

function Field(props: { id: string; label: string; value: string; optional?: boolean; onInput: (v: string) => void }) {
  return (
    <div class="adm-field">
      <label for={props.id}>
        {props.label}
        {props.optional === true ? ' (optional)' : ''}
      </label>
      <input
        id={props.id}
        value={props.value}
        required={props.optional !== true}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    </div>
  );
}
