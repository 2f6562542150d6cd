import { httpUrl, type Severity } from '@svc/protocol';
import { type Html, html, type Slot } from '../html.ts';

/** Small pieces the sections share. */

export const SEVERITY_LABELS: Readonly<Record<Severity, string>> = {
  critical: 'Critical',
  high: 'High',
  medium: 'Medium',
  low: 'Low',
  info: 'Info',
};

export const severityBadge = (s: Severity): Html => html`<span class="sev sev-${s}">${SEVERITY_LABELS[s]}</span>`;

/** A finding naming a CVE in CISA's Known Exploited Vulnerabilities catalogue. */
export const kevBadge = (dateAdded?: string): Html =>
  html`<span class="kev" title="${`In CISA's Known Exploited Vulnerabilities catalogue${dateAdded === undefined ? '' : ` since ${dateAdded}`}`}">Known exploited</span>`;

/** EPSS as the report writes it: `EPSS 42.0 % (97th percentile)`. */
export function epssText(epss: number, percentile?: number): string {
  const pct = percentile === undefined ? '' : ` (${ordinal(Math.round(percentile * 100))} percentile)`;
  return `EPSS ${(epss * 100).toFixed(1)} %${pct}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

export function gradeBadge(grade: string | null): Html {
  const g = grade !== null && /^[A-F]$/.test(grade) ? grade : null;
  return g === null ? html`<span class="grade">-</span>` : html`<span class="grade grade-${g}">${g}</span>`;
}

/** An ISO timestamp shown as `YYYY-MM-DD HH:MM UTC`; anything else as given. */
export function when(iso: string | null | undefined): string {
  if (typeof iso !== 'string' || iso === '') return '-';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(iso)) return iso;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function section(id: string, title: string, body: Slot): Html {
  return html`<section id="${id}"><h2>${title}</h2>${body}</section>`;
}

export function table(head: readonly (string | { label: string; num: true })[], rows: readonly Slot[]): Html {
  const th = head.map((h) => (typeof h === 'string' ? html`<th>${h}</th>` : html`<th class="num">${h.label}</th>`));
  return html`<table><thead><tr>${th}</tr></thead><tbody>${rows}</tbody></table>`;
}

export const num = (v: number | string | null | undefined): Html => html`<td class="num">${v ?? '-'}</td>`;

/** Host lists can be long: the first few, then a count. */
export function someOf(items: readonly string[], shown = 8): string {
  if (items.length <= shown) return items.join(', ');
  return `${items.slice(0, shown).join(', ')} and ${items.length - shown} more`;
}

/** A reference link only for http(s) URLs (the protocol's httpUrl, as the exports); anything else stays text. */
export function referenceLink(url: string): Html {
  const href = httpUrl(url);
  return href === null ? html`${url}` : html`<a href="${href}" rel="noopener noreferrer" target="_blank">${url}</a>`;
}
