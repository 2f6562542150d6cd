import {
  EXCEPTION_FILTERS,
  FINDING_STATUS_FILTERS,
  type FindingRow,
  type RemediationStatus,
  SEVERITIES,
} from '@svc/protocol';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { label } from '../ui/format.ts';
import { useDraft } from '../ui/use-draft.ts';
import {
  CHANGE_FILTERS,
  CHANGE_NAMES,
  type ChangeFilter,
  DISPOSITION_CHOICES,
  FIRST_VIEW,
  type FindingsView,
  KEV_CHOICES,
  OVERDUE_CHOICES,
  titleOf,
  where,
} from './findings-model.ts';
import { StatusFilterOptions } from './status-options.tsx';

/** The controls around the findings table (findings.tsx): filters and the exception form. */

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
  // A view set elsewhere (the changes panel, Clear) shows in the fields.
  const [draft, setDraft] = useDraft(props.view);
  const text = (key: 'q' | 'host' | 'port' | 'cve', title: string, attrs: Record<string, unknown> = {}) => (
    <label>
      {title}
      <input {...attrs} value={draft[key]} onInput={(e) => setDraft({ ...draft, [key]: e.currentTarget.value })} />
    </label>
  );
  // A select's options would join its name if the label wrapped it: the label points at it instead.
  const choice = <K extends 'severity' | 'status' | 'exception' | 'change' | 'disposition' | 'overdue' | 'kev'>(
    key: K,
    title: string,
    values: readonly string[],
    name: (v: string) => string = label,
    grouped?: ComponentChildren,
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
        {grouped ??
          values.map((v) => (
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
      {choice('status', 'Status', FINDING_STATUS_FILTERS, label, <StatusFilterOptions />)}
      {choice('exception', 'Exception', EXCEPTION_FILTERS)}
      {choice('change', 'Change in this scan', CHANGE_FILTERS, (v) => CHANGE_NAMES[v as ChangeFilter])}
      {choice('disposition', 'False positive', ['false_positive', 'none'], (v) => DISPOSITION_CHOICES[v as 'none'])}
      {choice('overdue', 'Due date', ['true', 'false'], (v) => OVERDUE_CHOICES[v as 'true' | 'false'])}
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
