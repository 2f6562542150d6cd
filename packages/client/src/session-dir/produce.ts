import { performance } from 'node:perf_hooks';
import type { LatestStateResponse, SessionFile } from '@svc/protocol';
import { withAlerts } from '../alerts/stage.ts';
import type { AlertSettings } from '../alerts/settings.ts';
import { mergePriorState } from '../pipeline/portal-state.ts';
import { runStages, type StagesInput } from '../pipeline/run-stages.ts';
import { renderExecSummary, renderReport, type Branding, type TrendPoint } from '../report/index.ts';
import { RESULTS_FILE } from '../kit/session-dir/history.ts';
import { historyOf, trendPointOf, type History } from './target-history.ts';
import { PipelineLog, timed } from './log.ts';
import { execSummaryFileName, reportFileName, reportNameOf } from './names.ts';
import { sessionPath } from '../kit/session-dir/root.ts';
import { writeSessionDir, type OutFile, type WriteOptions } from './write.ts';

/**
 * One run from findings to a session directory: the prior session of the target (from the
 * sessions root unless the caller passes the history) → the pipeline stages → the alerts stage
 * → both HTML files → the directory written atomically. The stages and the renderers are pure;
 * reading the root, sending alerts and writing are the I/O at the edges. Each step's time goes
 * into pipeline.log.
 */

export const LOG_FILE = 'pipeline.log';

export interface ProduceInput extends Omit<StagesInput, 'prior' | 'measure'> {
  root: string;
  alerts: AlertSettings;
  branding: Branding;
  /**
   * The portal's latest state of the target (read before the run when a portal is configured):
   * merged with the local prior session before the remediation stage (pipeline/portal-state.ts).
   */
  portalState?: LatestStateResponse | null | undefined;
  /** The target's earlier sessions; read from `root` when absent. */
  history?: History | undefined;
  /** Fields added to metadata after the stages (e.g. the synthetic generator's marker). */
  metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Milliseconds for stage timings; performance.now by default (a fixed clock makes the log reproducible). */
  clock?: (() => number) | undefined;
  write?: WriteOptions | undefined;
  /** Lines logged as stages right after `start`, e.g. the scanner's exact command and its timing. */
  preamble?: readonly string[] | undefined;
  /** Lines logged as `info` after the history is read, e.g. that the portal holds nothing of the target. */
  notes?: readonly string[] | undefined;
}

export interface ProducedSession {
  path: string;
  id: string;
  doc: SessionFile;
  /** Stage and license warnings, in the order pipeline.log lists them. */
  warnings: string[];
  files: string[];
}

export interface RenderedSession {
  files: OutFile[];
  trend: TrendPoint[];
}

/** The four files of a finished document (pure): the JSON, the log text given, and both HTML renderings. */
export function sessionFiles(
  doc: SessionFile,
  history: History,
  branding: Branding,
  log: PipelineLog,
  clock: () => number,
  at: Date,
): RenderedSession {
  const trend = [...history.trend, trendPointOf(doc)];
  const name = reportNameOf(doc.metadata);
  const report = timed(clock, () => renderReport({ doc, trend, branding }));
  log.stage(at, 'report', report.ms);
  const exec = timed(clock, () => renderExecSummary({ doc, trend, branding }));
  log.stage(at, 'exec_summary', exec.ms);
  return {
    trend,
    files: [
      { name: RESULTS_FILE, content: `${JSON.stringify(doc, null, 2)}\n` },
      { name: reportFileName(name), content: report.value },
      { name: execSummaryFileName(name), content: exec.value },
    ],
  };
}

export async function produceSession(input: ProduceInput): Promise<ProducedSession> {
  const { settings, now, root } = input;
  const id = settings.sessionId;
  sessionPath(root, id);
  const clock = input.clock ?? (() => performance.now());
  const begun = clock();
  const log = new PipelineLog();
  const warnings: string[] = [];
  const warn = (m: string) => {
    warnings.push(m);
    log.add(now, 'warning', m);
  };
  log.add(
    settings.startedAt,
    'start',
    `session ${id} target ${JSON.stringify(settings.target)} svc ${settings.toolVersion}` +
      (settings.scanProfile === undefined ? '' : ` profile ${settings.scanProfile}`),
  );
  for (const line of input.preamble ?? []) log.add(settings.startedAt, 'stage', line);

  const read = timed(clock, () => input.history ?? historyOf(root, settings.target, id));
  const history = read.value;
  log.stage(now, 'history', read.ms);
  log.add(now, 'stage', `prior ${history.prior?.metadata?.session_id ?? 'none'}, ${history.trend.length} earlier`);
  for (const note of input.notes ?? []) log.add(now, 'info', note);

  const time = <T>(stage: string, run: () => T): T => {
    const r = timed(clock, run);
    log.stage(now, stage, r.ms);
    return r.value;
  };
  const merged = mergePriorState(history.prior, input.portalState ?? null, input.exceptions);
  if (input.portalState)
    log.add(
      now,
      'stage',
      `portal state: session ${input.portalState.session_id}, ${input.portalState.remediation.length} open items; remediation prior from ${merged.source}`,
    );
  const staged = runStages({ ...input, prior: merged.prior, exceptions: merged.exceptions, measure: time });
  for (const w of staged.warnings) warn(w);
  const extra = input.metadata ?? {};
  let doc = { ...staged.doc, metadata: { ...staged.doc.metadata, ...extra } } as SessionFile;

  const alertsStart = clock();
  doc = await withAlerts({
    session: doc,
    prior: history.prior,
    settings: input.alerts,
    tier: input.license.tier,
    now,
    log: (m) => log.add(now, 'warning', m),
    warn,
  });
  log.stage(now, 'alerts', clock() - alertsStart);

  const rendered = sessionFiles(doc, history, input.branding, log, clock, now);
  const s = doc.summary;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  log.add(
    now,
    'end',
    `session ${id}: ${plural(s?.total_findings ?? 0, 'finding')} on ${plural(s?.total_hosts ?? 0, 'host')}, ` +
      `risk ${s?.risk_score ?? 0} (${s?.risk_grade ?? '-'}), ` +
      `operational ${s?.risk_score_operational ?? s?.risk_score ?? 0} (${s?.risk_grade_operational ?? s?.risk_grade ?? '-'}), ` +
      `${plural(doc.alerts_summary?.total_triggered ?? 0, 'alert')}; ${Math.max(0, Math.round(clock() - begun))} ms`,
  );
  const files = [rendered.files[0]!, { name: LOG_FILE, content: log.text() }, ...rendered.files.slice(1)];
  const dir = writeSessionDir(root, id, files, input.write);
  return { path: dir, id, doc, warnings, files: files.map((f) => f.name) };
}
