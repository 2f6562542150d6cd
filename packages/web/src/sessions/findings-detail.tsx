import { type FindingDetailResponse, type FindingRow, httpUrl, sessionHref } from '@svc/protocol';
import { useState } from 'preact/hooks';
import type { SessionRef } from '../api/sessions.ts';
import { formatDate, label, NO_VALUE } from '../ui/format.ts';
import { KevBadge, SeverityBadge } from '../ui/severity.tsx';
import { useData } from '../ui/use-load.ts';
import { getFinding } from '../api/session-findings.ts';
import {
  CHANGE_MARKS,
  dispositionText,
  epssText,
  exceptionText,
  hasRecord,
  historyText,
  kevText,
  nameOf,
  sourceText,
  targetOf,
  titleOf,
  where,
} from './findings-model.ts';
import type { Sender } from './findings-sender.ts';
import { DispositionForm } from './findings-triage.tsx';

function NoteForm(props: { finding: FindingRow; sender: Sender }) {
  const f = props.finding;
  const [note, setNote] = useState(f.note);
  const target = targetOf(f);
  if (target === null) return <p class="muted">Not tracked: this finding has no remediation entry to hold a note.</p>;
  return (
    <form
      class="stack small"
      onSubmit={(e) => {
        e.preventDefault();
        void props.sender.send({ ...target, note }, () => `Note saved for “${titleOf(f)}” on ${where(f)}.`);
      }}
    >
      <label>
        Note
        <textarea
          aria-label={`Note for ${nameOf(f)}`}
          rows={3}
          maxLength={2000}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
      </label>
      <div>
        <button type="submit" disabled={props.sender.busy || note === f.note}>
          Save note
        </button>
      </div>
    </form>
  );
}

/** Mark the finding as a false positive with a reason, or withdraw the mark (by fingerprint). */
function FalsePositive(props: { finding: FindingRow; sender: Sender }) {
  const f = props.finding;
  if (!hasRecord(f)) return <p class="muted">Not tracked: only a finding with a fingerprint can be marked.</p>;
  const marked = f.disposition != null;
  const name = nameOf(f);
  return (
    <>
      {marked ? <p data-disposition>{dispositionText(f)}</p> : null}
      <DispositionForm
        key={f.disposition?.at ?? 'none'}
        name={name}
        marked={marked}
        busy={props.sender.busy}
        submitLabel={marked ? 'Change reason' : 'Mark as false positive'}
        onSave={(reason) =>
          void props.sender.send(
            {
              fingerprint: f.fingerprint,
              disposition: reason === null ? null : { disposition: 'false_positive', reason },
            },
            () =>
              reason === null
                ? `False positive withdrawn for “${titleOf(f)}” on ${where(f)}.`
                : `“${titleOf(f)}” on ${where(f)} marked as false positive.`,
          )
        }
      />
    </>
  );
}

function Body(props: { d: FindingDetailResponse; sender: Sender; clientId: string | null }) {
  const { d } = props;
  const refs = d.references;
  const mark = d.change ? CHANGE_MARKS[d.change] : null;
  const statusBy = sourceText(d.status_source);
  return (
    <>
      <dl class="facts">
        <dt>Severity</dt>
        <dd>
          <SeverityBadge severity={d.severity ?? undefined} /> {d.cvss === null ? '' : `CVSS ${d.cvss.toFixed(1)}`}
        </dd>
        {d.kev || d.epss !== null ? (
          <>
            <dt>Exploitation</dt>
            <dd>
              {d.kev ? (
                <>
                  <KevBadge title={kevText(d)} /> {kevText(d)}.{' '}
                </>
              ) : null}
              {epssText(d) ?? ''}
            </dd>
          </>
        ) : null}
        <dt>Where</dt>
        <dd>
          {where(d)}
          {d.hostname ? ` (${d.hostname})` : ''}
          {d.service ? `, ${d.service}` : ''}
        </dd>
        <dt>Rule</dt>
        <dd>{d.rule_id ?? NO_VALUE}</dd>
        {mark !== null ? (
          <>
            <dt>This scan</dt>
            <dd>{mark}</dd>
          </>
        ) : null}
        <dt>Status</dt>
        <dd>
          {d.status === null ? 'not tracked' : label(d.status)}
          {d.status_changed ? `, since ${formatDate(d.status_changed)}` : ''}
          {statusBy ? ` (${statusBy})` : ''}
        </dd>
        {d.due_date && d.status !== 'resolved' ? (
          <>
            <dt>Due</dt>
            <dd>
              {d.due_date}
              {d.overdue ? (
                <>
                  {' '}
                  <span class="badge overdue">Overdue</span>
                </>
              ) : null}
            </dd>
          </>
        ) : null}
        <dt>First seen</dt>
        <dd>{d.first_seen ?? NO_VALUE}</dd>
        {d.last_seen ? (
          <>
            <dt>Last seen</dt>
            <dd>{d.last_seen}</dd>
          </>
        ) : null}
        {d.resolved_at ? (
          <>
            <dt>Resolved</dt>
            <dd>{formatDate(d.resolved_at)}</dd>
          </>
        ) : null}
        {d.reopened_at ? (
          <>
            <dt>Reopened</dt>
            <dd>{formatDate(d.reopened_at)}</dd>
          </>
        ) : null}
        <dt>Previous scan</dt>
        <dd>{d.prior_status === null ? NO_VALUE : label(d.prior_status)}</dd>
        <dt>Risk exception</dt>
        <dd>
          {exceptionText(d)}
          {d.exception?.reason ? `: ${d.exception.reason}` : ''}
        </dd>
        <dt>False positive</dt>
        <dd>{d.disposition ? d.disposition.reason : 'no'}</dd>
      </dl>
      {d.description ? (
        <>
          <h4>Description</h4>
          <p>{d.description}</p>
        </>
      ) : null}
      <h4>Evidence</h4>
      {d.evidence ? <pre class="finding-evidence">{d.evidence}</pre> : <p class="muted">None recorded.</p>}
      {d.remediation ? (
        <>
          <h4>How to fix</h4>
          <p>{d.remediation}</p>
        </>
      ) : null}
      <h4>References</h4>
      {refs.cve.length + refs.cwe.length + refs.urls.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="finding-references">
          {refs.cve.map((c) => (
            <li key={c}>
              <a href={`https://nvd.nist.gov/vuln/detail/${c}`} rel="noopener noreferrer" target="_blank">
                {c}
              </a>
            </li>
          ))}
          {refs.cwe.map((c) => (
            <li key={c}>{c}</li>
          ))}
          {refs.urls.map((u) => {
            // A link only for http(s) (the protocol's rule, as the report and the exports).
            const href = httpUrl(u);
            return (
              <li key={u}>
                {href === null ? (
                  u
                ) : (
                  <a href={href} rel="noopener noreferrer" target="_blank">
                    {u}
                  </a>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <h4>History</h4>
      {d.history.length === 0 ? (
        <p class="muted">No changes in the portal yet.</p>
      ) : (
        <ol class="finding-history">
          {d.history.map((h, i) => (
            <li key={`${h.at}-${i}`} data-field={h.field}>
              {formatDate(h.at)}, {h.actor}: {historyText(h)}
            </li>
          ))}
        </ol>
      )}
      {d.seen_in && d.seen_in.length > 0 ? (
        <>
          <h4>Seen in</h4>
          <ul class="finding-seen-in">
            {d.seen_in.map((id) => (
              <li key={id}>
                <a href={sessionHref(id, props.clientId)}>{id}</a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h4>Note</h4>
      <NoteForm key={d.note} finding={d} sender={props.sender} />
      <h4>False positive</h4>
      <FalsePositive finding={d} sender={props.sender} />
    </>
  );
}

/** One finding's evidence, references, history and note, loaded when opened; reloaded when its row changes. */
export function FindingDetailPanel(props: {
  ref_: SessionRef;
  index: number;
  /** The row as the table shows it; a change reloads the detail. */
  version: FindingRow | undefined;
  /** The session's client, for the links to the sessions it was seen in. */
  clientId: string | null;
  sender: Sender;
  onClose: () => void;
}) {
  const detail = useData(
    () => getFinding(props.ref_, props.index),
    [props.ref_.session, props.ref_.clientId, props.index, JSON.stringify(props.version ?? null)],
  );
  const d = detail.data;
  return (
    <aside class="finding-detail panel" aria-labelledby="finding-detail-h">
      <div class="finding-detail-head">
        <h3 id="finding-detail-h">{d === null ? 'Finding' : titleOf(d)}</h3>
        <button type="button" class="button-quiet" onClick={props.onClose}>
          Close details
        </button>
      </div>
      {detail.error !== null ? (
        <p class="alert alert-error" role="alert">
          {detail.error}
        </p>
      ) : null}
      {d === null ? <p aria-busy="true">Loading…</p> : <Body d={d} sender={props.sender} clientId={props.clientId} />}
    </aside>
  );
}
