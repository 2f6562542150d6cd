import {
  EXCEPTION_FILTERS,
  FINDING_STATUS_FILTERS,
  type FindingRow,
  type FindingSort,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type RemediationUpdateItem,
  SEVERITIES,
} from '@svc/protocol';
import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors.ts';
import { type SessionRef, updateRemediation } from '../api/sessions.ts';
import { label } from '../ui/format.ts';
import { CursorPager } from '../ui/pager.tsx';
import { SeverityBadge } from '../ui/severity.tsx';
import { type Column, DataTable } from '../ui/table-wrap.tsx';
import { useData } from '../ui/use-load.ts';
import { FindingDetailPanel } from './findings-detail.tsx';
import { listFindings } from './findings-api.ts';
import {
  exceptionText,
  FIRST_VIEW,
  type FindingsView,
  nameOf,
  PAGE_SIZE,
  queryOf,
  sortBy,
  targetOf,
  titleOf,
  where,
} from './findings-model.ts';

const CONFLICT = 'This finding was changed by someone else. Reload the page to see the current status.';

type Message = { kind: 'ok' | 'error'; text: string };

/** Sends one remediation item and reports the outcome; shared by the row controls, the bulk bar and the detail panel. */
export interface Sender {
  busy: boolean;
  send: (item: RemediationUpdateItem, done: (matched: number) => string) => Promise<boolean>;
}

function useSender(ref: SessionRef, onChanged: () => void, setMessage: (m: Message | null) => void): Sender {
  const [busy, setBusy] = useState(false);
  return {
    busy,
    async send(item, done) {
      setBusy(true);
      setMessage(null);
      try {
        const r = await updateRemediation(ref, [item]);
        setMessage({ kind: 'ok', text: done(r.results[0]?.matched ?? 0) });
        onChanged();
        return true;
      } catch (err) {
        setMessage({
          kind: 'error',
          text: err instanceof ApiError && err.status === 409 ? CONFLICT : describeError(err),
        });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

/** Reason and expiry of a risk exception; withdraw when there is one to withdraw. */
export function ExceptionForm(props: {
  name: string;
  initial: { reason: string; expiry: string };
  canWithdraw: boolean;
  busy: boolean;
  submitLabel?: string;
  onSave: (exception: { reason: string; expiry: string } | null) => void;
  onCancel?: () => void;
}) {
  const [reason, setReason] = useState(props.initial.reason);
  const [expiry, setExpiry] = useState(props.initial.expiry);
  return (
    <form
      class="stack small"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave({ reason, expiry });
      }}
    >
      <label>
        Reason
        <input
          aria-label={`Exception reason for ${props.name}`}
          value={reason}
          required
          maxLength={2000}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <label>
        Expires
        <input
          type="date"
          aria-label={`Exception expiry for ${props.name}`}
          value={expiry}
          required
          onInput={(e) => setExpiry(e.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" disabled={props.busy}>
          {props.submitLabel ?? 'Save exception'}
        </button>{' '}
        {props.canWithdraw ? (
          <button type="button" disabled={props.busy} onClick={() => props.onSave(null)}>
            Withdraw exception
          </button>
        ) : null}{' '}
        {props.onCancel ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

const statusMessage = (f: FindingRow, status: RemediationStatus, matched: number) =>
  `“${titleOf(f)}” is now ${label(status)} on ${where(f)}.${
    f.tracked_by === 'title'
      ? ` Changed by title: ${matched} ${matched === 1 ? 'entry' : 'entries'} of this title.`
      : ''
  }`;

const exceptionMessage = (f: FindingRow, exception: { expiry: string } | null) =>
  exception === null
    ? `Exception withdrawn for “${titleOf(f)}” on ${where(f)}.`
    : `Exception accepted for “${titleOf(f)}” on ${where(f)} until ${exception.expiry}.`;

/** Search box and filters; text fields apply on Enter or the button, choices at once. */
function Filters(props: { view: FindingsView; onChange: (v: FindingsView) => void }) {
  const [draft, setDraft] = useState(props.view);
  const text = (key: 'q' | 'host' | 'port' | 'cve', title: string, attrs: Record<string, unknown> = {}) => (
    <label>
      {title}
      <input {...attrs} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} />
    </label>
  );
  // A select's options would join its name if the label wrapped it: the label points at it instead.
  const choice = <K extends 'severity' | 'status' | 'exception'>(key: K, title: string, values: readonly string[]) => (
    <div class="findings-choice">
      <label for={`findings-filter-${key}`}>{title}</label>
      <select
        id={`findings-filter-${key}`}
        value={draft[key]}
        onChange={(e) => {
          const next = { ...draft, [key]: e.currentTarget.value };
          setDraft(next);
          props.onChange(next);
        }}
      >
        <option value="">All</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {label(v)}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <form
      class="findings-filters"
      aria-label="Filter findings"
      onSubmit={(e) => {
        e.preventDefault();
        props.onChange(draft);
      }}
    >
      {text('q', 'Search findings', { type: 'search', placeholder: 'Title, host, CVE, rule' })}
      {choice('severity', 'Severity', SEVERITIES)}
      {choice('status', 'Status', FINDING_STATUS_FILTERS)}
      {choice('exception', 'Exception', EXCEPTION_FILTERS)}
      {text('host', 'Host', { placeholder: 'Address or name' })}
      {text('port', 'Port', { inputMode: 'numeric', pattern: '[0-9]*', maxLength: 5 })}
      {text('cve', 'CVE', { placeholder: 'CVE-2024-…' })}
      <div class="findings-filter-actions">
        <button type="submit">Apply filters</button>{' '}
        <button
          type="button"
          class="button-quiet"
          onClick={() => {
            const cleared = { ...FIRST_VIEW, sort: props.view.sort, order: props.view.order };
            setDraft(cleared);
            props.onChange(cleared);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

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

/** Status and exception for every selected finding, sent one finding at a time by its fingerprint. */
function BulkBar(props: { selected: FindingRow[]; sender: Sender; onDone: (m: Message) => void; onClear: () => void }) {
  const [status, setStatus] = useState<RemediationStatus>('in_progress');
  const [excepting, setExcepting] = useState(false);
  const eligible = props.selected.filter((f) => f.tracked_by === 'fingerprint' && f.fingerprint !== null);
  const skipped = props.selected.length - eligible.length;

  async function each(make: (f: FindingRow) => RemediationUpdateItem, what: string) {
    let ok = 0;
    let firstError: string | null = null;
    for (const f of eligible) {
      const done = await props.sender.send(make(f), () => '');
      if (done) ok++;
      else firstError ??= `${nameOf(f)}`;
    }
    const parts = [
      `${what} for ${ok} of ${props.selected.length} selected ${props.selected.length === 1 ? 'finding' : 'findings'}.`,
    ];
    if (skipped > 0) parts.push(`${skipped} without a fingerprint left unchanged.`);
    if (firstError !== null) parts.push(`Failed first on ${firstError}.`);
    props.onDone({ kind: firstError === null ? 'ok' : 'error', text: parts.join(' ') });
    if (firstError === null) props.onClear();
  }

  if (props.selected.length === 0) return null;
  return (
    <fieldset class="findings-bulk">
      <legend>
        Change the <strong>{props.selected.length}</strong> selected
      </legend>
      <label>
        Status for selected
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RemediationStatus)}>
          {REMEDIATION_STATUSES.map((s) => (
            <option key={s} value={s}>
              {label(s)}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        disabled={props.sender.busy || eligible.length === 0}
        onClick={() =>
          void each((f) => ({ fingerprint: f.fingerprint as string, status }), `Status set to ${label(status)}`)
        }
      >
        Apply status
      </button>
      <button
        type="button"
        disabled={props.sender.busy || eligible.length === 0}
        onClick={() => setExcepting(!excepting)}
      >
        Exception for selected…
      </button>
      <button type="button" class="button-quiet" onClick={props.onClear}>
        Clear selection
      </button>
      {excepting ? (
        <ExceptionForm
          name="selected findings"
          initial={{ reason: '', expiry: '' }}
          canWithdraw={eligible.some((f) => f.exception !== null)}
          busy={props.sender.busy}
          submitLabel="Accept exception for selected"
          onCancel={() => setExcepting(false)}
          onSave={(exception) => {
            setExcepting(false);
            void each(
              (f) => ({ fingerprint: f.fingerprint as string, exception }),
              exception === null ? 'Exception withdrawn' : `Exception accepted until ${exception.expiry}`,
            );
          }}
        />
      ) : null}
    </fieldset>
  );
}

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
                <td>{f.cvss === null ? '–' : f.cvss.toFixed(1)}</td>
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
