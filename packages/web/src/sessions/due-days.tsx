import { type DueDays, SEVERITIES } from '@svc/protocol';
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { describeError } from '../api/errors.ts';
import { LoadError, OutcomeMessage } from '../ui/alert.tsx';
import { useData } from '../ui/use-load.ts';
import { getDueDays, putDueDays } from '../api/remediation-settings.ts';
import { type DueDaysDraft as Draft, parseDueDays, SEVERITY_NAMES } from './findings-model.ts';

/**
 * "Remediation due dates" (docs/findings-of-record.md#due-dates): a client's days from first
 * sighting (or reopening) to due, per severity; empty means never due. Users who may change
 * remediation (`remediation:update`) edit them; others read them.
 */

const draftOf = (d: DueDays): Draft =>
  Object.fromEntries(SEVERITIES.map((s) => [s, d[s] === null ? '' : String(d[s])])) as Draft;

export function DueDaysSettings(props: { clientId: string; canEdit: boolean; onSaved: () => void }) {
  const [version, setVersion] = useState(0);
  const settings = useData(() => getDueDays(props.clientId), [props.clientId, version]);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const data = settings.data;
  if (data === null) return settings.error === null ? <p aria-busy="true">Loading…</p> : <LoadError load={settings} />;
  const shown = draft ?? draftOf(data.due_days);
  const whose = props.clientId === '' ? 'sessions without a client' : `client ${props.clientId}`;
  const origin = data.defaults ? 'The defaults' : `The settings of ${whose}`;

  if (!props.canEdit)
    return (
      <>
        <p>{origin}: days from a finding's first sighting (or its reopening) to its due date.</p>
        <dl class="facts" data-due-days>
          {SEVERITIES.map((s) => (
            <Fragment key={s}>
              <dt>{SEVERITY_NAMES[s]}</dt>
              <dd>{data.due_days[s] === null ? 'never due' : `${data.due_days[s]} days`}</dd>
            </Fragment>
          ))}
        </dl>
      </>
    );

  async function save(event: Event) {
    event.preventDefault();
    const parsed = parseDueDays(shown);
    if (!parsed.ok) return setMessage({ kind: 'error', text: parsed.message });
    setBusy(true);
    setMessage(null);
    try {
      await putDueDays(props.clientId, parsed.days);
      setDraft(null);
      setVersion((v) => v + 1);
      setMessage({ kind: 'ok', text: `Due dates saved for ${whose}: its findings are dated again.` });
      props.onSaved();
    } catch (err) {
      setMessage({ kind: 'error', text: describeError(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="due-days" aria-labelledby="due-days-h" onSubmit={save} noValidate>
      <p id="due-days-hint">
        {origin}. Days from a finding's first sighting (or its reopening) to its due date, per severity; leave a field
        empty for never due. A finding is overdue when it is open, not a false positive, without an exception in effect,
        and past its due date.
      </p>
      <div class="due-days-fields">
        {SEVERITIES.map((s) => (
          <label key={s}>
            <span>{SEVERITY_NAMES[s]} (days)</span>
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={3650}
              step={1}
              value={shown[s]}
              placeholder="never"
              aria-describedby="due-days-hint"
              onInput={(e) => setDraft({ ...shown, [s]: e.currentTarget.value })}
            />
          </label>
        ))}
      </div>
      <div>
        <button type="submit" disabled={busy || draft === null}>
          Save due dates
        </button>
      </div>
      <OutcomeMessage message={message} />
    </form>
  );
}
