import fs from 'node:fs/promises';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import { AREA_FAMILIES, type Scrape, scrape } from '@svc/test-support/metrics-scrape';

/**
 * deploy/grafana/svc-portal-dashboard.json and deploy/prometheus/svc-portal-alerts.yml name
 * only metrics a real portal exposes: every expression parses as PromQL, and every svc_ metric
 * it selects is a family in a scrape (a histogram's through its _bucket, _sum or _count).
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const DASHBOARD = path.join(ROOT, 'deploy/grafana/svc-portal-dashboard.json');
const ALERTS = path.join(ROOT, 'deploy/prometheus/svc-portal-alerts.yml');
const TOKEN = 'catalog-token-0123456789abcdef0123456789';

/** Grafana's interval variables are not PromQL; any duration stands in for them. */
const promql = (expr: string) => expr.replaceAll(/\$__(rate_)?interval\b|\$__range\b/g, '5m');

/** The metric names an expression selects; throws when it is not valid PromQL. */
function selectedMetrics(expr: string): string[] {
  const text = promql(expr);
  const names: string[] = [];
  let error: number | null = null;
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector')
        names.push(text.slice(node.from, node.to));
    },
  });
  if (error !== null) throw new Error(`not PromQL at ${error}: ${expr}`);
  return names;
}

/** Every string under a key named `expr` in a dashboard, however deeply its panels nest. */
function exprsOf(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) exprsOf(v, out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (k === 'expr' && typeof v === 'string') out.push(v);
      else exprsOf(v, out);
    }
  return out;
}

/** `label_values(<selector>, <label>)` of the dashboard's variables: the selector is PromQL. */
function variableSelectors(dashboard: { templating: { list: { query?: unknown }[] } }): string[] {
  return dashboard.templating.list.flatMap((v) => {
    const q = typeof v.query === 'string' ? v.query : (v.query as { query?: string } | undefined)?.query;
    const m = /^label_values\((.+),\s*\w+\)$/.exec(q ?? '');
    return m ? [m[1] as string] : [];
  });
}

function missingFrom(s: Scrape, names: string[]): string[] {
  const exposed = (name: string) => {
    if (s.families.has(name)) return true;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    return base !== name && ['histogram', 'summary'].includes(s.families.get(base)?.type ?? '');
  };
  return [...new Set(names.filter((n) => n.startsWith('svc_') && !exposed(n)))].sort();
}

/** The families selected names belong to (a histogram's series by its base name). */
const familiesOf = (names: string[]) => new Set(names.map((n) => n.replace(/_(bucket|sum|count)$/, '')));

let portal: TestPortal;
let scraped: Scrape;
beforeAll(async () => {
  portal = await startTestPortal({ env: { SVC_METRICS_TOKEN: TOKEN } });
  scraped = await scrape(portal.url, TOKEN);
});
afterAll(() => portal?.close());

describe('the shipped dashboard and alert rules', () => {
  it('reads names out of PromQL, and reports one the portal does not expose', () => {
    expect(selectedMetrics('sum by (le) (rate(svc_a_bucket{job=~"$job"}[$__rate_interval])) / up')).toEqual([
      'svc_a_bucket',
      'up',
    ]);
    expect(() => selectedMetrics('rate(svc_http_requests_total[5m]')).toThrow(/not PromQL/);
    expect(
      missingFrom(scraped, [
        'svc_http_requests_total',
        'svc_http_request_duration_seconds_count',
        'svc_no_such_total',
        'up',
      ]),
    ).toEqual(['svc_no_such_total']);
  });

  it('the Grafana dashboard selects only metrics a scrape has', async () => {
    expect(scraped.status).toBe(200);
    const dashboard = JSON.parse(await fs.readFile(DASHBOARD, 'utf8'));
    const exprs = [...exprsOf(dashboard.panels), ...variableSelectors(dashboard)];
    expect(exprs.length).toBeGreaterThan(20);
    const names = exprs.flatMap(selectedMetrics);
    expect(missingFrom(scraped, names)).toEqual([]);
    // The dashboard shows every area the metrics cover.
    expect(AREA_FAMILIES.filter((f) => !familiesOf(names).has(f))).toEqual([]);
  });

  it('the Prometheus alert rules select only metrics a scrape has', async () => {
    const rules = YAML.parse(await fs.readFile(ALERTS, 'utf8')) as {
      groups: { name: string; rules: { alert: string; expr: string; labels: { severity: string } }[] }[];
    };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThanOrEqual(10);
    for (const rule of all) {
      expect(rule.alert).toMatch(/^SvcPortal[A-Za-z0-9]+$/);
      expect(['warning', 'critical']).toContain(rule.labels.severity);
    }
    const names = all.flatMap((r) => selectedMetrics(r.expr));
    expect(missingFrom(scraped, names)).toEqual([]);
    // 5xx rate, heartbeats, webhook failures and queue, pool waits, event-loop lag, embedded restarts.
    const alerted = familiesOf(names);
    for (const family of [
      'svc_http_requests_total',
      'svc_heartbeats_total',
      'svc_webhook_deliveries_total',
      'svc_webhook_queue_depth',
      'svc_db_pool_waiting_clients',
      'svc_nodejs_eventloop_lag_p99_seconds',
      'svc_embedded_db_restarts_total',
      // The blob store, uploads refused for room, stuck deliveries, the last backup's age.
      'svc_blob_store_failures_total',
      'svc_uploads_refused_total',
      'svc_webhook_oldest_pending_delivery_age_seconds',
      'svc_backup_last_success_timestamp_seconds',
      'svc_backup_max_age_seconds',
    ])
      expect(alerted.has(family), family).toBe(true);
    expect(new Set(all.map((r) => r.alert)).size).toBe(all.length);
  });
});
