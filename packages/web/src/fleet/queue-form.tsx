import {
  type AgentView,
  COMMAND_TYPES,
  type QueueCommandResponse,
  type TargetsResponse,
  type TargetView,
} from '@svc/protocol';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { useAction } from '../ui/use-action.ts';
import { queueCommand } from '../api/agent-commands.ts';
import { listGroups } from '../api/agent-groups.ts';
import { listTargets } from '../api/targets.ts';
import { ErrorMessage, Notice } from '../ui/alert.tsx';
import { formatDate } from '../ui/format.ts';
import { useData } from '../ui/use-load.ts';
import { AgentPicker } from './agent-picker.tsx';
import {
  COMMAND_FIELDS,
  type CommandField,
  configValueChoices,
  configValueHint,
  draftQueueBody,
  type FormValues,
  isCommandType,
  matchingTargets,
  recentTargets,
  usualPortsOf,
  usualProfileOf,
} from './command-form.ts';

/**
 * The command queue form (Commands page): an agent (found by host name, address or id:
 * AgentPicker) or a group, the command type and its
 * payload fields, checked with the protocol's rules before sending. For run_scan, targets the
 * portal knows (GET /api/targets of the agent's or group's client) offer their usual ports and
 * profile: what their latest scan covered, one click to fill them.
 */

export function QueueForm({ onQueued }: { onQueued: () => void }) {
  const groups = useData(listGroups, []);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [formError, setFormError] = useState<string | null>(null);
  const [targetKind, setTargetKind] = useState<'agent' | 'group'>('agent');
  const [agent, setAgent] = useState<AgentView | null>(null);
  const [groupKey, setGroupKey] = useState('');
  const [allClients, setAllClients] = useState(false);
  const [type, setType] = useState<string>('run_scan');
  const [values, setValues] = useState<FormValues>({});
  const [priority, setPriority] = useState('5');

  // The targets run_scan may be offered: those of the chosen agent's or group's client, else every one the caller sees.
  const chosenClient =
    targetKind === 'agent'
      ? (agent?.client_id ?? null)
      : allClients || groupKey === ''
        ? null
        : (JSON.parse(groupKey) as [string | null, string])[0];
  const scanning = type === 'run_scan';
  const known = useData(
    () => (scanning ? listTargets(chosenClient) : Promise.resolve<TargetsResponse>({ targets: [] })),
    [scanning, chosenClient],
  );
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
      answer = await queueCommand(body);
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
      <ErrorMessage error={groups.error} />
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
          <AgentPicker chosen={agent} onChoose={setAgent} />
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
          <Fragment key={`${type}-${f.key}`}>
            <PayloadField field={f} values={values} onChange={(v) => setValues({ ...values, [f.key]: v })} />
            {scanning && f.key === 'targets' ? (
              <PortsOffer
                {...offered(values['targets'] ?? '', chosenClient, known.data?.targets ?? [])}
                onUse={(fill) => setValues({ ...values, ...fill })}
              />
            ) : null}
          </Fragment>
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

/** At most this many known targets are offered at once. */
const OFFERS = 3;

/**
 * What run_scan offers: the known targets the typed targets name, or, before any is typed, the
 * chosen client's most recently scanned targets, whose offer fills the target too.
 */
function offered(typed: string, chosenClient: string | null, known: readonly TargetView[]) {
  if (typed.trim() !== '') return { matches: matchingTargets(typed, known), withTarget: false };
  return { matches: chosenClient === null ? [] : recentTargets(known), withTarget: true };
}

/** The usual ports and profile of the known targets the typed targets name, one click to fill them. */
function PortsOffer(props: { matches: TargetView[]; withTarget: boolean; onUse: (fill: FormValues) => void }) {
  const offers = props.matches.slice(0, OFFERS);
  return (
    <div aria-live="polite">
      {offers.map((t) => {
        const ports = usualPortsOf(t.coverage);
        const profile = usualProfileOf(t.coverage);
        const fill: FormValues = {
          ...(props.withTarget ? { targets: t.target } : {}),
          ...(ports === null ? {} : { ports }),
          ...(profile === null ? {} : { profile }),
        };
        const useLabel = !props.withTarget
          ? `Use the usual ports and profile of ${t.target}`
          : ports === null && profile === null
            ? `Scan ${t.target}`
            : `Scan ${t.target} with its usual ports and profile`;
        return (
          <div class="ports-offer" key={`${t.client_id ?? ''}/${t.target}`} data-target={t.target}>
            <p>
              Known target <strong>{t.target}</strong>
              {t.client_id ? ` (${t.client_id})` : ''}, last scanned {formatDate(t.last_scanned_at)}:{' '}
              {ports === null && profile === null ? (
                'its latest scan states no ports or profile to reuse.'
              ) : (
                <>
                  usual ports <code>{ports ?? 'not stated'}</code>, profile <code>{profile ?? 'not stated'}</code>.
                </>
              )}
            </p>
            {Object.keys(fill).length === 0 ? null : (
              <button type="button" onClick={() => props.onUse(fill)}>
                {useLabel}
              </button>
            )}
          </div>
        );
      })}
    </div>
  );
}
