import type { FindingRow, FindingSort } from '@svc/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { SessionRef } from '../api/sessions.ts';
import { OutcomeMessage } from '../ui/alert.tsx';
import { countOf, formatCount, NO_VALUE } from '../ui/format.ts';
import { CursorPager } from '../ui/pager.tsx';
import { SeverityBadge } from '../ui/severity.tsx';
import { type Column, DataTable } from '../ui/table-wrap.tsx';
import { useData } from '../ui/use-load.ts';
import { FindingDetailPanel } from './findings-detail.tsx';
import { listFindings } from '../api/session-findings.ts';
import { BulkBar } from './findings-bulk.tsx';
import { Filters } from './findings-controls.tsx';
import { FindingTableRow } from './findings-row.tsx';
import { type RecordScope, useSender } from './findings-sender.ts';
import {
  type ChangeFilter,
  FIRST_VIEW,
  type FindingsView,
  type Message,
  PAGE_SIZE,
  queryOf,
  sortBy,
  titleOf,
} from './findings-model.ts';
import { type ChangeCounts, ChangesPanel } from './findings-triage.tsx';

const COLUMNS: { sort: FindingSort | null; title: string }[] = [
  { sort: 'severity', title: 'Severity' },
  { sort: null, title: 'Finding' },
  { sort: 'host', title: 'Host' },
  { sort: 'port', title: 'Port' },
  { sort: 'cve', title: 'CVE' },
  { sort: 'cvss', title: 'CVSS' },
  { sort: 'status', title: 'Remediation' },
  { sort: 'first_seen', title: 'First seen' },
  { sort: null, title: 'Risk exception' },
];

/**
 * The session's findings, a page at a time from the portal's findings index, read with the
 * findings of record of its target (docs/findings-of-record.md): what this scan changed, search,
 * filters, sortable columns, a detail panel, and changes per finding (status, note, risk
 * exception, false positive) or for the selected ones (one bulk request). The list also holds
 * the records this scan resolved and the open ones it did not check, each marked so. Rows of
 * older files whose entries carry no fingerprint change by title and say how many entries that
 * reached.
 */
export function Findings(props: {
  ref_: SessionRef;
  /** The session's client and target, once its metadata is in: bulk changes wait for it. */
  scope: RecordScope | null;
  /** Changes when something outside the table re-dated or changed findings (due-date settings). */
  refresh?: number;
  onChanged: () => void;
  /** The change the address asks for (`&change=`, the "What changed" page's links). */
  change?: ChangeFilter | undefined;
  /** The change filter was set here (a count's button, the filter): the address follows. */
  onChangeShown?: (change: ChangeFilter | undefined) => void;
  /** The scan of the target before this one (the changes panel names it). */
  previous?: { href: string; when: string } | null | undefined;
}) {
  const [view, setView] = useState<FindingsView>(() =>
    props.change === undefined ? FIRST_VIEW : { ...FIRST_VIEW, change: props.change },
  );
  const [cursors, setCursors] = useState<string[]>(['']);
  const cursor = cursors[cursors.length - 1] ?? '';
  const [message, setMessage] = useState<Message | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [selected, setSelected] = useState<Map<number, FindingRow>>(new Map());
  const [counts, setCounts] = useState<{ changes: ChangeCounts; overdue: number } | null>(null);
  const page = useData(
    () =>
      listFindings(props.ref_, queryOf(view, cursor)).then((r) => {
        // The first page of every answer counts what the scan changed, over the whole session.
        if (r.changes !== undefined) setCounts({ changes: r.changes, overdue: r.overdue ?? 0 });
        return r;
      }),
    [props.ref_.session, props.ref_.clientId, JSON.stringify(view), cursor, props.refresh ?? 0],
  );
  const changed = () => {
    page.reload();
    props.onChanged();
  };
  const sender = useSender(props.ref_, props.scope, changed, setMessage);
  const show = (v: FindingsView) => {
    setView(v);
    setCursors(['']);
    if (v.change !== view.change) props.onChangeShown?.(v.change || undefined);
  };
  // Back and forward move the address's change under the table: it shows that change again.
  useEffect(() => {
    const asked = props.change ?? '';
    if (asked === view.change) return;
    setView((v) => ({ ...v, change: asked, overdue: '' }));
    setCursors(['']);
  }, [props.change]);

  const data = page.data;
  const rows = data?.findings ?? [];
  const allOnPage = rows.length > 0 && rows.every((f) => selected.has(f.index));
  const toggle = (f: FindingRow, on: boolean) => {
    const next = new Map(selected);
    if (on) next.set(f.index, f);
    else next.delete(f.index);
    setSelected(next);
  };
  const sortOf = (c: FindingSort | null) =>
    c === null || view.sort !== c ? undefined : view.order === 'asc' ? 'ascending' : 'descending';

  return (
    <div class="findings">
      {counts !== null ? (
        <ChangesPanel
          changes={counts.changes}
          overdue={counts.overdue}
          view={view}
          onShow={show}
          previous={props.previous}
        />
      ) : null}
      <Filters view={view} onChange={show} />
      <OutcomeMessage message={message} />
      {page.error !== null ? (
        <p class="alert alert-error" role="alert">
          {page.error}
        </p>
      ) : null}
      <p class="findings-count" aria-live="polite" aria-busy={data === null ? 'true' : 'false'}>
        {data === null
          ? 'Loading findings…'
          : `${countOf(data.total, 'finding', 'findings')}${
              data.total > PAGE_SIZE
                ? `, page ${formatCount(cursors.length)} of ${formatCount(Math.ceil(data.total / PAGE_SIZE))}`
                : ''
            }`}
      </p>
      <BulkBar selected={[...selected.values()]} sender={sender} onClear={() => setSelected(new Map())} />
      {data !== null && data.total === 0 ? (
        <p>
          {JSON.stringify(view) === JSON.stringify(FIRST_VIEW)
            ? 'No findings in this session.'
            : 'No findings match the filters.'}
        </p>
      ) : (
        <DataTable
          label="Findings of this scan"
          busy={page.data === null}
          stack={{ lead: ['Severity', 'Remediation'] }}
          columns={[
            {
              label: 'Select',
              header: (
                <input
                  type="checkbox"
                  aria-label="Select all findings on this page"
                  checked={allOnPage}
                  onChange={(e) => {
                    const next = new Map(selected);
                    for (const f of rows)
                      if (e.currentTarget.checked) next.set(f.index, f);
                      else next.delete(f.index);
                    setSelected(next);
                  }}
                />
              ),
            },
            ...COLUMNS.map(
              (c): Column =>
                c.sort === null
                  ? { label: c.title }
                  : {
                      label: c.title,
                      sort: {
                        direction: sortOf(c.sort) ?? 'none',
                        onSort: () => show(sortBy(view, c.sort as FindingSort)),
                      },
                    },
            ),
            { label: 'Details', hidden: true },
          ]}
        >
          {rows.map((f) => (
            <FindingTableRow
              key={f.index}
              f={f}
              selected={selected.has(f.index)}
              onSelect={(on) => toggle(f, on)}
              open={open === f.index}
              onOpen={() => setOpen(open === f.index ? null : f.index)}
              editing={editing === f.index}
              onEdit={(on) => setEditing(on ? f.index : null)}
              sender={sender}
            />
          ))}
        </DataTable>
      )}
      <CursorPager
        label="Findings pages"
        position={`Page ${formatCount(cursors.length)}`}
        hasPrevious={cursors.length > 1}
        hasNext={data?.next_cursor != null}
        onPrevious={() => setCursors(cursors.slice(0, -1))}
        onNext={() => data?.next_cursor && setCursors([...cursors, data.next_cursor])}
      />
      {open !== null ? (
        <FindingDetailPanel
          key={open}
          ref_={props.ref_}
          index={open}
          version={rows.find((f) => f.index === open)}
          clientId={props.scope === null ? (props.ref_.clientId ?? null) : props.scope.clientId || null}
          sender={sender}
          onClose={() => setOpen(null)}
        />
      ) : null}
    </div>
  );
}

/** Findings under a risk exception: who accepted it, why, and until when (from the index, a page at a time). */
export function Exceptions(props: { ref_: SessionRef; version: number }) {
  const [cursors, setCursors] = useState<string[]>(['']);
  const cursor = cursors[cursors.length - 1] ?? '';
  const page = useData(
    () =>
      listFindings(props.ref_, {
        exception: 'active,expired',
        sort: 'severity',
        order: 'desc',
        limit: PAGE_SIZE,
        cursor: cursor === '' ? undefined : cursor,
      }),
    [props.ref_.session, props.ref_.clientId, props.version, cursor],
  );
  if (page.data === null)
    return page.error === null ? <p aria-busy="true">Loading…</p> : <p class="alert alert-error">{page.error}</p>;
  if (page.data.total === 0) return <p>No risk exceptions.</p>;
  const next = page.data.next_cursor;
  return (
    <>
      <DataTable
        label="Risk exceptions"
        columns={['Finding', 'Exception', 'Reason', 'Approved by', 'Expires']}
        stack={{ lead: ['Exception', 'Finding'] }}
      >
        {page.data.findings.map((f) => (
          <tr key={f.index}>
            <td>
              <SeverityBadge severity={f.severity ?? undefined} /> {titleOf(f)}
              {f.host ? <div class="muted small">{f.host}</div> : null}
            </td>
            <td>{f.exception?.state === 'active' ? 'accepted' : 'expired'}</td>
            <td>{f.exception?.reason ?? NO_VALUE}</td>
            <td>{f.exception?.approver ?? NO_VALUE}</td>
            <td class="nowrap">{f.exception?.expiry ?? 'no expiry'}</td>
          </tr>
        ))}
      </DataTable>
      <CursorPager
        label="Risk exceptions pages"
        hasPrevious={cursors.length > 1}
        hasNext={next !== null}
        onPrevious={() => setCursors(cursors.slice(0, -1))}
        onNext={() => next !== null && setCursors([...cursors, next])}
      />
    </>
  );
}
