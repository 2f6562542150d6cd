import { SESSION_SORTS, SESSION_STATUSES, type SessionClientsResponse, type SessionSort } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { label } from '../ui/format.ts';
import { FIRST_ORDER, SORT_CHOICES } from './list-sort.ts';

/** The sessions list's filter form and the filters it keeps in the address (list-page.tsx). */

export const FILTERS = ['q', 'client_id', 'status', 'target', 'from', 'to', 'sort', 'order', 'per_page'] as const;
export type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
/** The client picker's value for sessions uploaded without a client (no client id can be `-`). */
export const NO_CLIENT_CHOICE = '-';

export const sortOf = (f: Filters): SessionSort =>
  (SESSION_SORTS as readonly string[]).includes(f.sort ?? '') ? (f.sort as SessionSort) : 'uploaded_at';
export const orderOf = (f: Filters): 'asc' | 'desc' =>
  f.order === 'asc' || f.order === 'desc' ? f.order : FIRST_ORDER[sortOf(f)];

export function FilterForm(props: {
  filters: Filters;
  clients: SessionClientsResponse['clients'] | null;
  onApply: (f: Filters) => void;
}) {
  const [f, setF] = useState<Filters>(props.filters);
  const field = (name: keyof Filters) => ({
    name,
    value: f[name] ?? '',
    onInput: (e: Event) => setF({ ...f, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
  const select = (name: keyof Filters) => ({ ...field(name), onChange: field(name).onInput });
  return (
    <form
      class="filters"
      aria-label="Filter sessions"
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply(f);
      }}
    >
      <label>
        Search target or client
        <input type="search" {...field('q')} />
      </label>
      <label>
        Client
        <select {...select('client_id')}>
          <option value="">any client</option>
          {(props.clients ?? []).map((c) => (
            <option key={c.client_id ?? NO_CLIENT_CHOICE} value={c.client_id ?? NO_CLIENT_CHOICE}>
              {c.client_id === null
                ? 'no client'
                : c.client && c.client !== c.client_id
                  ? `${c.client} (${c.client_id})`
                  : c.client_id}
            </option>
          ))}
        </select>
      </label>
      <label>
        Status
        <select {...select('status')}>
          <option value="">any</option>
          {SESSION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {label(s)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Uploaded from
        <input type="date" {...field('from')} />
      </label>
      <label>
        Uploaded to
        <input type="date" {...field('to')} />
      </label>
      <label>
        Sort by
        <select
          name="sort"
          value={`${sortOf(f)}:${orderOf(f)}`}
          onChange={(e) => {
            const choice = SORT_CHOICES.find((c) => c.value === e.currentTarget.value);
            // The list's own order (newest upload first) keeps the address without sort and order.
            const usual = choice === undefined || (choice.sort === 'uploaded_at' && choice.order === 'desc');
            const { sort: _sort, order: _order, ...rest } = f;
            setF(usual ? rest : { ...f, sort: choice.sort, order: choice.order });
          }}
        >
          {SORT_CHOICES.map((c) => (
            <option key={c.value} value={c.value}>
              {c.label}
            </option>
          ))}
        </select>
      </label>
      <div class="filter-actions">
        <button type="submit">Filter</button>
        <button
          type="button"
          class="button-quiet"
          onClick={() => {
            const kept: Filters = f.per_page ? { per_page: f.per_page } : {};
            setF(kept);
            props.onApply(kept);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
