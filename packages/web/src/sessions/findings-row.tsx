import type { FindingRow as Row, RemediationStatus } from '@svc/protocol';
import { KevBadge, SeverityBadge } from '../ui/severity.tsx';
import { ExceptionForm, exceptionMessage, statusMessage } from './findings-controls.tsx';
import {
  CHANGE_MARKS,
  dispositionText,
  exceptionText,
  kevText,
  nameOf,
  sourceText,
  targetOf,
  titleOf,
} from './findings-model.ts';
import type { Sender } from './findings-sender.ts';
import { PersonStatusOptions } from './status-options.tsx';
import { NO_VALUE } from '../ui/format.ts';

/** The marks beside a finding's title: what this scan did to it, false positive, known exploited. */
function Marks(props: { f: Row }) {
  const { f } = props;
  const change = f.change ? CHANGE_MARKS[f.change] : null;
  const fp = dispositionText(f);
  return (
    <>
      {change !== null ? (
        <>
          {' '}
          <span class={`badge change change-${f.change}`} data-mark="change">
            {change}
          </span>
        </>
      ) : null}
      {fp !== null ? (
        <>
          {' '}
          <span class="badge false-positive" data-mark="false-positive" title={fp}>
            False positive
          </span>
        </>
      ) : null}
      {f.kev ? (
        <>
          {' '}
          <KevBadge title={kevText(f)} />
        </>
      ) : null}
    </>
  );
}

/** Status (editable unless this scan resolved it), where it came from when not a person, due date. */
function Remediation(props: { f: Row; name: string; sender: Sender }) {
  const { f, name, sender } = props;
  const target = targetOf(f);
  if (target === null) return <span class="muted">not tracked</span>;
  const resolvedHere = f.in_scan === false && f.change === 'resolved';
  const by = sourceText(f.status_source);
  return (
    <>
      {resolvedHere ? (
        <span>resolved</span>
      ) : (
        <select
          aria-label={`Remediation status of ${name}`}
          value={f.status ?? 'new'}
          disabled={sender.busy}
          onChange={(e) => {
            const status = e.currentTarget.value as RemediationStatus;
            void sender.send({ ...target, status }, (matched) => statusMessage(f, status, matched));
          }}
        >
          <PersonStatusOptions current={f.status ?? 'new'} />
        </select>
      )}
      {by !== null && f.status_source !== 'scan' ? <div class="muted small">Status {by}</div> : null}
      {f.tracked_by === 'title' ? <div class="muted small">Applies to every entry titled “{titleOf(f)}”</div> : null}
      {f.due_date && f.status !== 'resolved' ? (
        <div class="small" data-due>
          Due {f.due_date}
          {f.overdue ? (
            <>
              {' '}
              <span class="badge overdue">Overdue</span>
            </>
          ) : null}
        </div>
      ) : null}
    </>
  );
}

/** One row of the findings table (findings.tsx). */
export function FindingTableRow(props: {
  f: Row;
  selected: boolean;
  onSelect: (on: boolean) => void;
  open: boolean;
  onOpen: () => void;
  editing: boolean;
  onEdit: (on: boolean) => void;
  sender: Sender;
}) {
  const { f, sender } = props;
  const name = nameOf(f);
  const target = targetOf(f);
  const outside = f.in_scan === false;
  return (
    <tr
      data-finding={f.index}
      data-change={f.change ?? undefined}
      class={[props.open ? 'selected-row' : '', outside ? 'out-of-scan' : ''].filter(Boolean).join(' ') || undefined}
    >
      <td>
        <input
          type="checkbox"
          aria-label={`Select ${name}`}
          checked={props.selected}
          onChange={(e) => props.onSelect(e.currentTarget.checked)}
        />
      </td>
      <td>
        <SeverityBadge severity={f.severity ?? undefined} />
      </td>
      <td>
        <strong>{titleOf(f)}</strong>
        <Marks f={f} />
        {f.note ? (
          // Clipped to two lines on screen (whole on hover and in Details); whole for screen readers.
          <p class="finding-note" data-note title={f.note}>
            <span class="finding-note-label">Note:</span> {f.note}
          </p>
        ) : null}
      </td>
      <td>
        <span class="nowrap">{f.host ?? NO_VALUE}</span>
        {f.hostname ? <div class="muted small break-anywhere">{f.hostname}</div> : null}
      </td>
      <td class="nowrap">{f.port === null ? NO_VALUE : `${f.port}${f.protocol ? `/${f.protocol}` : ''}`}</td>
      <td class="nowrap">
        {f.cve_ids.length === 0 ? NO_VALUE : f.cve_ids[0]}
        {f.cve_ids.length > 1 ? <span class="muted small"> +{f.cve_ids.length - 1}</span> : null}
      </td>
      <td>
        {f.cvss === null ? NO_VALUE : f.cvss.toFixed(1)}
        {f.epss === null ? null : <div class="muted small">EPSS {(f.epss * 100).toFixed(1)} %</div>}
      </td>
      <td>
        <Remediation f={f} name={name} sender={sender} />
      </td>
      <td class="nowrap">{f.first_seen ?? NO_VALUE}</td>
      <td>
        {target === null || f.status === 'resolved' || !('fingerprint' in target) ? (
          <span class="muted">{target === null ? NO_VALUE : exceptionText(f)}</span>
        ) : props.editing ? (
          <ExceptionForm
            name={name}
            initial={{ reason: f.exception?.reason ?? '', expiry: f.exception?.expiry ?? '' }}
            canWithdraw={f.exception !== null}
            busy={sender.busy}
            onCancel={() => props.onEdit(false)}
            onSave={(exception) =>
              void sender
                .send({ ...target, exception }, () => exceptionMessage(f, exception))
                .then((ok) => ok && props.onEdit(false))
            }
          />
        ) : (
          <>
            <span data-exception>{exceptionText(f)}</span>{' '}
            <button
              type="button"
              aria-label={`${f.exception ? 'Change' : 'Add'} exception for ${name}`}
              disabled={sender.busy}
              onClick={() => props.onEdit(true)}
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
          aria-expanded={props.open}
          onClick={props.onOpen}
        >
          Details
        </button>
      </td>
    </tr>
  );
}
