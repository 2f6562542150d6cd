/**
 * Reads GET /metrics as Prometheus does. The parser is strict and small on purpose: the npm
 * parser we tried (parse-prometheus-text-format) merges the series of a labelled histogram
 * into one, and these tests read histograms by label. Every line must be a comment, a
 * `# HELP`/`# TYPE` of a family, or a sample of the family declared last; anything else throws.
 */

/** One family per area GET /metrics covers (requests, agents, webhooks, uploads, pool, event loop, embedded database, blob store, backups). */
export const AREA_FAMILIES = [
  'svc_http_requests_total',
  'svc_http_request_duration_seconds',
  'svc_heartbeats_total',
  'svc_agent_commands',
  'svc_webhook_deliveries_total',
  'svc_webhook_queue_depth',
  'svc_upload_bytes_total',
  'svc_db_pool_connections',
  'svc_db_pool_waiting_clients',
  'svc_db_pool_acquire_seconds',
  'svc_nodejs_eventloop_lag_p99_seconds',
  'svc_embedded_db_restarts_total',
  'svc_blob_store_failures_total',
  'svc_uploads_refused_total',
  'svc_webhook_oldest_pending_delivery_age_seconds',
  'svc_backup_last_success_timestamp_seconds',
  'svc_backup_max_age_seconds',
];

export interface Sample {
  /** The series name as written (a histogram's `_bucket`, `_sum` and `_count` included). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  samples: Sample[];
}

export interface Scrape {
  status: number;
  contentType: string | null;
  text: string;
  /** The families by name; empty unless the answer was 200. */
  families: Map<string, Family>;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['_sum', '_count'] };

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (m === null) throw new Error(`bad labels in: ${line}`);
    labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line);
    if (meta !== null) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      current = families.get(name) ?? { name, help: '', type: 'untyped', samples: [] };
      families.set(name, current);
      if (kind === 'HELP') current.help = rest;
      else current.type = rest;
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const [, name, labelText, raw] = m as unknown as [string, string, string | undefined, string];
    const family = current;
    const allowed = family === null ? [] : ['', ...(SUFFIXES[family.type] ?? [])].map((s) => family.name + s);
    if (family === null || !allowed.includes(name)) throw new Error(`sample outside its family: ${line}`);
    // Prometheus reads values with Go's ParseFloat: NaN in any case (prom-client writes `Nan`), ±Inf.
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw new Error(`bad value in: ${line}`);
    family.samples.push({ name, labels: labelsOf(labelText ?? '', line), value });
  }
  return families;
}

/** GET <base>/metrics as a scraper does (with `token` as its bearer token), parsed. */
export async function scrape(base: string, token?: string): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    text,
    families: res.status === 200 ? parseExposition(text) : new Map(),
  };
}

const matches = (have: Record<string, string>, want: Record<string, string>) =>
  Object.entries(want).every(([k, v]) => have[k] === v);

/** The value of the series `name` with these labels (0 when there is none yet). */
export function sampleValue(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = s.families.get(name.replace(/_(bucket|sum|count)$/, '')) ?? s.families.get(name);
  return family?.samples.find((x) => x.name === name && matches(x.labels, labels))?.value ?? 0;
}

/** A histogram's observation count for the series with these labels (0 when there is none yet). */
export const histogramCount = (s: Scrape, name: string, labels: Record<string, string> = {}) =>
  sampleValue(s, `${name}_count`, labels);
