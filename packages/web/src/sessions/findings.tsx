import { type FindingRow, type FindingSort, REMEDIATION_STATUSES, type RemediationStatus } from '@svc/protocol';
import { useState } from 'preact/hooks';
import type { SessionRef } from '../api/sessions.ts';
import { label } from '../ui/format.ts';
import { CursorPager } from '../ui/pager.tsx';
import { KevBadge, SeverityBadge } from '../ui/severity.tsx';
import { type Column, DataTable } from '../ui/table-wrap.tsx';
import { useData } from '../ui/use-load.ts';
import { FindingDetailPanel } from './findings-detail.tsx';
import { listFindings } from './findings-api.ts';
import { BulkBar, ExceptionForm, exceptionMessage, Filters, statusMessage } from './findings-controls.tsx';
import { type Message, useSender } from './findings-sender.ts';
import {
  exceptionText,
  FIRST_VIEW,
  type FindingsView,
  nameOf,
  PAGE_SIZE,
  queryOf,
  kevText,
  sortBy,
  targetOf,
  titleOf,
} from './findings-model.ts';

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
 * The session's findings, a page at a time from the portal's findings index: search,
 * filters, sortable columns, a detail panel, and changes per finding (status, note, risk
 * exception) or for the selected ones, each sent by the finding's fingerprint. Rows of
 * older files whose entries carry no fingerprint change by title and say how many entries
 * that reached.
 */
export function Findings(props: { ref_: SessionRef; onChanged: () => void }) {
  const [view, setView] = useState<FindingsView>(FIRST_VIEW);
  const [cursors, setCursors] = useState<string[]>(['']);
  const cursor = cursors[cursors.length - 1] ?? '';
  const [message, setMessage] = useState<Message | null>(null);
  const [editing, setEditing] = useState<number | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const [selected, setSelected] = useState<Map<number, FindingRow>>(new Map());
  const page = useData(
    () => listFindings(props.ref_, queryOf(view, cursor)),
    [props.ref_.session, props.ref_.clientId, JSON.stringify(view), cursor],
  );
  const changed = () => {
    page.reload();
    props.onChanged();
  };
  const sender = useSender(props.ref_, changed, setMessage);
  const show = (v: FindingsView) => {
    setView(v);
    setCursors(['']);
  };

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
      <Filters view={view} onChange={show} />
      {message !== null ? (
        <p
          class={`alert ${message.kind === 'ok' ? 'alert-ok' : 'alert-error'}`}
          role={message.kind === 'ok' ? 'status' : 'alert'}
        >
          {message.text}
        </p>
      ) : null}
      {page.error !== null ? (
        <p class="alert alert-error" role="alert">
          {page.error}
        </p>
      ) : null}
      <p class="findings-count" aria-live="polite" aria-busy={data === null ? 'true' : 'false'}>
        {data === null
          ? 'Loading findings…'
          : `${data.total} ${data.total === 1 ? 'finding' : 'findings'}${
              data.total > PAGE_SIZE ? `, page ${cursors.length} of ${Math.ceil(data.total / PAGE_SIZE)}` : ''
            }`}
      </p>
      <BulkBar
        selected={[...selected.values()]}
        sender={sender}
        onDone={setMessage}
        onClear={() => setSelected(new Map())}
      />
      {data !== null && data.total === 0 ? (
        <p>
          {JSON.stringify(view) === JSON.stringify(FIRST_VIEW)
            ? 'No findings in this session.'
            : 'No findings match the filters.'}
        </p>
      ) : (
        <DataTable
          label="Findings"
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
          {rows.map((f) => {
            const name = nameOf(f);
            const target = targetOf(f);
            return (
              <tr key={f.index} data-finding={f.index} class={open === f.index ? 'selected-row' : undefined}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${name}`}
                    checked={selected.has(f.index)}
                    onChange={(e) => toggle(f, e.currentTarget.checked)}
                  />
                </td>
                <td>
                  <SeverityBadge severity={f.severity ?? undefined} />
                </td>
                <td>
                  <strong>{titleOf(f)}</strong>
                  {f.kev ? (
                    <>
                      {' '}
                      <KevBadge title={kevText(f)} />
                    </>
                  ) : null}
                </td>
                <td class="nowrap">
                  {f.host ?? '–'}
                  {f.hostname ? <div class="muted small">{f.hostname}</div> : null}
                </td>
                <td class="nowrap">{f.port === null ? '–' : `${f.port}${f.protocol ? `/${f.protocol}` : ''}`}</td>
                <td class="nowrap">
                  {f.cve_ids.length === 0 ? '–' : f.cve_ids[0]}
                  {f.cve_ids.length > 1 ? <span class="muted small"> +{f.cve_ids.length - 1}</span> : null}
                </td>
                <td>
                  {f.cvss === null ? '–' : f.cvss.toFixed(1)}
                  {f.epss === null ? null : <div class="muted small">EPSS {(f.epss * 100).toFixed(1)} %</div>}
                </td>
                <td>
                  {target === null ? (
                    <span class="muted">not tracked</span>
                  ) : (
                    <>
                      <select
                        aria-label={`Remediation status of ${name}`}
                        value={f.status ?? 'new'}
                        disabled={sender.busy}
                        onChange={(e) => {
                          const status = e.currentTarget.value as RemediationStatus;
                          void sender.send({ ...target, status }, (matched) => statusMessage(f, status, matched));
                        }}
                      >
                        {REMEDIATION_STATUSES.map((s) => (
                          <option key={s} value={s}>
                            {label(s)}
                          </option>
                        ))}
                      </select>
                      {f.tracked_by === 'title' ? (
                        <div class="muted small">Applies to every entry titled “{titleOf(f)}”</div>
                      ) : null}
                    </>
                  )}
                </td>
                <td class="nowrap">{f.first_seen ?? '–'}</td>
                <td>
                  {target === null || f.status === 'resolved' || !('fingerprint' in target) ? (
                    <span class="muted">{target === null ? '–' : exceptionText(f)}</span>
                  ) : editing === f.index ? (
                    <ExceptionForm
                      name={name}
                      initial={{ reason: f.exception?.reason ?? '', expiry: f.exception?.expiry ?? '' }}
                      canWithdraw={f.exception !== null}
                      busy={sender.busy}
                      onCancel={() => setEditing(null)}
                      onSave={(exception) =>
                        void sender
                          .send({ ...target, exception }, () => exceptionMessage(f, exception))
                          .then((ok) => ok && setEditing(null))
                      }
                    />
                  ) : (
                    <>
                      <span data-exception>{exceptionText(f)}</span>{' '}
                      <button
                        type="button"
                        aria-label={`${f.exception ? 'Change' : 'Add'} exception for ${name}`}
                        disabled={sender.busy}
                        onClick={() => setEditing(f.index)}
                      >
                        {f.exception ? 'Change' : 'Add'}
                      </button>
                    </>
                  )}
                </td>
                <td>
                  <button
                    type="button"
                    class="button-quiet"
                    aria-label={`Details of ${name}`}
                    aria-expanded={open === f.index}
                    onClick={() => setOpen(open === f.index ? null : f.index)}
                  >
                    Details
                  </button>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      <CursorPager
        label="Findings pages"
        position={`Page ${cursors.length}`}
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
            <td>{f.exception?.reason ?? '–'}</td>
            <td>{f.exception?.approver ?? '–'}</td>
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
