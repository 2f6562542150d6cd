import { EXCEPTION_REASON_MAX_LENGTH, FINDING_CHANGES, type FindingChange, type FindingsResponse } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { formatCount } from '../ui/format.ts';
import { CHANGE_NAMES, type FindingsView } from './findings-model.ts';

/**
 * What the findings of record add to the session view (docs/findings-of-record.md): the panel
 * of what this scan changed, and the false-positive form.
 */

export type ChangeCounts = NonNullable<FindingsResponse['changes']>;

/**
 * "What changed since the last scan": the counts of the first page's answer, each a button
 * that shows the findings it counts (pressed while the table shows them; pressed again shows
 * all). Overdue counts the findings this scan reported, so its button shows those.
 */
export function ChangesPanel(props: {
  changes: ChangeCounts;
  overdue: number;
  view: FindingsView;
  onShow: (v: FindingsView) => void;
  /** The scan of the target before this one, once the trend's sessions are in; null: this is the first. */
  previous?: { href: string; when: string } | null | undefined;
}) {
  const { view, previous } = props;
  const byChange = (c: FindingChange) => {
    const on = view.change === c && view.overdue === '';
    return (
      <li key={c}>
        <button
          type="button"
          class="change-count"
          data-change={c}
          aria-pressed={on}
          onClick={() => props.onShow({ ...view, change: on ? '' : c, overdue: '' })}
        >
          <strong>{formatCount(props.changes[c])}</strong> {CHANGE_NAMES[c]}
        </button>
      </li>
    );
  };
  const overdueOn = view.overdue === 'true' && view.change === 'found';
  return (
    <section class="changes" aria-labelledby="changes-h">
      <h3 id="changes-h">What changed since the last scan</h3>
      {previous === undefined ? null : (
        <p class="small" data-previous-scan>
          {previous === null ? (
            'This is the first stored scan of this target.'
          ) : (
            <>
              Since the scan of <a href={previous.href}>{previous.when}</a>.
            </>
          )}
        </p>
      )}
      <ul class="changes-list">
        {FINDING_CHANGES.map(byChange)}
        <li>
          <button
            type="button"
            class="change-count change-overdue"
            data-change="overdue"
            aria-pressed={overdueOn}
            onClick={() =>
              props.onShow({ ...view, change: overdueOn ? '' : 'found', overdue: overdueOn ? '' : 'true' })
            }
          >
            <strong>{formatCount(props.overdue)}</strong> overdue
          </button>
        </li>
      </ul>
      <p class="muted small">
        Resolved: this scan looked where the finding was and no longer found it. Not checked: this scan did not look at
        its host or port, so it stays open.
      </p>
    </section>
  );
}

/** A false positive's required reason (mark), or withdraw the mark when there is one. */
export function DispositionForm(props: {
  name: string;
  marked: boolean;
  busy: boolean;
  submitLabel?: string;
  onSave: (reason: string | null) => void;
  onCancel?: () => void;
}) {
  const [reason, setReason] = useState('');
  return (
    <form
      class="stack small"
      onSubmit={(e) => {
        e.preventDefault();
        if (reason.trim() !== '') props.onSave(reason.trim());
      }}
    >
      <label>
        Why it is not real
        <input
          aria-label={`False positive reason for ${props.name}`}
          value={reason}
          required
          maxLength={EXCEPTION_REASON_MAX_LENGTH}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" disabled={props.busy || reason.trim() === ''}>
          {props.submitLabel ?? 'Mark as false positive'}
        </button>{' '}
        {props.marked ? (
          <button type="button" disabled={props.busy} onClick={() => props.onSave(null)}>
            Withdraw false positive
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
