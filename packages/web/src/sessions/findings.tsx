import {
  type Finding,
  REMEDIATION_STATUSES,
  type RemediationStatus,
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

/** Remediation status per title: updates match by title (SPEC), so one status shows per title. */
function statusesOf(file: SessionFile): Map<string, RemediationStatus> {
  const map = new Map<string, RemediationStatus>();
  for (const e of [...(file.remediation ?? []), ...(file.remediation_resolved ?? [])] as Entry[])
    if (e.title !== undefined && e.status !== undefined && !map.has(e.title))
      map.set(e.title, e.status as RemediationStatus);
  return map;
}

function where(f: Finding): string {
  const host = f.host ?? f.ip ?? '–';
  return f.port === undefined ? host : `${host}:${f.port}${f.protocol ? `/${f.protocol}` : ''}`;
}

/** The session's findings, most severe first, with their remediation status editable in place. */
export function Findings(props: { ref_: SessionRef; file: SessionFile; onChanged: () => void }) {
  const findings = [...(props.file.findings ?? [])].sort((a, b) => severityRank(a.severity) - severityRank(b.severity));
  const [statuses, setStatuses] = useState(() => statusesOf(props.file));
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const { page, controls } = usePages(findings, 'Findings', 25);

  async function change(title: string, status: RemediationStatus) {
    setBusy(title);
    setMessage(null);
    try {
      const r = await updateRemediation(props.ref_, [{ title, status }]);
      setStatuses(new Map(statuses).set(title, status));
      setMessage({ kind: 'ok', text: `“${title}” is now ${label(status)} (${r.changed} changed).` });
      props.onChanged();
    } catch (err) {
      setMessage({
        kind: 'error',
        text: err instanceof ApiError && err.status === 409 ? CONFLICT : describeError(err),
      });
    } finally {
      setBusy(null);
    }
  }

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
      <DataTable label="Findings" columns={['Severity', 'Finding', 'Where', 'Remediation']}>
        {page.items.map((f, i) => {
          const title = f.title ?? f.rule_id ?? '(untitled)';
          const status = statuses.get(title);
          return (
            <tr key={f.id ?? `${title}-${i}`}>
              <td>
                <SeverityBadge severity={f.severity} />
              </td>
              <td>
                <strong>{title}</strong>
                {(f.remediation ?? f.solution) ? <div class="muted small">{f.remediation ?? f.solution}</div> : null}
              </td>
              <td class="nowrap">{where(f)}</td>
              <td>
                {status === undefined ? (
                  <span class="muted">not tracked</span>
                ) : (
                  <select
                    aria-label={`Remediation status of ${title} on ${where(f)}`}
                    value={status}
                    disabled={busy !== null}
                    onChange={(e) => void change(title, e.currentTarget.value as RemediationStatus)}
                  >
                    {REMEDIATION_STATUSES.map((s) => (
                      <option key={s} value={s}>
                        {label(s)}
                      </option>
                    ))}
                  </select>
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
