import path from 'node:path';
import { type CoverageBlock, SEVERITIES, type SessionFile } from '@svc/protocol';
import { ALERT_DEFAULTS, type AlertSettings } from '../alerts/settings.ts';
import { CoverageBuilder } from '../pipeline/coverage-builder.ts';
import { orcSettingsFrom } from '../pipeline/orc964.ts';
import type { HostInfo } from '../pipeline/types.ts';
import { runStages, type StagesInput } from '../pipeline/run-stages.ts';
import { defaultBranding } from '../report/branding.ts';
import { trendPointOf } from '../session-dir/target-history.ts';
import { produceSession, type ProducedSession } from '../session-dir/produce.ts';
import { CATALOG } from './catalog.ts';
import {
  GENERATOR,
  planCollection,
  TOOL_VERSION,
  type Decision,
  type GenerateOptions,
  type GeneratedSession,
} from './generate.ts';

/**
 * The synthetic collection through the scanner's own pipeline: each generated scan's findings,
 * hosts and exceptions file go through the stages (runStages), the alerts stage and the report
 * renderers, and each session's prior is the previous one with the consultant's decisions
 * applied, as the portal would have recorded them. Nothing here reads the environment, so a
 * seed gives the same files everywhere: the alert defaults with no channel, the default
 * report branding, the full feature set (msp tier) and no license block.
 */

/** docs/scanner/alerts.md defaults: threshold 60, new critical on, scan complete off; nothing is sent. */
export const SYNTHETIC_ALERTS: AlertSettings = {
  enabled: ALERT_DEFAULTS.enabled,
  risk_threshold: ALERT_DEFAULTS.risk_threshold,
  on_new_critical: ALERT_DEFAULTS.on_new_critical,
  on_scan_complete: ALERT_DEFAULTS.on_scan_complete,
  timeout_ms: ALERT_DEFAULTS.timeout_s * 1000,
  channels: { email: null, slack: null, webhook: null },
};

/** The prior session as the consultant left it: decided items carry their new status and note. */
export function withDecisions(
  prior: SessionFile | null,
  decisions: readonly Decision[],
  at: Date | null,
): SessionFile | null {
  if (prior === null || decisions.length === 0 || !Array.isArray(prior.remediation)) return prior;
  const byFingerprint = new Map(decisions.map((d) => [d.fingerprint, d]));
  const changed = `${(at ?? new Date(0)).toISOString().slice(0, 19)}Z`;
  return {
    ...prior,
    remediation: prior.remediation.map((item) => {
      const d = item.fingerprint === undefined ? undefined : byFingerprint.get(item.fingerprint);
      if (d === undefined || item.status === d.status) return item;
      return { ...item, status: d.status, note: d.note, status_changed: changed };
    }),
  };
}

function syntheticMetadata(opts: GenerateOptions, s: GeneratedSession) {
  return {
    synthetic: {
      generator: GENERATOR,
      seed: opts.seed,
      trend: opts.trend,
      sequence: s.sequence,
      sessions: opts.sessions,
    },
  };
}

/**
 * What a generated scan pretends to have looked at: every host of the collection answered, and
 * every port of the catalogue was scanned over its transport. So an issue the plan drops is
 * resolved, as a real rescan of the same hosts and ports would resolve it.
 */
export function syntheticCoverage(hosts: readonly HostInfo[]): CoverageBlock {
  const coverage = new CoverageBuilder();
  for (const h of hosts) coverage.addHost(h.ip);
  for (const s of SEVERITIES) for (const e of CATALOG[s]) coverage.addPort(e.protocol ?? 'tcp', e.port);
  return coverage.block({ profile: 'synthetic', tools: [GENERATOR], source: 'synthetic' });
}

/** The stages' input for one generated scan (pure). */
export function stagesInputOf(opts: GenerateOptions, s: GeneratedSession, prior: SessionFile | null): StagesInput {
  return {
    findings: s.findings,
    hosts: s.hosts,
    coverage: syntheticCoverage(s.hosts),
    prior: withDecisions(prior, s.decisions, s.decidedAt),
    exceptions: s.exceptions,
    license: { tier: 'msp', state: null },
    now: s.finishedAt,
    settings: {
      sessionId: s.sessionId,
      target: opts.target,
      clientId: opts.clientId,
      toolVersion: TOOL_VERSION,
      scanProfile: 'synthetic',
      startedAt: s.startedAt,
      schedule: null,
      orc: orcSettingsFrom({}),
    },
  };
}

/** The session documents of a collection through the stages only (no alerts, no files): for tests and fixtures. */
export function* stagedDocs(opts: GenerateOptions): Generator<{ session: GeneratedSession; doc: SessionFile }> {
  let prior: SessionFile | null = null;
  for (const session of planCollection(opts).sessions) {
    const staged = runStages(stagesInputOf(opts, session, prior));
    const doc = {
      ...staged.doc,
      metadata: { ...staged.doc.metadata, ...syntheticMetadata(opts, session) },
    } as SessionFile;
    yield { session, doc };
    prior = doc;
  }
}

/** A session of the collection that could not be produced; the ones before it stay. */
export class SessionWriteError extends Error {
  readonly dir: string;
  constructor(dir: string, cause: unknown) {
    super(`cannot write session ${dir}: ${reasonOf(cause)}`, { cause });
    this.name = 'SessionWriteError';
    this.dir = dir;
  }
}

function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (typeof e?.code === 'string' && e.code.startsWith('E')) return `${e.code} ${e.message.replace(/^\w+: /, '')}`;
  return err instanceof Error ? err.message : String(err);
}

export interface WrittenSession {
  id: string;
  path: string;
  risk_score: number;
  total_findings: number;
}

export interface ChainOptions {
  root: string;
  /** Stage timings for pipeline.log; a fixed clock keeps seeded output byte-identical. */
  clock: () => number;
  /** Called after each session is written (progress). */
  onSession?: (produced: ProducedSession, session: GeneratedSession) => void;
}

/** Writes every session of the collection into the root, oldest first; an existing session of the same id is replaced. */
export async function produceCollection(
  opts: GenerateOptions,
  sessions: Iterable<GeneratedSession>,
  chain: ChainOptions,
): Promise<WrittenSession[]> {
  const written: WrittenSession[] = [];
  const branding = defaultBranding();
  let prior: SessionFile | null = null;
  const trend: ReturnType<typeof trendPointOf>[] = [];
  for (const session of sessions) {
    const input = stagesInputOf(opts, session, prior);
    let out: ProducedSession;
    try {
      out = await produceSession({
        ...input,
        root: chain.root,
        alerts: SYNTHETIC_ALERTS,
        branding,
        history: { prior: input.prior as SessionFile | null, trend: [...trend] },
        metadata: syntheticMetadata(opts, session),
        clock: chain.clock,
        write: { replace: true },
      });
    } catch (err) {
      throw new SessionWriteError(path.join(path.resolve(chain.root), session.sessionId), err);
    }
    // Only the previous document and the trend stay in memory, so a long collection does not grow.
    written.push({
      id: out.id,
      path: out.path,
      risk_score: out.doc.summary?.risk_score ?? 0,
      total_findings: out.doc.summary?.total_findings ?? 0,
    });
    chain.onSession?.(out, session);
    prior = out.doc;
    trend.push(trendPointOf(out.doc));
  }
  return written;
}
