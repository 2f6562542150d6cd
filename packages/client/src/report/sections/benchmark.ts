import type { SessionFile } from '@svc/protocol';
import { type Html, html } from '../html.ts';
import { num, section, table, when } from './parts.ts';

const METRICS = [
  ['risk_score', 'Risk score'],
  ['findings_per_host', 'Findings per host'],
  ['critical_high_ratio', 'Critical and high share'],
] as const;

/** How this target compares with the portal's other sessions, when the benchmark was fetched. */
export function benchmarkSection(doc: SessionFile): Html | null {
  const b = doc.benchmark;
  if (b === undefined || b === null || b.metrics === undefined) return null;
  const rows = METRICS.map(([key, label]) => {
    const m = b.metrics?.[key];
    return m === undefined
      ? null
      : html`<tr><td>${label}</td>${num(m.value ?? null)}${num(m.percentile ?? null)}<td>${m.label ?? ''}</td></tr>`;
  });
  return section(
    'benchmark',
    'Benchmark',
    html`<p class="muted">Compared with ${b.sample_size ?? 0} sessions (fetched ${when(b.fetched_at)}); a higher percentile is better.</p>${table(['Metric', { label: 'Value', num: true }, { label: 'Percentile', num: true }, ''], rows)}`,
  );
}
