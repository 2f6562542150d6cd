import { AUDIT_EVENT_TYPES, sessionHref } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { countOf, formatCount, formatDate, NO_VALUE } from '../ui/format.ts';
import { listAuditEvents } from '../api/audit.ts';
import { type AuditFilters, auditQuery } from './forms.ts';
import { useData } from '../ui/use-load.ts';
import { usePages } from '../ui/pager.tsx';
import { ErrorMessage, LoadError } from '../ui/alert.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { AnySelect } from '../ui/any-select.tsx';
import { Page } from '../ui/page.tsx';

/** The most recent events fetched per filter; the page says when more matched. */
const AUDIT_LIMIT = 1000;
const START: AuditFilters = { days: '30', type: '', session: '' };

/** Audit log: filters by window, event type and session; newest first, a page at a time. */
export function AuditPage() {
  const [form, setForm] = useState<AuditFilters>(START);
  const [applied, setApplied] = useState<AuditFilters>(START);
  const [formError, setFormError] = useState<string | null>(null);
  const log = useData(() => {
    const q = auditQuery(applied, AUDIT_LIMIT);
    return q.ok ? listAuditEvents(q.body) : Promise.reject(new Error(q.message));
  }, [applied]);
  const events = log.data?.events ?? [];
  const { page, first: firstPage, controls: pager } = usePages(events, 'Audit events');

  const apply = (event: Event) => {
    event.preventDefault();
    const q = auditQuery(form, AUDIT_LIMIT);
    setFormError(q.ok ? null : q.message);
    if (!q.ok) return;
    setApplied({ ...form });
    firstPage();
  };

  return (
    <Page title="Audit log">
      <div class="adm-page">
        <form class="adm-form" onSubmit={apply} aria-label="Audit filters" noValidate>
          <label>
            Days (1-90)
            <input
              type="number"
              min={1}
              max={90}
              value={form.days}
              onInput={(e) => setForm({ ...form, days: e.currentTarget.value })}
            />
          </label>
          <AnySelect
            label="Event type"
            value={form.type}
            options={AUDIT_EVENT_TYPES}
            onChange={(type) => setForm({ ...form, type })}
          />
          <label>
            Session id
            <input value={form.session} onInput={(e) => setForm({ ...form, session: e.currentTarget.value })} />
          </label>
          <button type="submit">Apply filters</button>
        </form>
        <ErrorMessage error={formError} />
        <LoadError load={log} />
        {log.data && (
          <p role="status">
            {countOf(log.data.total, 'event', 'events')} in the last {log.data.days} days
            {log.data.total > events.length ? `; the newest ${formatCount(events.length)} are listed` : ''}.
          </p>
        )}
        {page.items.length > 0 && (
          <DataTable
            label="Audit events"
            columns={['Time', 'Event', 'Actor', 'Client', 'Session', 'Data']}
            stack={{ lead: ['Event'] }}
          >
            {page.items.map((e) => (
              <tr key={e.id} data-event={e.event_type}>
                <td>{formatDate(e.created_at)}</td>
                <th scope="row">{e.event_type}</th>
                <td>{e.actor}</td>
                <td>{e.client_id ?? NO_VALUE}</td>
                <td>{e.session_id ? <a href={sessionHref(e.session_id, e.client_id)}>{e.session_id}</a> : NO_VALUE}</td>
                <td>
                  <code class="adm-break">{JSON.stringify(e.data)}</code>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        {pager}
      </div>
    </Page>
  );
}
