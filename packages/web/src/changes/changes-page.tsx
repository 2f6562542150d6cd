import { type FindingChange, sessionChangeHref, sessionHref, type TargetChanges } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { listTargetChanges } from '../api/targets.ts';
import { findingsHref } from '../portfolio/portfolio-model.ts';
import { ErrorMessage } from '../ui/alert.tsx';
import { formatCount, formatDate } from '../ui/format.ts';
import { Page } from '../ui/page.tsx';
import { CursorPager, RowsPerPage } from '../ui/pager.tsx';
import { DataTable } from '../ui/table-wrap.tsx';
import { useLoadKeeping } from '../ui/use-load.ts';

/**
 * "What changed" (/console/changes): per target in the user's scope, what its latest scan did
 * to the findings of record since the scan before it (docs/findings-of-record.md#what-changed).
 * Each count opens that scan's findings filtered by the change; each finding's details there
 * hold its history (who changed what, when, from which session).
 */

const COLUMNS: readonly { change: FindingChange; label: string; noun: string }[] = [
  { change: 'new', label: 'New', noun: 'new' },
  { change: 'resolved', label: 'Resolved', noun: 'resolved' },
  { change: 'reopened', label: 'Reopened', noun: 'reopened' },
  { change: 'not_checked', label: 'Not checked', noun: 'not checked' },
  { change: 'persistent', label: 'Still open', noun: 'still open' },
];

/** Targets per page: the portal's pages, by client and target. */
const PAGE_SIZES = [25, 100, 500] as const;

/** The target's open findings of record on the Findings page (its address filters). */
const openFindingsHref = (t: TargetChanges) =>
  findingsHref({ ...(t.client_id === null ? {} : { client_id: t.client_id }), target: t.target, status: 'open' });

/** A count that opens the findings it counts; 0, or a scan retention removed, is plain text. */
function Count(props: { t: TargetChanges; change: FindingChange; noun: string }) {
  const { t } = props;
  const n = t.changes[props.change];
  if (n === 0 || t.session_id === null || !t.session_stored) return <span class="muted">{formatCount(n)}</span>;
  return (
    <a
      href={sessionChangeHref(t.session_id, t.client_id, props.change)}
      data-change={props.change}
      aria-label={`${formatCount(n)} ${props.noun} in the latest scan of ${t.target}`}
    >
      {formatCount(n)}
    </a>
  );
}

function LatestScan(props: { t: TargetChanges }) {
  const { t } = props;
  if (t.session_id === null) return <span class="muted">none</span>;
  const when = formatDate(t.scanned_at);
  if (!t.session_stored)
    return (
      <>
        {when} <span class="muted">(removed by retention)</span>
      </>
    );
  return <a href={sessionHref(t.session_id, t.client_id)}>{when}</a>;
}

function TargetRow(props: { t: TargetChanges }) {
  const { t } = props;
  return (
    <tr data-target={t.target}>
      <th scope="row">
        {t.target}
        <br />
        <a class="small" href={openFindingsHref(t)} aria-label={`Open findings of ${t.target}`}>
          open findings
        </a>
      </th>
      <td>{t.client_id ?? 'no client'}</td>
      <td class="nowrap">
        <LatestScan t={t} />
      </td>
      <td class="nowrap">
        {t.previous_session_id === null ? (
          <span class="muted">none (first scan)</span>
        ) : (
          <a href={sessionHref(t.previous_session_id, t.client_id)}>{formatDate(t.previous_scanned_at)}</a>
        )}
      </td>
      {COLUMNS.map((c) => (
        <td key={c.change} class="num">
          <Count t={t} change={c.change} noun={c.noun} />
        </td>
      ))}
    </tr>
  );
}

export function ChangesPage() {
  const [perPage, setPerPage] = useState<number>(PAGE_SIZES[1]);
  // cursors[i] is the cursor of page i; page 0 has none.
  const [cursors, setCursors] = useState<string[]>(['']);
  const cursor = cursors.at(-1) ?? '';
  const [attempt, setAttempt] = useState(0);
  // The page on screen stays, marked busy, while the next one loads.
  const loaded = useLoadKeeping(
    () => listTargetChanges({ limit: perPage, cursor: cursor === '' ? undefined : cursor }),
    [perPage, cursor, attempt],
  );
  const shown = loaded.last;
  return (
    <Page title="What changed">
      <p class="muted">
        Per target, what its latest scan changed since the scan before it. Resolved: the scan looked where the finding
        was and no longer found it. Not checked: the scan did not look at its host or port, so it stays open. Each
        number opens those findings in the scan's view, where a finding's details show its history.
      </p>
      {loaded.busy && shown === null ? (
        <p class="busy-sign" role="status" aria-busy="true">
          Loading…
        </p>
      ) : null}
      {loaded.error !== null ? <ErrorMessage error={loaded.error} onRetry={() => setAttempt((n) => n + 1)} /> : null}
      {shown !== null && shown.targets.length === 0 && cursors.length === 1 ? <p>No scanned targets yet.</p> : null}
      {shown !== null && shown.targets.length > 0 ? (
        <DataTable
          label="What changed per target"
          columns={['Target', 'Client', 'Latest scan', 'Previous scan', ...COLUMNS.map((c) => c.label)]}
          stack={{ lead: ['Target'] }}
          busy={loaded.busy}
        >
          {shown.targets.map((t) => (
            <TargetRow key={`${t.client_id ?? ''}/${t.target}`} t={t} />
          ))}
        </DataTable>
      ) : null}
      {shown !== null ? (
        <CursorPager
          label="Target pages"
          position={`Page ${cursors.length}`}
          hasPrevious={cursors.length > 1}
          hasNext={shown.next_cursor !== null}
          onPrevious={() => setCursors(cursors.slice(0, -1))}
          onNext={() => shown.next_cursor !== null && setCursors([...cursors, shown.next_cursor])}
        >
          <RowsPerPage
            sizes={PAGE_SIZES}
            value={perPage}
            onChange={(size) => {
              setPerPage(size);
              setCursors(['']);
            }}
          />
        </CursorPager>
      ) : null}
    </Page>
  );
}
