import { AGENT_STATES } from '@svc/protocol';
import type { FleetFilters } from './agent-view.ts';

/** The Fleet page's filter form: the search, the state and the exact filters. */

const STATE_CHOICES: ReadonlyArray<[FleetFilters['state'], string]> = [
  ['', 'Registered (online and stale)'],
  ...AGENT_STATES.map((st): [FleetFilters['state'], string] => [st, st]),
];

export function FleetFilterForm(props: {
  form: FleetFilters;
  onChange: (f: FleetFilters) => void;
  onSubmit: (e: Event) => void;
}) {
  const { form, onChange } = props;
  const text = (key: 'client' | 'group' | 'version', label: string) => (
    <label>
      {label}
      <input
        value={form[key]}
        onInput={(e) => onChange({ ...form, [key]: e.currentTarget.value })}
        spellcheck={false}
      />
    </label>
  );
  return (
    <form class="adm-form fleet-filters" onSubmit={props.onSubmit} aria-label="Agent filters">
      <label>
        Search
        <input
          type="search"
          value={form.q}
          onInput={(e) => onChange({ ...form, q: e.currentTarget.value })}
          spellcheck={false}
          placeholder="Host name, address or agent id"
        />
      </label>
      <label>
        State
        <select
          value={form.state}
          onChange={(e) => onChange({ ...form, state: e.currentTarget.value as FleetFilters['state'] })}
        >
          {STATE_CHOICES.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {text('client', 'Client id')}
      {text('group', 'Group')}
      {text('version', 'Version')}
      <button type="submit">Apply filters</button>
    </form>
  );
}
