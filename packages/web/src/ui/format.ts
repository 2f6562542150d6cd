/**
 * The console's one date format: `YYYY-MM-DD HH:MM UTC`, the same reading for every viewer
 * whatever the browser's zone. No date, or one that does not parse, is the console's "no
 * value" mark, the en dash.
 */
export function formatDate(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '–';
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * The console's one way to write a count: thousands grouped (`10,000`), the same for every
 * viewer whatever the browser's language, like the dates. No count is the en dash.
 */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? '–' : COUNT.format(n);
}

/** A count with its noun: `1 finding`, `10,000 findings`. */
export const countOf = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

const PERCENT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** `45.2%`: at most one decimal, the same for every viewer. */
export const formatPercent = (percent: number): string => `${PERCENT.format(percent)}%`;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatScore(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : String(Math.round(n * 10) / 10);
}

/** `in_progress` → `in progress`. */
export function label(value: string): string {
  return value.replace(/_/g, ' ');
}

const AGE_UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** How long ago `iso` was, in words ("5 minutes ago", "just now"); `now` for tests. */
export function formatAge(iso: string, now = Date.now()): string {
  const ms = now - new Date(iso).getTime();
  if (Number.isNaN(ms)) return '–';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  for (const [unit, size] of AGE_UNITS) if (Math.abs(ms) >= size) return format.format(-Math.floor(ms / size), unit);
  return 'just now';
}
