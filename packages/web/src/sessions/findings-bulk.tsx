import type { BulkChange, FindingRow, RemediationStatus } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { formatCount, label } from '../ui/format.ts';
import { ExceptionForm } from './findings-controls.tsx';
import { bulkMessage, hasRecord } from './findings-model.ts';
import type { Sender } from './findings-sender.ts';
import { DispositionForm } from './findings-triage.tsx';
import { PersonStatusOptions } from './status-options.tsx';

type Form = 'exception' | 'false_positive' | null;

/**
 * Status, risk exception or false positive for every selected finding, in one request
 * (POST /api/findings/bulk by their fingerprints within the session's client and target).
 */
export function BulkBar(props: { selected: FindingRow[]; sender: Sender; onClear: () => void }) {
  const [status, setStatus] = useState<RemediationStatus>('in_progress');
  const [form, setForm] = useState<Form>(null);
  const eligible = props.selected.filter(hasRecord);
  const noFingerprint = props.selected.length - eligible.length;
  const bulk = props.sender.bulk;
  const disabled = props.sender.busy || eligible.length === 0 || bulk === null;

  async function apply(rows: FindingRow[], change: BulkChange, what: string, resolved = 0) {
    if (bulk === null) return;
    const fingerprints = rows.filter(hasRecord).map((f) => f.fingerprint);
    const ok = await bulk(fingerprints, change, (answer) =>
      bulkMessage(what, props.selected.length, answer, { noFingerprint, resolved }),
    );
    if (ok) {
      setForm(null);
      props.onClear();
    }
  }

  if (props.selected.length === 0) return null;
  const open = eligible.filter((f) => f.status !== 'resolved');
  return (
    <fieldset class="findings-bulk">
      <legend>
        Change the <strong>{formatCount(props.selected.length)}</strong> selected
      </legend>
      <label>
        Status for selected
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as RemediationStatus)}>
          <PersonStatusOptions />
        </select>
      </label>
      <button
        type="button"
        disabled={disabled}
        onClick={() => void apply(eligible, { status }, `Status set to ${label(status)}`)}
      >
        Apply status
      </button>
      <button
        type="button"
        aria-expanded={form === 'exception'}
        disabled={disabled || open.length === 0}
        onClick={() => setForm(form === 'exception' ? null : 'exception')}
      >
        Exception for selected…
      </button>
      <button
        type="button"
        aria-expanded={form === 'false_positive'}
        disabled={disabled}
        onClick={() => setForm(form === 'false_positive' ? null : 'false_positive')}
      >
        False positive for selected…
      </button>
      <button type="button" class="button-quiet" onClick={props.onClear}>
        Clear selection
      </button>
      {form === 'exception' ? (
        <ExceptionForm
          name="selected findings"
          initial={{ reason: '', expiry: '' }}
          canWithdraw={open.some((f) => f.exception !== null)}
          busy={props.sender.busy}
          submitLabel="Accept exception for selected"
          onCancel={() => setForm(null)}
          onSave={(exception) =>
            void apply(
              open,
              { exception },
              exception === null ? 'Exception withdrawn' : `Exception accepted until ${exception.expiry}`,
              eligible.length - open.length,
            )
          }
        />
      ) : null}
      {form === 'false_positive' ? (
        <DispositionForm
          name="selected findings"
          marked={eligible.some((f) => f.disposition != null)}
          busy={props.sender.busy}
          submitLabel="Mark selected as false positive"
          onCancel={() => setForm(null)}
          onSave={(reason) =>
            void apply(
              eligible,
              { disposition: reason === null ? null : { disposition: 'false_positive', reason } },
              reason === null ? 'False positive withdrawn' : 'Marked as false positive',
            )
          }
        />
      ) : null}
    </fieldset>
  );
}
