import { type BulkChange, type BulkResponse, PERSON_STATUSES } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { ExceptionForm } from '../sessions/findings-controls.tsx';
import { DispositionForm } from '../sessions/findings-triage.tsx';
import { label } from '../ui/format.ts';
import { findingsWord, outcomeText, sumAnswers } from './portfolio-model.ts';

type Form = 'note' | 'exception' | 'false_positive' | null;
export type Outcome = { kind: 'ok' | 'error'; text: string };

/**
 * One change for the chosen findings of the portfolio: their status (only the statuses people
 * set), note, risk exception or false positive. `send` makes the requests: one POST
 * /api/findings/bulk by filter for "all matching", one per client and target for chosen rows.
 */
export function PortfolioBulk(props: {
  /** How many findings the change reaches, and how they are named ("the 60 matching"). */
  count: number;
  what: string;
  send: (change: BulkChange) => Promise<BulkResponse[]>;
  onDone: (outcome: Outcome, changed: boolean) => void;
  onClear: () => void;
}) {
  const [status, setStatus] = useState<(typeof PERSON_STATUSES)[number]>('in_progress');
  const [form, setForm] = useState<Form>(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);

  async function apply(change: BulkChange, what: string) {
    setBusy(true);
    try {
      const answers = await props.send(change);
      setForm(null);
      setNote('');
      props.onDone({ kind: 'ok', text: outcomeText(what, sumAnswers(answers)) }, true);
    } catch (err) {
      props.onDone({ kind: 'error', text: `Not changed: ${describeError(err)}` }, false);
    } finally {
      setBusy(false);
    }
  }
  const toggle = (f: Form) => setForm(form === f ? null : f);

  return (
    <fieldset class="findings-bulk portfolio-bulk" aria-busy={busy ? 'true' : 'false'}>
      <legend>
        Change {props.what}: <strong data-bulk-count>{findingsWord(props.count)}</strong>
      </legend>
      <label>
        Status
        <select value={status} onChange={(e) => setStatus(e.currentTarget.value as (typeof PERSON_STATUSES)[number])}>
          {PERSON_STATUSES.map((s) => (
            <option key={s} value={s}>
              {label(s)}
            </option>
          ))}
        </select>
      </label>
      <button type="button" disabled={busy} onClick={() => void apply({ status }, `Status set to ${label(status)}`)}>
        Apply status
      </button>
      <button type="button" aria-expanded={form === 'note'} disabled={busy} onClick={() => toggle('note')}>
        Note…
      </button>
      <button type="button" aria-expanded={form === 'exception'} disabled={busy} onClick={() => toggle('exception')}>
        Exception…
      </button>
      <button
        type="button"
        aria-expanded={form === 'false_positive'}
        disabled={busy}
        onClick={() => toggle('false_positive')}
      >
        False positive…
      </button>
      <button type="button" class="button-quiet" onClick={props.onClear}>
        Clear selection
      </button>
      {form === 'note' ? (
        <form
          class="stack small"
          onSubmit={(e) => {
            e.preventDefault();
            void apply({ note }, note.trim() === '' ? 'Note removed' : 'Note saved');
          }}
        >
          <label>
            Note (replaces each finding’s note; empty removes it)
            <textarea rows={2} maxLength={10_000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
          </label>
          <div>
            <button type="submit" disabled={busy}>
              Save note
            </button>{' '}
            <button type="button" onClick={() => setForm(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {form === 'exception' ? (
        <ExceptionForm
          name="the chosen findings"
          initial={{ reason: '', expiry: '' }}
          canWithdraw
          busy={busy}
          submitLabel="Accept exception"
          onCancel={() => setForm(null)}
          onSave={(exception) =>
            void apply(
              { exception },
              exception === null ? 'Exception withdrawn' : `Exception accepted until ${exception.expiry}`,
            )
          }
        />
      ) : null}
      {form === 'false_positive' ? (
        <DispositionForm
          name="the chosen findings"
          marked
          busy={busy}
          submitLabel="Mark as false positive"
          onCancel={() => setForm(null)}
          onSave={(reason) =>
            void apply(
              { disposition: reason === null ? null : { disposition: 'false_positive', reason } },
              reason === null ? 'False positive withdrawn' : 'Marked as false positive',
            )
          }
        />
      ) : null}
    </fieldset>
  );
}
