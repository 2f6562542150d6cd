import { type BySeverity, SEVERITIES, type Severity } from '@svc/protocol';
import { formatCount } from './format.ts';

/** A finding naming a CVE in CISA's Known Exploited Vulnerabilities catalogue. */
export function KevBadge(props: { title: string }) {
  return (
    <span class="badge kev" title={props.title}>
      KEV
    </span>
  );
}

export function SeverityBadge(props: { severity: Severity | string | undefined }) {
  const s = props.severity ?? 'info';
  return <span class={`badge sev-${s}`}>{s}</span>;
}

/** Counts per severity as a stacked bar with the numbers written out (colour is never the only cue). */
export function SeverityBreakdown(props: { counts: BySeverity }) {
  const total = SEVERITIES.reduce((n, s) => n + props.counts[s], 0);
  return (
    <div class="severity">
      <div class="severity-bar" aria-hidden="true">
        {total === 0
          ? null
          : SEVERITIES.filter((s) => props.counts[s] > 0).map((s) => (
              <span key={s} class={`sev-fill-${s}`} style={{ flexGrow: props.counts[s] }} />
            ))}
      </div>
      <ul class="severity-list">
        {SEVERITIES.map((s) => (
          <li key={s}>
            <SeverityBadge severity={s} /> {formatCount(props.counts[s])}
          </li>
        ))}
      </ul>
    </div>
  );
}
