import fs from 'node:fs';
import path from 'node:path';
import type { BenchmarkResponse, SessionFile } from '@svc/protocol';
import type { ClientTier } from '../kit/license/format.ts';
import { gate } from '../kit/license/gates.ts';
import type { PortalClient } from '../kit/portal/client.ts';
import { PortalError } from '../kit/portal/errors.ts';
import { displayFile } from '../session-dir/display-files.ts';
import { replaceSessionFile } from '../session-dir/write.ts';

/**
 * After an upload: the portal's benchmark of the new session goes into the
 * session file as its `benchmark` block, the report and executive summary are rendered again
 * with it, and the portal's copies of both are replaced through PUT /api/refresh.
 *
 * This never fails the upload that came before it: a closed gate, an unreachable portal or a
 * refused call is a warning, and the session directory is left whole (files are replaced
 * durably, never rewritten in place: a power cut leaves the old file or the new one).
 */

export interface BenchmarkStepInput {
  client: Pick<PortalClient, 'benchmark' | 'refresh'>;
  sessionDir: string;
  /** The id the portal stored the session under (the upload answer's session_id). */
  sessionId: string;
  tier: ClientTier;
  /** Renders both display files from the updated document. */
  render: (doc: SessionFile) => { report: string; execSummary: string };
  warn: (message: string) => void;
}

export interface BenchmarkStepResult {
  attached: boolean;
  /** The display files replaced on the portal (`report.html`, `exec_summary.html`). */
  refreshed: string[];
}

const SKIPPED: BenchmarkStepResult = { attached: false, refreshed: [] };

/** The session file's copy of GET /api/benchmark (docs/session-file.md#computed-blocks: benchmark). */
export function benchmarkBlockOf(answer: BenchmarkResponse): NonNullable<SessionFile['benchmark']> {
  // A metric with no data has a null value on the wire; the session file leaves the value out.
  const metric = ({ value, ...rest }: BenchmarkResponse['metrics']['risk_score']) =>
    value === null ? rest : { value, ...rest };
  const m = answer.metrics;
  return {
    sample_size: answer.sample_size,
    fetched_at: answer.fetched_at,
    metrics: {
      risk_score: metric(m.risk_score),
      findings_per_host: metric(m.findings_per_host),
      critical_high_ratio: metric(m.critical_high_ratio),
    },
  };
}

export async function attachBenchmark(input: BenchmarkStepInput): Promise<BenchmarkStepResult> {
  const { client, sessionDir, sessionId, warn } = input;
  if (!gate(input.tier, 'benchmark', warn)) return SKIPPED;
  let answer: BenchmarkResponse;
  try {
    answer = await client.benchmark(sessionId);
  } catch (err) {
    if (!(err instanceof PortalError)) throw err;
    warn(`Benchmark not fetched: ${err.message}`);
    return SKIPPED;
  }
  const sessionFile = path.join(sessionDir, 'session_results.json');
  const doc = JSON.parse(fs.readFileSync(sessionFile, 'utf8')) as SessionFile;
  doc.benchmark = benchmarkBlockOf(answer);
  replaceSessionFile(sessionFile, `${JSON.stringify(doc, null, 2)}\n`);

  const rendered = input.render(doc);
  const refreshed: string[] = [];
  const targets = [
    { local: displayFile(sessionDir, 'report_'), remote: 'report.html', html: rendered.report },
    { local: displayFile(sessionDir, 'exec_summary_'), remote: 'exec_summary.html', html: rendered.execSummary },
  ];
  for (const t of targets) {
    if (t.local === null) continue;
    replaceSessionFile(t.local, t.html);
    try {
      await client.refresh(sessionId, t.remote, t.local);
      refreshed.push(t.remote);
    } catch (err) {
      if (!(err instanceof PortalError)) throw err;
      warn(`The portal's ${t.remote} was not replaced: ${err.message}`);
    }
  }
  return { attached: true, refreshed };
}
