import { PERSON_STATUSES, SCANNER_STATUSES, type SessionClientsResponse, SEVERITIES } from '@svc/protocol';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { label } from '../ui/format.ts';
import type { FilterKey, PortfolioView } from './portfolio-model.ts';

/** The filters of the portfolio view (portfolio-page.tsx): applied together on "Apply filters". */

type Draft = PortfolioView['filter'];

/** What the scan saw, for each of the scanner's own statuses. */
export const SCANNER_STATUS_NAMES: Record<(typeof SCANNER_STATUSES)[number], string> = {
  new: 'first seen',
  persistent: 'seen again',
  resolved: 'no longer found',
};

/**
 * A select over `options`; a value the address holds that is not among them (a comma list a
 * link wrote) is kept as its own option, so applying the form never drops it unseen.
 */
function Choice(props: {
  name: FilterKey;
  title: string;
  draft: Draft;
  set: (d: Draft) => void;
  known: readonly string[];
  children: ComponentChildren;
}) {
  const value = props.draft[props.name] ?? '';
  const id = `portfolio-${props.name}`;
  return (
    <div class="findings-choice">
      <label for={id}>{props.title}</label>
      <select
        id={id}
        value={value}
        onChange={(e) => props.set({ ...props.draft, [props.name]: e.currentTarget.value })}
      >
        <option value="">All</option>
        {props.children}
        {value !== '' && !props.known.includes(value) ? <option value={value}>{label(value)}</option> : null}
      </select>
    </div>
  );
}

const options = (values: readonly string[], name: (v: string) => string = label) =>
  values.map((v) => (
    <option key={v} value={v}>
      {name(v)}
    </option>
  ));

export function PortfolioFilters(props: {
  view: PortfolioView;
  clients: SessionClientsResponse['clients'] | null;
  onApply: (filter: Draft) => void;
}) {
  const [draft, setDraft] = useState<Draft>(props.view.filter);
  const text = (name: FilterKey, title: string, attrs: Record<string, unknown> = {}) => (
    <label>
      {title}
      <input
        name={name}
        {...attrs}
        value={draft[name] ?? ''}
        onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })}
      />
    </label>
  );
  const clients = (props.clients ?? []).filter((c) => c.client_id !== null && c.client_id !== '');
  const common = { draft, set: setDraft };
  const severities = (draft.severity ?? '').split(',').filter((s) => s !== '');
  const toggleSeverity = (s: string, on: boolean) => {
    const next = SEVERITIES.filter((v) => (v === s ? on : severities.includes(v)));
    setDraft({ ...draft, severity: next.join(',') });
  };
  return (
    <form
      class="findings-filters portfolio-filters"
      aria-label="Filter findings"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(draft);
      }}
    >
      <Choice name="client_id" title="Client" known={clients.map((c) => c.client_id ?? '')} {...common}>
        {clients.map((c) => (
          <option key={c.client_id} value={c.client_id ?? ''}>
            {c.client && c.client !== c.client_id ? `${c.client} (${c.client_id})` : c.client_id}
          </option>
        ))}
      </Choice>
      {text('target', 'Target', { placeholder: 'Exact target' })}
      {text('host', 'Host', { placeholder: 'Address or name' })}
      <fieldset class="portfolio-severities">
        <legend>Severity</legend>
        {SEVERITIES.map((s) => (
          <label key={s} class="inline">
            <input
              type="checkbox"
              checked={severities.includes(s)}
              onChange={(e) => toggleSeverity(s, e.currentTarget.checked)}
            />
            {s}
          </label>
        ))}
      </fieldset>
      <Choice name="status" title="Status" known={['open', ...PERSON_STATUSES, ...SCANNER_STATUSES]} {...common}>
        <option value="open">open (all but resolved)</option>
        <optgroup label="Set by people">{options(PERSON_STATUSES)}</optgroup>
        <optgroup label="Set by the scanner">
          {options(SCANNER_STATUSES, (s) => `${s} (${SCANNER_STATUS_NAMES[s as 'new']})`)}
        </optgroup>
      </Choice>
      <Choice name="kev" title="Known exploited (KEV)" known={['true', 'false']} {...common}>
        <option value="true">in CISA KEV</option>
        <option value="false">not in KEV</option>
      </Choice>
      {text('epss_min', 'EPSS at least', { inputMode: 'decimal', placeholder: '0.1 = 10 %', maxLength: 6 })}
      <Choice name="exception" title="Risk exception" known={['accepted', 'expired', 'none']} {...common}>
        {options(['accepted', 'expired', 'none'])}
      </Choice>
      <Choice name="disposition" title="False positive" known={['false_positive', 'none']} {...common}>
        <option value="false_positive">marked false positive</option>
        <option value="none">not marked</option>
      </Choice>
      <Choice name="overdue" title="Overdue" known={['true', 'false']} {...common}>
        <option value="true">overdue</option>
        <option value="false">not overdue</option>
      </Choice>
      {text('due_before', 'Due by', { type: 'date' })}
      {text('first_seen_from', 'First seen from', { type: 'date' })}
      {text('first_seen_to', 'First seen to', { type: 'date' })}
      <div class="findings-filter-actions">
        <button type="submit">Apply filters</button>{' '}
        <button
          type="button"
          class="button-quiet"
          onClick={() => {
            setDraft({});
            props.onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
