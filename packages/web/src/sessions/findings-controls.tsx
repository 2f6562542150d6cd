import {
  EXCEPTION_FILTERS,
  FINDING_STATUS_FILTERS,
  type FindingRow,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type RemediationUpdateItem,
  SEVERITIES,
} from '@svc/protocol';
import { useState } from 'preact/hooks';
import { label } from '../ui/format.ts';
import type { Message, Sender } from './findings-sender.ts';
import { FIRST_VIEW, type FindingsView, KEV_CHOICES, nameOf, titleOf, where } from './findings-model.ts';

/** The controls around the findings table (findings.tsx): filters, the bulk bar and the exception form. */

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

export const statusMessage = (f: FindingRow, status: RemediationStatus, matched: number) =>
  `“${titleOf(f)}” is now ${label(status)} on ${where(f)}.${
    f.tracked_by === 'title'
      ? ` Changed by title: ${matched} ${matched === 1 ? 'entry' : 'entries'} of this title.`
      : ''
  }`;

export const exceptionMessage = (f: FindingRow, exception: { expiry: string } | null) =>
  exception === null
    ? `Exception withdrawn for “${titleOf(f)}” on ${where(f)}.`
    : `Exception accepted for “${titleOf(f)}” on ${where(f)} until ${exception.expiry}.`;

/** Search box and filters; text fields apply on Enter or the button, choices at once. */
export function Filters(props: { view: FindingsView; onChange: (v: FindingsView) => void }) {
  const [draft, setDraft] = useState(props.view);
  const text = (key: 'q' | 'host' | 'port' | 'cve', title: string, attrs: Record<string, unknown> = {}) => (
    <label>
      {title}
      <input {...attrs} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} />
    </label>
  );
  // A select's options would join its name if the label wrapped it: the label points at it instead.
  const choice = <K extends 'severity' | 'status' | 'exception' | 'kev'>(
    key: K,
    title: string,
    values: readonly string[],
    name: (v: string) => string = label,
  ) => (
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
            {name(v)}
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
      {choice('kev', 'Exploitation', ['true', 'false'], (v) => KEV_CHOICES[v as 'true' | 'false'])}
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

/** Status and exception for every selected finding, sent one finding at a time by its fingerprint. */
export function BulkBar(props: {
  selected: FindingRow[];
  sender: Sender;
  onDone: (m: Message) => void;
  onClear: () => void;
}) {
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
