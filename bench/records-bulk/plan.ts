/**
 * What bench/records-bulk.ts runs: its options, the sessions it uploads and the changes it makes
 * (the portal's request and the baseline's UPDATE of the same columns to the same values).
 */
import { parseArgs } from 'node:util';
import type { largeSessionDoc } from '@svc/test-support/large-session';
import { wholeNumber } from '../lib/options.ts';

export const CLIENT_ID = 'bench-bulk';
export const TARGET = '10.0.0.0/16'; // largeSessionDoc's target
export const BUDGET_MS = 1000;

export interface Options {
  sessions: number;
  findings: number;
  shift: number;
  bulk: number;
  reps: number;
  warmupReps: number;
  quietWaitS: number;
  verbose: boolean;
}

export const USAGE = `usage: node bench/records-bulk.ts [flags]
  --sessions=N      sessions of the target, uploaded in scan order (default 5)
  --findings=N      findings per session (default 10000; a 10,000-finding file is about 17 MB of the 25 MB upload limit)
  --shift=N         findings each session drops and adds against the one before (default 500)
  --bulk=N          findings changed per request (default 1000)
  --reps=N          measured repetitions per side, status and exception changes in turn (default 10)
  --warmup-reps=N   unmeasured repetitions first (default 2)
  --quiet-wait=S    before each repetition, wait up to S s for an idle machine (default 20, 0 = off)
  --verbose         echo the portal's output`;

export function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      sessions: { type: 'string' },
      findings: { type: 'string' },
      shift: { type: 'string' },
      bulk: { type: 'string' },
      reps: { type: 'string' },
      'warmup-reps': { type: 'string' },
      'quiet-wait': { type: 'string' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const o: Options = {
    sessions: wholeNumber('sessions', values.sessions, 5, 1, 50),
    findings: wholeNumber('findings', values.findings, 10_000, 10, 14_000),
    shift: wholeNumber('shift', values.shift, 500, 0, 10_000),
    bulk: wholeNumber('bulk', values.bulk, 1000, 1, 10_000),
    reps: wholeNumber('reps', values.reps, 10, 1, 100),
    warmupReps: wholeNumber('warmup-reps', values['warmup-reps'], 2, 0, 20),
    quietWaitS: wholeNumber('quiet-wait', values['quiet-wait'], 20, 0, 600),
    verbose: values.verbose ?? false,
  };
  const common = o.findings - (o.sessions - 1) * o.shift;
  if (common < o.bulk)
    throw new Error(
      `only ${common} findings are in every session (--findings - (--sessions - 1) × --shift): lower --bulk or --shift`,
    );
  return o;
}

/** Session k of the target: a window of one big generated file, scanned k hours after the first. */
export function sessionDoc(base: ReturnType<typeof largeSessionDoc>, o: Options, k: number, firstScan: Date) {
  const from = k * o.shift;
  const at = new Date(firstScan.getTime() + k * 3_600_000);
  const id = at.toISOString().slice(0, 19).replace(/-/g, '').replace('T', '_').replace(/:/g, '');
  return {
    ...base,
    metadata: {
      ...base.metadata,
      session_id: id,
      started_at: new Date(at.getTime() - 600_000).toISOString(),
      finished_at: at.toISOString(),
    },
    summary: { ...base.summary, total_findings: o.findings },
    findings: base.findings.slice(from, from + o.findings),
    remediation: base.remediation.slice(from, from + o.findings),
  };
}

export type Change = { status: string; note: string } | { exception: { reason: string; expiry: string } };

/** Repetition i (from 0): a status and note change on even i, an exception on odd i, each different from the last. */
export function changeOf(i: number, today: Date): Change {
  if (i % 2 === 0) return { status: i % 4 === 0 ? 'in_progress' : 'deferred', note: `bench bulk change ${i}` };
  const expiry = new Date(today.getTime() + (30 + i) * 86_400_000).toISOString().slice(0, 10);
  return { exception: { reason: `bench accepted risk ${i}`, expiry } };
}

/** The plain UPDATE of the same columns to the same values the portal just wrote. */
export function baselineStatement(change: Change): { text: string; values: string[] } {
  const where = 'WHERE client_id = $1 AND target = $2 AND fingerprint = ANY($3::text[])';
  if ('status' in change)
    return {
      text: `UPDATE finding_records SET status = $4, note = $5, status_changed = now(), note_at = now(), updated_at = now() ${where}`,
      values: [change.status, change.note],
    };
  return {
    text: `UPDATE finding_records SET exception_reason = $4, exception_expiry = $5, exception_approved_at = now(), exception_at = now(), updated_at = now() ${where}`,
    values: [change.exception.reason, change.exception.expiry],
  };
}
