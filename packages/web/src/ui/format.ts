/** The console's one mark for "no value", in tables and details alike. */
export const NO_VALUE = '—';

/**
 * The console's one date format: `YYYY-MM-DD HH:MM UTC`, the same reading for every viewer
 * whatever the browser's zone. No date, or one that does not parse, is NO_VALUE.
 */
export function formatDate(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return NO_VALUE;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return NO_VALUE;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/**
 * The console's one way to write a count: thousands grouped (`10,000`), the same for every
 * viewer whatever the browser's language, like the dates. No count is NO_VALUE.
 */
export function formatCount(n: number | null | undefined): string {
  return n === null || n === undefined || !Number.isFinite(n) ? NO_VALUE : COUNT.format(n);
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
  return n === null || n === undefined ? NO_VALUE : String(Math.round(n * 10) / 10);
}

/** `in_progress` → `in progress`. */
export function label(value: string): string {
  return value.replace(/_/g, ' ');
}

/** A duration in the two largest units: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(totalSeconds: number): string {
  if (!Number.isFinite(totalSeconds) || totalSeconds < 0) return NO_VALUE;
  const s = Math.floor(totalSeconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** How long ago, from the seconds elapsed: `45 s ago`, `3 h 5 min ago`. */
export function formatAge(seconds: number): string {
  const duration = formatDuration(seconds);
  return duration === NO_VALUE ? NO_VALUE : `${duration} ago`;
}

/**
 * Seconds from `iso` to `now`, for formatAge; NaN when `iso` does not parse. A time a little
 * ahead of the browser's clock (the portal's clock differs) counts as now.
 */
export function secondsSince(iso: string, now = Date.now()): number {
  return Math.max(0, (now - Date.parse(iso)) / 1000);
}
