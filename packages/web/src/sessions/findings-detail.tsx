import type { FindingDetailResponse, FindingRow } from '@svc/protocol';
import { useState } from 'preact/hooks';
import type { SessionRef } from '../api/sessions.ts';
import { formatDate, label } from '../ui/format.ts';
import { KevBadge, SeverityBadge } from '../ui/severity.tsx';
import { useData } from '../ui/use-load.ts';
import { getFinding } from './findings-api.ts';
import { epssText, exceptionText, kevText, nameOf, targetOf, titleOf, where } from './findings-model.ts';
import type { Sender } from './findings-sender.ts';

const isWebLink = (u: string) => /^https?:\/\//i.test(u);

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

function Body(props: { d: FindingDetailResponse; sender: Sender }) {
  const { d } = props;
  const refs = d.references;
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
        <dd>{d.rule_id ?? '–'}</dd>
        <dt>Status</dt>
        <dd>
          {d.status === null ? 'not tracked' : label(d.status)}
          {d.status_changed ? `, since ${formatDate(d.status_changed)}` : ''}
        </dd>
        <dt>First seen</dt>
        <dd>{d.first_seen ?? '–'}</dd>
        <dt>Previous scan</dt>
        <dd>{d.prior_status === null ? '–' : label(d.prior_status)}</dd>
        <dt>Risk exception</dt>
        <dd>
          {exceptionText(d)}
          {d.exception?.reason ? `: ${d.exception.reason}` : ''}
        </dd>
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
          {refs.urls.map((u) => (
            <li key={u}>
              {isWebLink(u) ? (
                <a href={u} rel="noopener noreferrer" target="_blank">
                  {u}
                </a>
              ) : (
                u
              )}
            </li>
          ))}
        </ul>
      )}
      <h4>History</h4>
      {d.history.length === 0 ? (
        <p class="muted">No changes in the portal yet.</p>
      ) : (
        <ol class="finding-history">
          {d.history.map((h, i) => (
            <li key={`${h.at}-${i}`}>
              {formatDate(h.at)}, {h.actor}:{' '}
              {[
                h.status === null ? null : `status ${label(h.status)}`,
                h.exception === null
                  ? null
                  : `exception ${h.exception.action}${h.exception.expiry ? ` until ${h.exception.expiry}` : ''}${
                      h.exception.reason ? ` (${h.exception.reason})` : ''
                    }`,
              ]
                .filter((x) => x !== null)
                .join(', ') || 'note'}
            </li>
          ))}
        </ol>
      )}
      <h4>Note</h4>
      <NoteForm key={d.note} finding={d} sender={props.sender} />
    </>
  );
}

/** One finding's evidence, references, history and note, loaded when opened; reloaded when its row changes. */
export function FindingDetailPanel(props: {
  ref_: SessionRef;
  index: number;
  /** The row as the table shows it; a change reloads the detail. */
  version: FindingRow | undefined;
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
      {d === null ? <p aria-busy="true">Loading…</p> : <Body d={d} sender={props.sender} />}
    </aside>
  );
}
