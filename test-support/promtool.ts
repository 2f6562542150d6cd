import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import type { Scrape } from './metrics-scrape.ts';

/**
 * Makes the shipped alert rules fire from what a real portal exposed (docs/testing.md, "Alerts
 * that fire"). A test causes the fault in a real portal and scrapes GET /metrics before and
 * after; those scrapes become input series of `promtool test rules` (Debian's prometheus
 * package, scripts/setup-system.sh) on a timeline of one sample a minute, and promtool
 * evaluates the real rules file over it, `for:` clauses included. Prometheus itself is not run:
 * promtool's evaluator is Prometheus's, and a real scrape loop would make a test wait out the
 * rules' 5 to 15 minute windows.
 *
 * Each scrape stands for a phase of the timeline, in order. How a family's values spread over
 * its phase is its shape:
 * - counter: the increase since the previous phase's scrape recurs every minute of the phase
 *   (the fault goes on as observed; no increase, the counter stays flat);
 * - gauge: the scraped value holds;
 * - age: a waiting thing's age, growing 60 s a minute from the scraped value (0 stays 0);
 * - timestamp: Unix seconds, moved onto promtool's clock (which starts at 0) by the distance
 *   between the scrape's moment and its phase's start, so `time() - x` at the phase's start is
 *   the age it had when scraped, and grows from there (0, "never", becomes an age of decades
 *   as it is in Prometheus).
 * Families not named are left out of the input.
 */

export const PROMTOOL = '/usr/bin/promtool';
export const ALERT_RULES = path.resolve(import.meta.dirname, '../deploy/prometheus/svc-portal-alerts.yml');
/** The labels Prometheus adds to every scraped series; the rules select on `job`. */
const TARGET = { job: 'svc-portal', instance: 'portal-1:8080' };

export type Shape = 'counter' | 'gauge' | 'age' | 'timestamp';

export interface Phase {
  scrape: Scrape;
  /** When the scrape was taken (for timestamp-shaped families). */
  at: Date;
  minutes: number;
}

interface Series {
  name: string;
  labels: Record<string, string>;
  /** Per phase, the sample's value, or undefined when that scrape lacked it. */
  scraped: (number | undefined)[];
}

const escapeLabel = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
const selector = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',')}}`;

function collect(phases: Phase[], shapes: Record<string, Shape>): Series[] {
  const byKey = new Map<string, Series>();
  phases.forEach((phase, i) => {
    for (const family of Object.keys(shapes)) {
      for (const sample of phase.scrape.families.get(family)?.samples ?? []) {
        const labels = { ...sample.labels, ...TARGET };
        const key = selector(sample.name, labels);
        const series = byKey.get(key) ?? { name: sample.name, labels, scraped: phases.map(() => undefined) };
        series.scraped[i] = sample.value;
        byKey.set(key, series);
      }
    }
  });
  return [...byKey.values()];
}

/** One value per minute over every phase ('_' where its scrape lacked the series). */
function valuesOf(series: Series, shape: Shape, phases: Phase[]): string {
  const out: string[] = [];
  let start = 0;
  let counter = 0;
  let previous = 0;
  phases.forEach((phase, i) => {
    const v = series.scraped[i];
    for (let m = 0; m < phase.minutes; m++) {
      if (v === undefined) {
        out.push('_');
        continue;
      }
      if (shape === 'counter') {
        counter = i === 0 ? v : counter + (v - previous);
        out.push(String(counter));
      } else if (shape === 'age') out.push(String(v === 0 ? 0 : v + 60 * m));
      else if (shape === 'timestamp') out.push(String(v - phase.at.getTime() / 1000 + start * 60));
      else out.push(String(v));
    }
    if (v !== undefined) previous = v;
    start += phase.minutes;
  });
  return out.join(' ');
}

/** `input_series` for promtool: the named families of the scrapes, on the phases' timeline. */
export function inputSeries(phases: Phase[], shapes: Record<string, Shape>): { series: string; values: string }[] {
  return collect(phases, shapes).map((s) => ({
    series: selector(s.name, s.labels),
    values: valuesOf(s, shapes[s.name.replace(/_(bucket|sum|count)$/, '')] ?? shapes[s.name] ?? 'gauge', phases),
  }));
}

export interface FiringCheck {
  phases: Phase[];
  shapes: Record<string, Shape>;
  /** The alert whose firing instances are compared. */
  alert: string;
  /** The labels each firing instance is counted by (besides alertname and severity). */
  by?: string[];
  /** The firing instances expected at the end of the timeline; [] for none. */
  firing: Record<string, string>[];
}

/**
 * Runs `promtool test rules` with the shipped rules over the scrapes and resolves when, at the
 * timeline's last minute, exactly `firing` instances of `alert` fire; otherwise rejects with
 * promtool's report (what it got and what was expected).
 */
export async function expectFiring(check: FiringCheck): Promise<void> {
  const minutes = check.phases.reduce((n, p) => n + p.minutes, 0);
  const by = ['alertname', 'severity', ...(check.by ?? [])];
  const test = {
    rule_files: [ALERT_RULES],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: inputSeries(check.phases, check.shapes),
        promql_expr_test: [
          {
            expr: `count by (${by.join(', ')}) (ALERTS{alertname="${check.alert}", alertstate="firing"})`,
            eval_time: `${minutes - 1}m`,
            exp_samples: check.firing.map((labels) => ({
              labels: selector('', { alertname: check.alert, ...labels }),
              value: 1,
            })),
          },
        ],
      },
    ],
  };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-promtool-'));
  const file = path.join(dir, 'test.yml');
  try {
    await fs.writeFile(file, YAML.stringify(test));
    await promisify(execFile)(PROMTOOL, ['test', 'rules', file], { timeout: 60_000 }).catch((err) => {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`promtool: ${check.alert} did not fire as expected\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
    });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
