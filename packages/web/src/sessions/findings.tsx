import {
  type Finding,
  findingFingerprint,
  REMEDIATION_STATUSES,
  type RemediationStatus,
  type RemediationUpdateItem,
  type SessionFile,
  SEVERITIES,
  type Severity,
} from '@svc/protocol';
import { useState } from 'preact/hooks';
import { ApiError, describeError } from '../api/errors.ts';
import { type SessionRef, updateRemediation } from '../api/sessions.ts';
import { label } from '../ui/format.ts';
import { usePages } from '../ui/pager.tsx';
import { SeverityBadge } from '../ui/severity.tsx';
import { DataTable } from '../ui/table-wrap.tsx';

type Entry = NonNullable<SessionFile['remediation']>[number];

const CONFLICT = 'This finding was changed by someone else. Reload the page to see the current status.';

function severityRank(s: string | undefined): number {
  const i = SEVERITIES.indexOf(s as Severity);
  return i === -1 ? SEVERITIES.length : i;
}

function where(f: Finding): string {
  const host = f.host ?? f.ip ?? '–';
  return f.port === undefined ? host : `${host}:${f.port}${f.protocol ? `/${f.protocol}` : ''}`;
}

/** A finding's fingerprint: the stored one, else computed the scanner's way; null without rule or host. */
function fingerprintOf(f: Finding): string | null {
  if (f.fingerprint !== undefined) return f.fingerprint;
  const host = f.host ?? f.ip;
  if (f.rule_id === undefined || host === undefined) return null;
  return findingFingerprint({ rule_id: f.rule_id, host, port: f.port ?? null, protocol: f.protocol ?? null });
}

/**
 * How a finding row is edited: by its fingerprint when a remediation entry carries it (or
 * names the finding by id), so only that host's entry changes; else by title, which changes
 * every entry of the title (older files without fingerprints).
 */
interface Target {
  entry: Entry;
  resolved: boolean;
  /** The update item's key. */
  by: { fingerprint: string } | { title: string };
  /** Entries a title update changes (1 by fingerprint). */
  reach: number;
}

function targetsOf(file: SessionFile): (f: Finding) => Target | null {
  const open = (file.remediation ?? []) as Entry[];
  const done = (file.remediation_resolved ?? []) as Entry[];
  const all = [
    ...open.map((entry) => ({ entry, resolved: false })),
    ...done.map((entry) => ({ entry, resolved: true })),
  ];
  return (f) => {
    const fp = fingerprintOf(f);
    const own = all.find(
      ({ entry }) =>
        (fp !== null && entry.fingerprint === fp) ||
        (entry.fingerprint === undefined && f.id !== undefined && entry.finding_id === f.id),
    );
    if (own !== undefined && fp !== null) return { ...own, by: { fingerprint: fp }, reach: 1 };
    const title = f.title ?? f.rule_id;
    if (title === undefined) return null;
    const same = all.filter(({ entry }) => entry.title === title);
    const first = same[0];
    return first === undefined ? null : { ...first, by: { title }, reach: same.length };
  };
}

function statusOf(t: Target): RemediationStatus {
  return t.resolved ? 'resolved' : ((t.entry.status as RemediationStatus | undefined) ?? 'new');
}

function exceptionText(e: Entry): string {
  if (e.exception_status !== 'accepted' && e.exception_status !== 'expired') return 'none';
  const state = e.exception_status === 'expired' || e.exception_expired ? 'expired' : 'accepted';
  return `${state} until ${e.exception_expiry ?? 'no expiry'}${e.exception_approver ? `, by ${e.exception_approver}` : ''}`;
}

/** Reason and expiry of one finding's exception; withdraw when it has one. */
function ExceptionForm(props: {
  name: string;
  entry: Entry;
  busy: boolean;
  onSave: (exception: { reason: string; expiry: string } | null) => void;
  onCancel: () => void;
}) {
  const [reason, setReason] = useState(props.entry.exception_reason ?? '');
  const [expiry, setExpiry] = useState(props.entry.exception_expiry ?? '');
  const has = props.entry.exception_status === 'accepted' || props.entry.exception_status === 'expired';
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
          Save exception
        </button>{' '}
        {has ? (
          <button type="button" disabled={props.busy} onClick={() => props.onSave(null)}>
            Withdraw exception
          </button>
        ) : null}{' '}
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/**
 * The session's findings, most severe first. Each row edits its own finding (by fingerprint):
 * remediation status and risk exception. A row whose entry has no fingerprint (an older file)
 * edits by title, and says how many entries that changes.
 */
export function Findings(props: { ref_: SessionRef; file: SessionFile; onChanged: () => void }) {
  const findings = [...(props.file.findings ?? [])].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  const targetOf = targetsOf(props.file);
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<string | null>(null);
  const { page, controls } = usePages(findings, 'Findings', 25);

  async function send(item: RemediationUpdateItem, done: (matched: number) => string) {
    setBusy(true);
    setMessage(null);
    try {
      const r = await updateRemediation(props.ref_, [item]);
      setMessage({ kind: 'ok', text: done(r.results[0]?.matched ?? 0) });
      setEditing(null);
      props.onChanged();
    } catch (err) {
      setMessage({
        kind: 'error',
        text: err instanceof ApiError && err.status === 409 ? CONFLICT : describeError(err),
      });
    } finally {
      setBusy(false);
    }
  }

  const onHosts = (t: Target, matched: number) =>
    'title' in t.by ? ` Changed by title: ${matched} ${matched === 1 ? 'entry' : 'entries'} of this title.` : '';

  if (findings.length === 0) return <p>No findings in this session.</p>;
  return (
    <>
      {message !== null ? (
        <p
          class={`alert ${message.kind === 'ok' ? 'alert-ok' : 'alert-error'}`}
          role={message.kind === 'ok' ? 'status' : 'alert'}
        >
          {message.text}
        </p>
      ) : null}
      <DataTable label="Findings" columns={['Severity', 'Finding', 'Where', 'Remediation', 'Risk exception']}>
        {page.items.map((f, i) => {
          const title = f.title ?? f.rule_id ?? '(untitled)';
          const t = targetOf(f);
          const name = `${title} on ${where(f)}`;
          const rowKey = f.id ?? `${title}-${i}`;
          return (
            <tr key={rowKey}>
              <td>
                <SeverityBadge severity={f.severity} />
              </td>
              <td>
                <strong>{title}</strong>
                {(f.remediation ?? f.solution) ? <div class="muted small">{f.remediation ?? f.solution}</div> : null}
              </td>
              <td class="nowrap">{where(f)}</td>
              <td>
                {t === null ? (
                  <span class="muted">not tracked</span>
                ) : (
                  <>
                    <select
                      aria-label={`Remediation status of ${name}`}
                      value={statusOf(t)}
                      disabled={busy}
                      onChange={(e) => {
                        const status = e.currentTarget.value as RemediationStatus;
                        void send(
                          { ...t.by, status },
                          (matched) => `“${title}” is now ${label(status)} on ${where(f)}.${onHosts(t, matched)}`,
                        );
                      }}
                    >
                      {REMEDIATION_STATUSES.map((s) => (
                        <option key={s} value={s}>
                          {label(s)}
                        </option>
                      ))}
                    </select>
                    {'title' in t.by && t.reach > 1 ? (
                      <div class="muted small">
                        Applies to all {t.reach} entries titled “{title}”
                      </div>
                    ) : null}
                  </>
                )}
              </td>
              <td>
                {t === null || t.resolved || !('fingerprint' in t.by) ? (
                  <span class="muted">{t === null ? '–' : exceptionText(t.entry)}</span>
                ) : editing === rowKey ? (
                  <ExceptionForm
                    name={name}
                    entry={t.entry}
                    busy={busy}
                    onCancel={() => setEditing(null)}
                    onSave={(exception) =>
                      void send({ fingerprint: (t.by as { fingerprint: string }).fingerprint, exception }, () =>
                        exception === null
                          ? `Exception withdrawn for “${title}” on ${where(f)}.`
                          : `Exception accepted for “${title}” on ${where(f)} until ${exception.expiry}.`,
                      )
                    }
                  />
                ) : (
                  <>
                    <span data-exception>{exceptionText(t.entry)}</span>{' '}
                    <button
                      type="button"
                      aria-label={`${t.entry.exception_status ? 'Change' : 'Add'} exception for ${name}`}
                      disabled={busy}
                      onClick={() => setEditing(rowKey)}
                    >
                      {t.entry.exception_status ? 'Change' : 'Add'}
                    </button>
                  </>
                )}
              </td>
            </tr>
          );
        })}
      </DataTable>
      {controls}
    </>
  );
}

/** Findings under a risk exception: who accepted it, why, and until when. */
export function Exceptions(props: { file: SessionFile }) {
  const entries = ([...(props.file.remediation ?? [])] as Entry[]).filter(
    (e) => e.exception_status !== null && e.exception_status !== undefined,
  );
  const { page, controls } = usePages(entries, 'Risk exceptions', 25);
  if (entries.length === 0) return <p>No risk exceptions.</p>;
  return (
    <>
      <DataTable label="Risk exceptions" columns={['Finding', 'Exception', 'Reason', 'Approved by', 'Expires']}>
        {page.items.map((e, i) => (
          <tr key={`${e.title}-${e.host}-${i}`}>
            <td>
              <SeverityBadge severity={e.severity} /> {e.title ?? '–'}
              {e.host ? <div class="muted small">{e.host}</div> : null}
            </td>
            <td>{e.exception_status === 'expired' || e.exception_expired ? 'expired' : 'accepted'}</td>
            <td>{e.exception_reason ?? '–'}</td>
            <td>{e.exception_approver ?? '–'}</td>
            <td class="nowrap">{e.exception_expiry ?? 'no expiry'}</td>
          </tr>
        ))}
      </DataTable>
      {controls}
    </>
  );
}
