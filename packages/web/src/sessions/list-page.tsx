import { type SessionSort, type SessionStatus, type SessionView, sessionHref } from '@svc/protocol';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { listSessionClients, listSessions, type SessionList, updateStatus } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { formatCount, formatDate, formatScore, label, NO_VALUE } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { CursorPager, RowsPerPage } from '../ui/pager.tsx';
import { type Column, DataTable } from '../ui/table-wrap.tsx';
import { useLoad, useLoadKeeping } from '../ui/use-load.ts';
import { FILTERS, FilterForm, type Filters, NO_CLIENT_CHOICE, orderOf, sortOf } from './list-filters.tsx';
import { FIRST_ORDER, SORT_LABELS } from './list-sort.ts';
import { StatusSelect } from './status.tsx';

const PAGE_SIZES = [5, 10, 25, 50, 100] as const;
const DEFAULT_PAGE_SIZE = 25;

function pageSizeOf(f: Filters): number {
  const n = Number(f.per_page);
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : DEFAULT_PAGE_SIZE;
}

/** One page from the portal: every filter, the order and the upload range are the portal's own. */
function loadPage(f: Filters, cursor: string | undefined): Promise<SessionList> {
  return listSessions({
    limit: pageSizeOf(f),
    q: f.q,
    client_id: f.client_id === NO_CLIENT_CHOICE ? '' : f.client_id,
    status: f.status as SessionStatus | undefined,
    target: f.target,
    uploaded_from: f.from ? `${f.from}T00:00:00.000Z` : undefined,
    uploaded_to: f.to ? `${f.to}T23:59:59.999Z` : undefined,
    ...(f.sort || f.order ? { sort: sortOf(f), order: orderOf(f) } : {}),
    cursor,
  });
}

const keyOf = (s: SessionView) => `${s.client_id ?? ''}/${s.session_id}`;

/**
 * The status of the selected sessions: one PATCH per session, one after another, so each
 * change keeps its own status history, audit event and webhook exactly as a single change does.
 */
function BulkStatus(props: { selected: SessionView[]; onDone: (message: string, failed: string[]) => void }) {
  const [status, setStatus] = useState<SessionStatus>('in_review');
  const [progress, setProgress] = useState<string | null>(null);
  const n = props.selected.length;
  return (
    <form
      class="bulk-bar"
      aria-label="Change the status of the selected sessions"
      onSubmit={async (e) => {
        e.preventDefault();
        const failed: string[] = [];
        let done = 0;
        for (const s of props.selected) {
          setProgress(`Changing ${done + 1} of ${n}…`);
          try {
            await updateStatus({ session: s.session_id, clientId: s.client_id ?? '' }, status, undefined);
            done++;
          } catch (err) {
            failed.push(`${s.session_id}: ${describeError(err)}`);
          }
        }
        setProgress(null);
        props.onDone(`${done} of ${n} sessions set to ${label(status)}.`, failed);
      }}
    >
      <span>{n === 1 ? '1 session selected' : `${n} sessions selected`}</span>
      <StatusSelect label="New status" class="inline" value={status} onChange={setStatus} />
      <button type="submit" disabled={n === 0 || progress !== null}>
        Change status
      </button>
      {progress !== null ? (
        <span role="status" aria-live="polite">
          {progress}
        </span>
      ) : null}
    </form>
  );
}

/** Sessions the signed-in user may see; filters, order and position live in the address. */
export function SessionsPage() {
  const { query, route } = useLocation();
  const filters: Filters = Object.fromEntries(FILTERS.filter((k) => query[k]).map((k) => [k, query[k]]));
  const cursor = query['cursor'] || undefined;
  // Cursors of the pages before this one, for "Previous" (the API's cursor only goes forward).
  const [trail, setTrail] = useState<string[]>([]);
  const [tick, setTick] = useState(0);
  const [selected, setSelected] = useState<Map<string, SessionView>>(new Map());
  const [outcome, setOutcome] = useState<{ message: string; failed: string[] } | null>(null);
  const deps = [...FILTERS.map((k) => query[k]), cursor, tick];
  // The last page stays on screen, marked busy, while the next one loads.
  const page = useLoadKeeping(() => loadPage(filters, cursor), deps);
  const clients = useLoad(() => listSessionClients(), []);
  const shown = page.last;
  const busy = page.busy;

  // The page number only labels the position ("Sessions 26–50 of 201"); the cursor finds the rows.
  const pageNo = Math.max(1, Math.floor(Number(query['page'])) || 1);
  function go(f: Filters, nextCursor?: string, nextPage = 1) {
    const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== undefined && v !== ''));
    if (nextCursor !== undefined) q.set('cursor', nextCursor);
    if (nextCursor !== undefined && nextPage > 1) q.set('page', String(nextPage));
    const qs = q.toString();
    setSelected(new Map());
    setOutcome(null);
    route(`/console/sessions${qs === '' ? '' : `?${qs}`}`);
  }

  const sort = sortOf(filters);
  const order = orderOf(filters);
  const sortable = (s: SessionSort): Column => ({
    label: SORT_LABELS[s],
    sort: {
      direction: sort !== s ? 'none' : order === 'asc' ? 'ascending' : 'descending',
      onSort: () => {
        setTrail([]);
        go({ ...filters, sort: s, order: sort === s ? (order === 'asc' ? 'desc' : 'asc') : FIRST_ORDER[s] });
      },
    },
  });
  const rows = shown?.sessions ?? [];
  const allSelected = rows.length > 0 && rows.every((s) => selected.has(keyOf(s)));
  const size = pageSizeOf(filters);
  const from = (pageNo - 1) * size + 1;

  return (
    <Page title="Sessions">
      {query['deleted'] ? (
        <p class="alert alert-ok" role="status">
          Session {query['deleted']} was deleted.
        </p>
      ) : null}
      <FilterForm
        key={FILTERS.map((k) => query[k] ?? '').join('\u0000')}
        filters={filters}
        clients={clients.state === 'done' ? clients.value.clients : null}
        onApply={(f) => {
          setTrail([]);
          go(f);
        }}
      />
      {page.error !== null ? <ErrorMessage error={page.error} onRetry={() => setTick((t) => t + 1)} /> : null}
      <p class="list-status" role="status" aria-live="polite">
        {busy ? (
          <span class="busy-sign">Loading…</span>
        ) : shown === null ? null : shown.total === 0 ? (
          'No sessions match.'
        ) : (
          `Sessions ${formatCount(from)}–${formatCount(from + rows.length - 1)} of ${formatCount(shown.total)}`
        )}
      </p>
      {outcome !== null ? (
        <div class={`alert ${outcome.failed.length ? 'alert-error' : 'alert-ok'}`} role="status">
          <p>{outcome.message}</p>
          {outcome.failed.length ? (
            <ul>
              {outcome.failed.map((f) => (
                <li key={f}>{f}</li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      {rows.length > 0 ? (
        <>
          <div class="bulk-tools">
            <label class="inline">
              <input
                type="checkbox"
                checked={allSelected}
                onChange={() => setSelected(allSelected ? new Map() : new Map(rows.map((s) => [keyOf(s), s] as const)))}
              />
              Select all on this page
            </label>
            {selected.size > 0 ? (
              <BulkStatus
                selected={[...selected.values()]}
                onDone={(message, failed) => {
                  setOutcome({ message, failed });
                  setSelected(new Map());
                  setTick((t) => t + 1);
                }}
              />
            ) : null}
          </div>
          <DataTable
            label="Sessions"
            busy={busy}
            stack={{ lead: ['Risk', 'Status'] }}
            columns={[
              { label: 'Select', hidden: true },
              'Session',
              sortable('client'),
              sortable('target'),
              sortable('risk_score'),
              'Findings',
              sortable('status'),
              sortable('scanned_at'),
              sortable('uploaded_at'),
            ]}
          >
            {rows.map((s) => {
              const k = keyOf(s);
              return (
                <tr key={k} data-session={s.session_id}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select session ${s.session_id}`}
                      checked={selected.has(k)}
                      onChange={() => {
                        const next = new Map(selected);
                        if (next.has(k)) next.delete(k);
                        else next.set(k, s);
                        setSelected(next);
                      }}
                    />
                  </td>
                  <td>
                    <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
                  </td>
                  <td>
                    {/* The client's name, its id beneath when it differs; the id alone when the file named none. */}
                    {s.client ?? s.client_id ?? <span class="muted">no client</span>}
                    {s.client !== null && s.client_id !== null && s.client_id !== s.client ? (
                      <div class="muted small">{s.client_id}</div>
                    ) : null}
                  </td>
                  <td>{s.target ?? NO_VALUE}</td>
                  <td class="nowrap">
                    <span class={`grade grade-small grade-${s.risk_grade ?? 'none'}`}>{s.risk_grade ?? NO_VALUE}</span>{' '}
                    {formatScore(s.risk_score)}
                  </td>
                  <td>{formatCount(s.total_findings)}</td>
                  <td>
                    <span class={`badge status-${s.status}`}>{label(s.status)}</span>
                  </td>
                  <td class="nowrap">{formatDate(s.scanned_at)}</td>
                  <td class="nowrap">{formatDate(s.uploaded_at)}</td>
                </tr>
              );
            })}
          </DataTable>
        </>
      ) : null}
      <CursorPager
        label="Pages"
        position={`Page ${formatCount(pageNo)}`}
        hasPrevious={cursor !== undefined}
        hasNext={shown !== null && shown.next_cursor !== null}
        onPrevious={() => {
          const prev = trail.at(-1);
          setTrail(trail.slice(0, -1));
          go(filters, prev === '' ? undefined : prev, pageNo - 1);
        }}
        onNext={() => {
          if (shown === null || shown.next_cursor === null) return;
          setTrail([...trail, cursor ?? '']);
          go(filters, shown.next_cursor, pageNo + 1);
        }}
      >
        <RowsPerPage
          sizes={PAGE_SIZES}
          value={size}
          onChange={(n) => {
            setTrail([]);
            go({ ...filters, per_page: String(n) });
          }}
        />
      </CursorPager>
    </Page>
  );
}
