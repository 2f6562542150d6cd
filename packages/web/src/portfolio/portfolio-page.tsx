import {
  BULK_MAX_FINDINGS,
  type BulkChange,
  RECORD_SORTS,
  type RecordFinding,
  type RecordSort,
  sessionHref,
} from '@svc/protocol';
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { listSessionClients } from '../api/sessions.ts';
import { useMay } from '../auth/access.ts';
import { ErrorMessage, OutcomeMessage } from '../ui/alert.tsx';
import { epssScore } from '../sessions/findings-model.ts';
import { formatCount, formatDate, label, NO_VALUE } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { CursorPager, RowsPerPage } from '../ui/pager.tsx';
import { KevBadge, SeverityBadge } from '../ui/severity.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { useLoad, useLoadKeeping } from '../ui/use-load.ts';
import { changeChosen, changeMatching, countRecords, listRecords, summarizeRecords } from '../api/findings.ts';
import { type Outcome, PortfolioBulk } from './portfolio-bulk.tsx';
import { PortfolioFilters, SCANNER_STATUS_NAMES } from './portfolio-filters.tsx';
import {
  apiFilterOf,
  fitsOneChange,
  findingsWord,
  groupsOf,
  hrefOf,
  keyOf,
  PAGE_SIZES,
  type PortfolioView,
  SORT_LABELS,
  viewOf,
} from './portfolio-model.ts';
import './portfolio.css';

const where = (f: RecordFinding) =>
  `${f.host ?? NO_VALUE}${f.port === null ? '' : `:${f.port}${f.protocol ? `/${f.protocol}` : ''}`}`;

/** Who set a status: people's statuses say who; the scanner's say so. */
function StatusCell({ f }: { f: RecordFinding }) {
  const scanner = f.status === 'new' || f.status === 'persistent' || f.status === 'resolved';
  return (
    <>
      <span class={`badge status-${f.status}`}>{label(f.status)}</span>
      <div class="muted small">
        {scanner && f.status_source === 'scan'
          ? `by the scanner: ${SCANNER_STATUS_NAMES[f.status as 'new']}`
          : f.status_by
            ? `set by ${f.status_by}`
            : `set by ${f.status_source === 'upload' ? 'an upload' : f.status_source}`}
      </div>
    </>
  );
}

/** Exception, false positive and note: each said in words, the note in the row. */
function TriageCell({ f }: { f: RecordFinding }) {
  const parts = [];
  if (f.exception !== null)
    parts.push(
      <div key="e">
        Exception {f.exception.state}
        {f.exception.expiry ? ` until ${f.exception.expiry}` : ''}
      </div>,
    );
  if (f.disposition !== null) parts.push(<div key="d">False positive: {f.disposition.reason}</div>);
  if (f.note !== '')
    parts.push(
      <div key="n" class="portfolio-note" data-note>
        Note: {f.note}
      </div>,
    );
  return parts.length === 0 ? <span class="muted">{NO_VALUE}</span> : parts;
}

function Row(props: { f: RecordFinding; selected: boolean; onSelect?: ((on: boolean) => void) | undefined }) {
  const { f } = props;
  const name = `${f.title} on ${where(f)}`;
  return (
    <tr
      data-finding={f.fingerprint}
      data-client={f.client_id ?? ''}
      class={props.selected ? 'selected-row' : undefined}
    >
      {props.onSelect ? (
        <td>
          <input
            type="checkbox"
            aria-label={`Select ${name}`}
            checked={props.selected}
            onChange={(e) => props.onSelect?.(e.currentTarget.checked)}
          />
        </td>
      ) : null}
      <td>
        <SeverityBadge severity={f.severity ?? undefined} />
      </td>
      <td class="portfolio-title">
        <a href={sessionHref(f.last_seen, f.client_id)}>{f.title || '(untitled)'}</a>
        {f.kev ? (
          <>
            {' '}
            <KevBadge title="Listed in CISA's Known Exploited Vulnerabilities catalogue" />
          </>
        ) : null}
        {f.cve_ids.length > 0 || f.epss !== null ? (
          <div class="muted small">
            {f.cve_ids.slice(0, 3).join(', ')}
            {f.epss !== null ? `${f.cve_ids.length > 0 ? ' · ' : ''}${epssScore(f.epss)}` : ''}
          </div>
        ) : null}
      </td>
      <td>
        {f.client_id ?? NO_VALUE}
        <div class="muted small">{f.target}</div>
      </td>
      <td class="portfolio-where">{where(f)}</td>
      <td>
        <StatusCell f={f} />
      </td>
      <td class="nowrap">
        {f.due_date ?? NO_VALUE}
        {f.overdue ? (
          <div>
            <span class="badge overdue">overdue</span>
          </div>
        ) : null}
      </td>
      <td class="nowrap">{formatDate(f.first_seen_at).slice(0, 10)}</td>
      <td>
        <TriageCell f={f} />
      </td>
    </tr>
  );
}

/**
 * The findings of record across the caller's scope (every client for an admin, their clients
 * for a customer user): filters, count and position in the address; rows chosen one by one or
 * "all N matching", changed in one action through POST /api/findings/bulk.
 */
export function PortfolioPage() {
  const { query, route } = useLocation();
  const view = viewOf(query);
  const filter = apiFilterOf(view);
  const cursor = query['cursor'] || undefined;
  // The page number only labels the position; without a cursor it is the first page whatever it says.
  const pageNo = cursor === undefined ? 1 : Math.max(1, Math.floor(Number(query['page'])) || 1);
  const mayChange = useMay('remediation:update');
  const [trail, setTrail] = useState<string[]>([]);
  const [tick, setTick] = useState(0);
  const [chosen, setChosen] = useState<Map<string, RecordFinding>>(new Map());
  const [allMatching, setAllMatching] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const deps = [JSON.stringify(filter), view.sort, view.perPage, cursor, tick];
  const page = useLoadKeeping(() => listRecords(filter, view.sort, view.perPage, cursor), deps);
  const filterKey = JSON.stringify(filter);
  // The capped count first (fast at any size); the breakdown (open, overdue) only when it is
  // cheap, up to the bulk limit, or when asked for: it reads every match (bench/README.md).
  const [countAll, setCountAll] = useState(false);
  const counted = useLoadKeeping(() => countRecords(filter).then((c) => ({ ...c, key: filterKey })), [filterKey, tick]);
  const wantSummary = counted.last?.key === filterKey && (!counted.last.capped || countAll);
  const summary = useLoadKeeping(
    () => (wantSummary ? summarizeRecords(filter).then((r) => ({ ...r, key: filterKey })) : Promise.resolve(null)),
    [filterKey, tick, wantSummary],
  );
  // Wanted and not in yet: loading, also in the render between the count's answer and the
  // summary's request (its effect starts it), so the page never looks settled in between.
  const busy = page.busy || counted.busy || summary.busy || (wantSummary && summary.last?.key !== filterKey);
  const clients = useLoad(() => listSessionClients(), []);

  function go(next: PortfolioView, at?: { cursor: string; page: number }) {
    if (JSON.stringify(next.filter) !== JSON.stringify(view.filter)) setCountAll(false);
    setChosen(new Map());
    setAllMatching(false);
    setOutcome(null);
    route(hrefOf(next, at));
  }

  const rows = page.last?.findings ?? [];
  // Exact when known: the summary's, else the count's when it is not capped.
  const over = counted.last?.capped === true && summary.last === null;
  const total = summary.last?.total ?? (counted.last !== null && !counted.last.capped ? counted.last.count : null);
  const allOnPage = rows.length > 0 && rows.every((f) => chosen.has(keyOf(f)));
  const from = (pageNo - 1) * view.perPage + 1;
  const choose = (f: RecordFinding, on: boolean) => {
    const next = new Map(chosen);
    if (on) next.set(keyOf(f), f);
    else next.delete(keyOf(f));
    setChosen(next);
    setAllMatching(false);
  };
  const send = (change: BulkChange) =>
    allMatching
      ? changeMatching(filter, change).then((a) => [a])
      : // One request per client and target the chosen rows belong to (usually one).
        Promise.all(groupsOf([...chosen.values()]).map((g) => changeChosen(g, change)));

  return (
    <Page title="Findings">
      <p class="muted">
        The findings of record of {query['client_id'] ? 'the chosen clients' : 'every client you can see'}. To save a
        view, bookmark this page: its address holds the filters, the order and the page size.
      </p>
      <PortfolioFilters
        key={JSON.stringify(view.filter)}
        view={view}
        clients={clients.state === 'done' ? clients.value.clients : null}
        onApply={(f) => {
          setTrail([]);
          go({ ...view, filter: f });
        }}
      />
      {page.error !== null || counted.error !== null || summary.error !== null ? (
        <ErrorMessage error={page.error ?? counted.error ?? summary.error} onRetry={() => setTick((t) => t + 1)} />
      ) : null}
      <p class="list-status" role="status" aria-live="polite" data-portfolio-count>
        {busy ? <span class="busy-sign">Loading… </span> : null}
        {over
          ? `More than ${findingsWord(counted.last?.count ?? 0)} match` +
            (rows.length > 0 ? ` · showing ${formatCount(from)}–${formatCount(from + rows.length - 1)}` : '')
          : total === null
            ? null
            : total === 0
              ? 'No findings match.'
              : `${findingsWord(total)} match${total === 1 ? 'es' : ''}` +
                (summary.last
                  ? ` · ${formatCount(summary.last.open)} open · ${formatCount(summary.last.overdue)} overdue`
                  : '') +
                (rows.length > 0 ? ` · showing ${formatCount(from)}–${formatCount(from + rows.length - 1)}` : '')}
      </p>
      <div class="portfolio-order">
        <label for="portfolio-sort">Order</label>
        <select
          id="portfolio-sort"
          value={view.sort}
          onChange={(e) => {
            // A cursor belongs to one order: a new order starts at its first page.
            setTrail([]);
            go({ ...view, sort: e.currentTarget.value as RecordSort });
          }}
        >
          {RECORD_SORTS.map((s) => (
            <option key={s} value={s}>
              {SORT_LABELS[s]}
            </option>
          ))}
        </select>
      </div>
      {over && !countAll ? (
        <button type="button" class="button-quiet" onClick={() => setCountAll(true)}>
          Count them all
        </button>
      ) : null}
      <OutcomeMessage message={outcome} />
      {mayChange && rows.length > 0 ? (
        <div class="bulk-tools">
          {/* Outside the table: its headings are hidden on a phone, where this must still be tapped. */}
          <label class="inline">
            <input
              type="checkbox"
              checked={allOnPage || allMatching}
              onChange={(e) => {
                const on = e.currentTarget.checked;
                const next = new Map(chosen);
                for (const f of rows)
                  if (on) next.set(keyOf(f), f);
                  else next.delete(keyOf(f));
                setChosen(next);
                setAllMatching(false);
              }}
            />
            Select all on this page
          </label>
          {allMatching ? (
            <p data-select-state>
              All <strong>{findingsWord(total ?? 0)}</strong> matching the filters are chosen.
            </p>
          ) : allOnPage && over ? (
            <p class="muted">
              More than {formatCount(BULK_MAX_FINDINGS)} match: narrow the filters to {formatCount(BULK_MAX_FINDINGS)}{' '}
              or fewer to change them all at once.
            </p>
          ) : allOnPage && total !== null && total > rows.length ? (
            fitsOneChange(total) ? (
              <button type="button" onClick={() => setAllMatching(true)}>
                Select all {findingsWord(total)} matching
              </button>
            ) : (
              <p class="muted">
                {formatCount(total)} match: narrow the filters to {formatCount(BULK_MAX_FINDINGS)} or fewer to change
                them all at once.
              </p>
            )
          ) : null}
        </div>
      ) : null}
      {mayChange && (allMatching || chosen.size > 0) ? (
        <PortfolioBulk
          count={allMatching ? (total ?? 0) : chosen.size}
          what={allMatching ? 'every matching finding' : 'the chosen findings'}
          send={send}
          onClear={() => {
            setChosen(new Map());
            setAllMatching(false);
          }}
          onDone={(o, changed) => {
            setOutcome(o);
            if (!changed) return;
            setChosen(new Map());
            setAllMatching(false);
            setTick((t) => t + 1);
          }}
        />
      ) : null}
      {rows.length > 0 ? (
        <DataTable
          label="Findings of record"
          busy={page.busy}
          stack={{ lead: ['Severity', 'Status'] }}
          columns={[
            ...(mayChange ? [{ label: 'Select', hidden: true }] : []),
            'Severity',
            'Finding',
            'Client',
            'Host',
            'Status',
            'Due',
            'First seen',
            'Triage',
          ]}
        >
          {rows.map((f) => (
            <Row
              key={keyOf(f)}
              f={f}
              selected={allMatching || chosen.has(keyOf(f))}
              onSelect={mayChange ? (on) => choose(f, on) : undefined}
            />
          ))}
        </DataTable>
      ) : null}
      <CursorPager
        label="Findings pages"
        position={`Page ${pageNo}${total !== null && total > 0 ? ` of ${formatCount(Math.ceil(total / view.perPage))}` : ''}`}
        hasPrevious={cursor !== undefined}
        hasNext={page.last !== null && page.last.next_cursor !== null}
        onPrevious={() => {
          const prev = trail.at(-1) ?? '';
          setTrail(trail.slice(0, -1));
          go(view, { cursor: prev, page: pageNo - 1 });
        }}
        onNext={() => {
          const next = page.last?.next_cursor;
          if (!next) return;
          setTrail([...trail, cursor ?? '']);
          go(view, { cursor: next, page: pageNo + 1 });
        }}
      >
        <RowsPerPage
          sizes={PAGE_SIZES}
          value={view.perPage}
          onChange={(perPage) => {
            setTrail([]);
            go({ ...view, perPage });
          }}
        />
      </CursorPager>
    </Page>
  );
}
