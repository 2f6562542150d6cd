import { SESSION_STATUSES, type SessionStatus, type SessionView } from '@svc/protocol';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { listSessions } from '../api/sessions.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { formatDate, formatScore, label } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { sessionHref } from './links.ts';
import { useLoad } from '../ui/use-load.ts';
import { CursorPager } from '../ui/pager.tsx';
import { DataTable } from '../ui/table-wrap.tsx';

const PAGE_SIZES = [5, 10, 25, 50, 100] as const;
const DEFAULT_PAGE_SIZE = 25;
/** API pages read at most for one page of a date-filtered list. */
const MAX_FETCHES = 20;
const FILTERS = ['client_id', 'status', 'target', 'from', 'to', 'per_page'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

interface ListPage {
  sessions: SessionView[];
  next: string | null;
}

/**
 * One page of the list. Client, status and target are the API's own filters; the upload date
 * range is applied here to the API's pages (newest first, so reading stops at the first
 * session older than `from`), reading on until a page is full.
 */
function pageSizeOf(f: Filters): number {
  const n = Number(f.per_page);
  return (PAGE_SIZES as readonly number[]).includes(n) ? n : DEFAULT_PAGE_SIZE;
}

async function loadPage(f: Filters, cursor: string | undefined): Promise<ListPage> {
  const size = pageSizeOf(f);
  const from = f.from ? `${f.from}T00:00:00.000Z` : null;
  const to = f.to ? `${f.to}T23:59:59.999Z` : null;
  const sessions: SessionView[] = [];
  let next: string | null = cursor ?? null;
  for (let i = 0; i < MAX_FETCHES; i++) {
    const page = await listSessions({
      limit: from === null && to === null ? size : 100,
      client_id: f.client_id,
      status: f.status as SessionStatus | undefined,
      target: f.target,
      cursor: next ?? undefined,
    });
    next = page.next_cursor;
    for (const s of page.sessions) {
      if (from !== null && s.uploaded_at < from) return { sessions, next: null };
      if (to === null || s.uploaded_at <= to) sessions.push(s);
    }
    if (next === null || sessions.length >= size || (from === null && to === null)) break;
  }
  return { sessions, next };
}

function FilterForm(props: { filters: Filters; onApply: (f: Filters) => void }) {
  const [f, setF] = useState<Filters>(props.filters);
  const field = (name: keyof Filters) => ({
    name,
    value: f[name] ?? '',
    onInput: (e: Event) => setF({ ...f, [name]: (e.currentTarget as HTMLInputElement).value }),
  });
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
        Client id
        <input type="text" {...field('client_id')} />
      </label>
      <label>
        Status
        <select {...field('status')} onChange={field('status').onInput}>
          <option value="">any</option>
          {SESSION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {label(s)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Target
        <input type="text" {...field('target')} />
      </label>
      <label>
        Uploaded from
        <input type="date" {...field('from')} />
      </label>
      <label>
        Uploaded to
        <input type="date" {...field('to')} />
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

/** Sessions the signed-in user may see, newest first; filters and position live in the address. */
export function SessionsPage() {
  const { query, route } = useLocation();
  const filters: Filters = Object.fromEntries(FILTERS.filter((k) => query[k]).map((k) => [k, query[k]]));
  const cursor = query['cursor'] || undefined;
  // Cursors of the pages before this one, for "Previous" (the API's cursor only goes forward).
  const [trail, setTrail] = useState<string[]>([]);
  const deps = [...FILTERS.map((k) => query[k]), cursor];
  const page = useLoad(() => loadPage(filters, cursor), deps);

  function go(f: Filters, nextCursor?: string) {
    const q = new URLSearchParams(Object.entries(f).filter(([, v]) => v !== undefined && v !== ''));
    if (nextCursor !== undefined) q.set('cursor', nextCursor);
    const qs = q.toString();
    route(`/console/sessions${qs === '' ? '' : `?${qs}`}`);
  }

  return (
    <Page title="Sessions">
      {query['deleted'] ? (
        <p class="alert alert-ok" role="status">
          Session {query['deleted']} was deleted.
        </p>
      ) : null}
      <FilterForm
        filters={filters}
        onApply={(f) => {
          setTrail([]);
          go(f);
        }}
      />
      {page.state === 'failed' ? <ErrorMessage error={page.error} /> : null}
      {page.state === 'loading' ? <p aria-busy="true">Loading…</p> : null}
      {page.state === 'done' && page.value.sessions.length === 0 ? <p>No sessions match.</p> : null}
      {page.state === 'done' && page.value.sessions.length > 0 ? (
        <DataTable label="Sessions" columns={['Session', 'Client', 'Target', 'Risk', 'Findings', 'Status', 'Uploaded']}>
          {page.value.sessions.map((s) => (
            <tr key={`${s.client_id}/${s.session_id}`}>
              <td>
                <a href={sessionHref(s.session_id, s.client_id)}>{s.session_id}</a>
              </td>
              <td>
                {s.client ?? '–'}
                {s.client_id !== null && s.client_id !== s.client ? <div class="muted small">{s.client_id}</div> : null}
              </td>
              <td>{s.target ?? '–'}</td>
              <td class="nowrap">
                <span class={`grade grade-small grade-${s.risk_grade ?? 'none'}`}>{s.risk_grade ?? '–'}</span>{' '}
                {formatScore(s.risk_score)}
              </td>
              <td>{s.total_findings}</td>
              <td>
                <span class={`badge status-${s.status}`}>{label(s.status)}</span>
              </td>
              <td class="nowrap">{formatDate(s.uploaded_at)}</td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      <CursorPager
        label="Pages"
        hasPrevious={cursor !== undefined}
        hasNext={page.state === 'done' && page.value.next !== null}
        onPrevious={() => {
          const prev = trail.at(-1);
          setTrail(trail.slice(0, -1));
          go(filters, prev === '' ? undefined : prev);
        }}
        onNext={() => {
          if (page.state !== 'done' || page.value.next === null) return;
          setTrail([...trail, cursor ?? '']);
          go(filters, page.value.next);
        }}
      >
        <label class="inline">
          Rows per page
          <select
            value={String(pageSizeOf(filters))}
            onChange={(e) => {
              setTrail([]);
              go({ ...filters, per_page: e.currentTarget.value });
            }}
          >
            {PAGE_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </CursorPager>
    </Page>
  );
}
