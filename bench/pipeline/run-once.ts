/**
 * One measured run of the pipeline benchmark, in its own process so runs never share a heap:
 *
 *   node bench/pipeline/run-once.ts pipeline <input.json> <sessions-root>
 *   node bench/pipeline/run-once.ts baseline <input.json> <sessions-root> <expected-session-dir>
 *
 * `pipeline` reads the scan input and runs every stage (runStages, the alerts evaluation, both
 * HTML files) and writes the session directory. `baseline` is the floor for the same data: it
 * parses the same input, parses and re-serialises the output document the pipeline wrote, and
 * writes the same bytes. Prints one JSON line: per-stage wall times (ms), the total, CPU time
 * and the process's RSS high-water mark (process.resourceUsage().maxRSS).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import {
  ALERT_DEFAULTS,
  type Branding,
  BRANDING_DEFAULTS,
  evaluateAlerts,
  renderExecSummary,
  renderReport,
  runStages,
  type StagesInput,
  type TrendPoint,
} from '@svc/client/engine/pipeline';
import { FILES, type RunResult } from './files.ts';

const BRANDING: Branding = {
  primaryColor: BRANDING_DEFAULTS.primaryColor,
  headerBg: BRANDING_DEFAULTS.headerBg,
  headerText: BRANDING_DEFAULTS.headerText,
  subtitle: BRANDING_DEFAULTS.subtitle,
  footerText: BRANDING_DEFAULTS.footerText,
  footerEmail: 'security@example.org',
  footerUrl: 'https://example.org/security',
  logo: null,
};

interface StoredInput {
  input: Omit<StagesInput, 'now' | 'settings'> & {
    now: string;
    settings: Omit<StagesInput['settings'], 'startedAt'> & { startedAt: string };
  };
  trend: TrendPoint[];
}

/** The stored input with its dates as Date again. */
function revive(stored: StoredInput): { input: StagesInput; trend: TrendPoint[] } {
  const { input } = stored;
  return {
    input: {
      ...input,
      now: new Date(input.now),
      settings: { ...input.settings, startedAt: new Date(input.settings.startedAt) },
    },
    trend: stored.trend,
  };
}

/** Writes the files into a staging directory, then renames it into place: a session appears whole or not at all. */
function writeSessionDir(root: string, id: string, files: Record<string, string | Buffer>): void {
  const staging = path.join(root, `.${id}.partial`);
  fs.mkdirSync(staging, { recursive: true });
  for (const [name, data] of Object.entries(files)) fs.writeFileSync(path.join(staging, name), data);
  fs.renameSync(staging, path.join(root, id));
}

function main(): void {
  const [mode, inputFile, root, expectedDir] = process.argv.slice(2);
  if ((mode !== 'pipeline' && mode !== 'baseline') || !inputFile || !root || (mode === 'baseline' && !expectedDir))
    throw new Error('usage: run-once.ts pipeline|baseline <input.json> <sessions-root> [expected-session-dir]');
  const stages: Record<string, number> = {};
  const measure = <T>(stage: string, work: () => T): T => {
    const t0 = performance.now();
    try {
      return work();
    } finally {
      stages[stage] = (stages[stage] ?? 0) + (performance.now() - t0);
    }
  };
  // The baseline's bytes are read before the clock starts: they stand for what the pipeline computes.
  const expected =
    mode === 'baseline'
      ? Object.fromEntries(Object.values(FILES).map((f) => [f, fs.readFileSync(path.join(expectedDir!, f))]))
      : {};
  const startRss = process.memoryUsage.rss();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const text = measure('read input', () => fs.readFileSync(inputFile, 'utf8'));
  const { input, trend } = measure('parse input', () => revive(JSON.parse(text) as StoredInput));
  const sessionId = input.settings.sessionId;
  let files: Record<string, string | Buffer>;
  let alerts = 0;
  if (mode === 'pipeline') {
    const { doc, warnings } = runStages({ ...input, measure });
    const fired = measure('alerts', () => evaluateAlerts(doc, input.prior as SessionFile, ALERT_DEFAULTS, input.now));
    alerts = fired.length;
    const points: TrendPoint[] = [
      ...trend,
      {
        session_id: sessionId,
        finished_at: input.now.toISOString(),
        risk_score: doc.summary?.risk_score ?? 0,
        risk_score_operational: doc.summary?.risk_score_operational ?? null,
      },
    ];
    const report = measure('report html', () => renderReport({ doc, trend: points, branding: BRANDING }));
    const exec = measure('exec summary html', () => renderExecSummary({ doc, trend: points, branding: BRANDING }));
    const json = measure('serialize', () => `${JSON.stringify(doc, null, 2)}\n`);
    const log = [
      ...Object.entries(stages).map(([stage, ms]) => `${input.now.toISOString()} stage ${stage}: ${ms.toFixed(1)} ms`),
      ...warnings.map((w) => `${input.now.toISOString()} warning: ${w}`),
      `${input.now.toISOString()} alerts: ${fired.map((a) => a.alert_type).join(', ') || 'none'}`,
      '',
    ].join('\n');
    files = { [FILES.json]: json, [FILES.log]: log, [FILES.report]: report, [FILES.exec]: exec };
  } else {
    const doc = measure('parse output', () => JSON.parse(expected[FILES.json]!.toString('utf8')) as SessionFile);
    const json = measure('serialize', () => `${JSON.stringify(doc, null, 2)}\n`);
    files = { ...expected, [FILES.json]: json };
  }
  measure('write session dir', () => writeSessionDir(root, sessionId, files));
  const totalMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const result: RunResult = {
    mode,
    stages,
    totalMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    startRssMiB: startRss / 2 ** 20,
    bytes: Object.fromEntries(Object.entries(files).map(([name, data]) => [name, Buffer.byteLength(data)])),
    findings: input.findings.length,
    alerts,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
