import { SESSION_STATUSES, type SessionStatus } from '@svc/protocol';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { type SessionDetail, type SessionRef, updateStatus } from '../api/sessions.ts';
import { formatDate, label } from '../ui/format.ts';

/** A labelled choice of review status (the session view's form, the list's bulk change). */
export function StatusSelect(props: {
  label: string;
  class?: string;
  value: SessionStatus;
  onChange: (status: SessionStatus) => void;
}) {
  return (
    <label class={props.class}>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as SessionStatus)}>
        {SESSION_STATUSES.map((s) => (
          <option key={s} value={s}>
            {label(s)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Review status: change it with a note, and the history of changes and notes. */
export function ReviewStatus(props: { detail: SessionDetail; ref_: SessionRef; onChanged: () => void }) {
  const current = props.detail.session.status;
  const [status, setStatus] = useState<SessionStatus>(current);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await updateStatus(props.ref_, status, note.trim() === '' ? undefined : note.trim());
      setNote('');
      props.onChanged();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <form class="stack status-form" onSubmit={submit}>
        {error !== null ? (
          <p class="alert alert-error" role="alert">
            {error}
          </p>
        ) : null}
        <StatusSelect label="Status" value={status} onChange={setStatus} />
        <label>
          Note
          <textarea rows={2} maxLength={10_000} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
        </label>
        <div>
          <button type="submit" disabled={busy || (status === current && note.trim() === '')}>
            Save status
          </button>
        </div>
      </form>
      <h3>History</h3>
      {props.detail.status_history.length === 0 ? (
        <p class="muted">No status changes yet.</p>
      ) : (
        <ol class="history">
          {props.detail.status_history.map((h, i) => (
            <li key={`${h.changed_at}-${i}`}>
              <span class="nowrap">{formatDate(h.changed_at)}</span>:{' '}
              {h.from_status === null ? '' : `${label(h.from_status)} → `}
              <strong>{label(h.to_status)}</strong> by {h.changed_by}
              {h.note ? <div class="note">{h.note}</div> : null}
            </li>
          ))}
        </ol>
      )}
      {props.detail.notes.length > 0 ? (
        <>
          <h3>Notes</h3>
          <ul class="history">
            {props.detail.notes.map((n, i) => (
              <li key={`${n.created_at}-${i}`}>
                <span class="nowrap">{formatDate(n.created_at)}</span>, {n.author}: <div class="note">{n.note}</div>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
