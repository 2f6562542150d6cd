import {
  emptyBySeverity,
  RISK_WEIGHTS,
  riskGrade,
  riskScore,
  scannerSessionId,
  SEVERITIES,
  type BySeverity,
  type Severity,
} from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import type { ExceptionRule } from '../pipeline/exceptions.ts';
import type { HostInfo, ScanFinding } from '../pipeline/types.ts';
import { CLIENT_VERSION } from '../kit/version.ts';
import { APPROVERS, CATALOG, EXCEPTION_REASONS, HOST_ROLES, OS_GUESSES, type CatalogEntry } from './catalog.ts';
import { MAX_FINDINGS, SyntheticOptionError, type Mix, type Trend } from './options.ts';
import { Random } from './random.ts';

/**
 * The synthetic scan history behind `svc synthetic-collection`, for demos, portal load and
 * tests. One run plans a collection: `sessions` scans of one target, `interval` apart, whose
 * findings persist, get resolved and appear from one session to the next like a real scan
 * history. This module only decides what each scan found and what the consultant decided
 * between scans (pure, seeded); synthetic/chain.ts feeds that through the scanner's own
 * pipeline stages, so every block of the session files is the pipeline's.
 * docs/cli/synthetic_collection.md documents the rules.
 */

export const TOOL_VERSION: string = CLIENT_VERSION;
export const GENERATOR = 'svc synthetic-collection';

/** With --seed the newest session starts here (a Monday 02:00 UTC, a typical scheduled scan). */
export const SEEDED_END = Date.UTC(2025, 0, 6, 2, 0, 0);
/** Without --seed the newest session started this long before now (so it has finished). */
export const UNSEEDED_LAG_MS = 3_600_000;

/** The score, grade and summaries are the protocol's (packages/protocol/src/session-file), re-exported for the tests and docs. */
export { RISK_WEIGHTS, riskGrade, riskScore };
/** Each session of a trend has about this share of --findings fewer (improving) or more (worsening). */
export const TREND_STEP = 0.15;
const EXCEPTION_DAYS = 365;
const DAY_MS = 86_400_000;

export const emptyCounts: () => BySeverity = emptyBySeverity;

const total = (c: BySeverity) => SEVERITIES.reduce((a, s) => a + c[s], 0);

/**
 * Split `n` findings by the mix percentages: largest remainder (Hamilton). Each severity
 * gets floor(n × percent / 100); the findings left over go one each to the severities with
 * the largest fractional parts, ties to the more severe. 15 findings of the default mix:
 * critical 2, high 3, medium 6, low 3, info 1.
 */
export function apportion(n: number, mix: Mix): BySeverity {
  const out = emptyCounts();
  const rest: { s: Severity; frac: number }[] = [];
  for (const s of SEVERITIES) {
    const exact = n * mix[s]; // in hundredths, exact in integers
    out[s] = Math.floor(exact / 100);
    rest.push({ s, frac: exact % 100 });
  }
  let left = n - total(out);
  // Stable sort keeps SEVERITIES order (most severe first) among equal remainders.
  for (const { s } of rest.sort((a, b) => b.frac - a.frac)) {
    if (left <= 0) break;
    out[s]++;
    left--;
  }
  return out;
}

export interface CountPlan {
  /** Severity counts per session, oldest first. */
  counts: BySeverity[];
  warnings: string[];
}

/**
 * Severity counts of every session. The oldest has `findings` split by the mix. stable:
 * every session the same. improving / worsening: each later session's total is
 * `step = max(1, round(findings × 0.15))` lower / higher (never below 0), split by the mix
 * but never raising (improving) or lowering (worsening) a severity against the session
 * before; when rounding would leave the risk score unchanged, the most severe finding is
 * removed (improving) or another one of the most severe severity of the mix added
 * (worsening) until the score moves, so the risk is strictly monotone until it reaches 0 or
 * 100 (a warning says when it does).
 */
export function planCounts(findings: number, mix: Mix, sessions: number, trend: Trend): CountPlan {
  const counts = [apportion(findings, mix)];
  const warnings: string[] = [];
  const step = Math.max(1, Math.round(findings * TREND_STEP));
  const weighty = SEVERITIES.filter((s) => RISK_WEIGHTS[s] > 0);
  const growBy = weighty.find((s) => mix[s] > 0);
  for (let k = 1; k < sessions; k++) {
    const prev = counts[k - 1]!;
    const prevRisk = riskScore(prev);
    if (trend === 'stable') {
      counts.push({ ...prev });
      continue;
    }
    const planned = apportion(trend === 'improving' ? Math.max(0, findings - k * step) : findings + k * step, mix);
    const next = emptyCounts();
    for (const s of SEVERITIES)
      next[s] = trend === 'improving' ? Math.min(planned[s], prev[s]) : Math.max(planned[s], prev[s]);
    if (trend === 'improving') {
      if (prevRisk === 0) {
        if (warnings.length === 0)
          warnings.push(
            `--trend improving: the risk score is 0 from session ${k} of ${sessions} on; it cannot fall further`,
          );
      } else {
        while (riskScore(next) >= prevRisk) {
          const s = weighty.find((x) => next[x] > 0);
          if (s === undefined) break;
          next[s]--;
        }
      }
    } else if (prevRisk === 100) {
      if (warnings.length === 0)
        warnings.push(
          `--trend worsening: the risk score is 100 from session ${k} of ${sessions} on; it cannot rise further`,
        );
    } else if (growBy === undefined) {
      if (warnings.length === 0)
        warnings.push('--trend worsening: a mix of informational findings only keeps the risk score at 0');
    } else {
      while (riskScore(next) <= prevRisk) next[growBy]++;
    }
    counts.push(next);
  }
  const largest = Math.max(...counts.map(total));
  if (largest > MAX_FINDINGS)
    throw new SyntheticOptionError(
      `--trend ${trend} over ${sessions} sessions would need ${largest} findings in one session; the limit is ${MAX_FINDINGS}`,
    );
  return { counts, warnings };
}

export interface GenerateOptions {
  target: string;
  sessions: number;
  findings: number;
  mix: Mix;
  intervalMs: number;
  trend: Trend;
  /** --with-exceptions: accepted risk exceptions per session (at most that session's findings). */
  exceptions: number;
  seed: number;
  /** True when the seed came from --seed: times then derive from SEEDED_END. */
  seeded: boolean;
  clientId?: string | undefined;
  now: Date;
}

/** A consultant's decision in the portal between two scans, applied to the prior session's remediation item. */
export interface Decision {
  fingerprint: string;
  status: 'in_progress' | 'deferred';
  note: string;
}

export interface GeneratedSession {
  sessionId: string;
  /** 1 for the oldest. */
  sequence: number;
  startedAt: Date;
  finishedAt: Date;
  /** What the scan found, in report order (severity, then first appearance). */
  findings: ScanFinding[];
  hosts: HostInfo[];
  /** The exceptions file of this run. */
  exceptions: ExceptionRule[];
  /** Decisions taken on the previous session's items before this scan (none for the first). */
  decisions: Decision[];
  /** When they were taken: halfway between the previous scan's end and this scan's start. */
  decidedAt: Date | null;
  /** The protocol's score of the findings, as planned. */
  riskScore: number;
  totalFindings: number;
}

export interface Collection {
  /** Start of each session (ms), oldest first. */
  starts: number[];
  counts: BySeverity[];
  warnings: string[];
  /** Built lazily, one session at a time (a large collection is never all in memory). */
  sessions: Iterable<GeneratedSession>;
}

/** Validates what depends on several options together, then returns the lazy collection. */
export function planCollection(opts: GenerateOptions): Collection {
  if (opts.exceptions > opts.findings)
    throw new SyntheticOptionError(
      `--with-exceptions (${opts.exceptions}) cannot exceed --findings (${opts.findings})`,
    );
  const end = opts.seeded ? SEEDED_END : Math.floor(opts.now.getTime() / 1000) * 1000 - UNSEEDED_LAG_MS;
  const starts = Array.from({ length: opts.sessions }, (_, k) => end - (opts.sessions - 1 - k) * opts.intervalMs);
  if (starts[0]! < 0)
    throw new SyntheticOptionError(
      `--sessions ${opts.sessions} at --interval ${opts.intervalMs / 1000}s would start before 1970`,
    );
  const { counts, warnings } = planCounts(opts.findings, opts.mix, opts.sessions, opts.trend);
  if (opts.exceptions > 0 && counts.some((c) => total(c) < opts.exceptions))
    warnings.push(`--with-exceptions ${opts.exceptions}: sessions with fewer findings mark all of them as exceptions`);
  return { starts, counts, warnings, sessions: { [Symbol.iterator]: () => generateSessions(opts, starts, counts) } };
}

// ---- hosts ------------------------------------------------------------------------------

interface Host {
  ip: string;
  hostname: string;
  os: string;
  subnet: string;
}

const ipText = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** Addresses a target covers: an IPv4 address or CIDR block; anything else gets TEST-NET-1 (192.0.2.0/24). */
function addressRange(target: string): { first: number; size: number } {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(target.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m?.[5] === undefined ? 32 : Number(m[5]);
  if (!m || octets.some((o) => o > 255) || prefix > 32) return { first: ((192 << 24) >>> 0) + (2 << 8) + 1, size: 254 };
  const ip = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const size = 2 ** (32 - prefix);
  const network = prefix === 0 ? 0 : (ip & (0xffff_ffff << (32 - prefix))) >>> 0;
  // Network and broadcast addresses are not hosts, except in /31 and /32.
  return size <= 2 ? { first: network, size } : { first: network + 1, size: size - 2 };
}

function makeHosts(target: string, count: number, rng: Random): Host[] {
  const { first, size } = addressRange(target);
  const n = Math.max(1, Math.min(count, size, 254));
  let offsets: number[];
  if (size <= 4096) offsets = rng.shuffle(Array.from({ length: size }, (_, i) => i)).slice(0, n);
  else {
    const picked = new Set<number>();
    while (picked.size < n) picked.add(rng.int(0, size - 1));
    offsets = [...picked];
  }
  offsets.sort((a, b) => a - b);
  const domain = /^(?=.*[a-z])[a-z0-9-]+(\.[a-z0-9-]+)+$/i.test(target) ? `.${target.toLowerCase()}` : '';
  const perRole = new Map<string, number>();
  return offsets.map((o) => {
    const ip = ipText(first + o);
    const role = rng.pick(HOST_ROLES);
    const k = (perRole.get(role) ?? 0) + 1;
    perRole.set(role, k);
    return {
      ip,
      hostname: `${role}${String(k).padStart(2, '0')}${domain}`,
      os: rng.pick(OS_GUESSES),
      subnet: `${ip.split('.').slice(0, 3).join('.')}.0/24`,
    };
  });
}

// ---- issues across sessions ---------------------------------------------------------------

interface Exception {
  reason: string;
  approver: string;
  approvedAt: string;
  expiry: string;
}

/** One finding as it lives through the sessions of the collection. */
interface Issue {
  num: number;
  id: string;
  severity: Severity;
  entry: CatalogEntry;
  host: Host;
  /** The entry's rule id, made unique when the catalog and hosts ran out of distinct pairs. */
  ruleId: string;
  fingerprint: string;
  /** Index of the session that first found it. */
  since: number;
  /** What the consultant decided last: nothing, working on it, or accepted (with the exception). */
  decided: 'in_progress' | 'deferred' | null;
  exception: Exception | null;
}

const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

const SEVERITY_RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<Severity, number>;
const byReportOrder = (a: Issue, b: Issue) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.num - b.num;

function finding(i: Issue): ScanFinding {
  const e = i.entry;
  return {
    id: i.id,
    rule_id: i.ruleId,
    ...(e.category === undefined ? {} : { category: e.category }),
    title: e.title,
    severity: i.severity,
    host: i.host.ip,
    hostname: i.host.hostname,
    ...(e.port === undefined ? {} : { port: e.port, protocol: e.protocol, service: e.service }),
    description: e.description,
    remediation: e.solution,
    ...(e.cve === null ? {} : { references: { cve: [e.cve] } }),
    cvss: e.cvss,
  };
}

const hostInfo = (h: Host): HostInfo => ({ ip: h.ip, hostname: h.hostname, os_guess: h.os });

function* generateSessions(opts: GenerateOptions, starts: number[], counts: BySeverity[]): Generator<GeneratedSession> {
  const rng = new Random(opts.seed);
  const hosts = makeHosts(opts.target, Math.ceil(Math.max(...counts.map(total)) / 3), rng);
  const hostInfos = hosts.map(hostInfo);
  // Every (catalog entry, host) pair once, in random order per severity.
  const pairs = Object.fromEntries(
    SEVERITIES.map((s) => [s, rng.shuffle(CATALOG[s].flatMap((entry) => hosts.map((host) => ({ entry, host }))))]),
  ) as Record<Severity, { entry: CatalogEntry; host: Host }[]>;
  let issueCount = 0;
  const newIssue = (severity: Severity, since: number): Issue => {
    const num = ++issueCount;
    const id = `f-${String(num).padStart(3, '0')}`;
    const fresh = pairs[severity].pop();
    const pair = fresh ?? { entry: rng.pick(CATALOG[severity]), host: rng.pick(hosts) };
    const ruleId = fresh ? pair.entry.rule_id : `${pair.entry.rule_id}.${id}`;
    const fingerprint = findingFingerprint({
      rule_id: ruleId,
      host: pair.host.ip,
      port: pair.entry.port,
      protocol: pair.entry.protocol,
    });
    return {
      num,
      id,
      severity,
      entry: pair.entry,
      host: pair.host,
      ruleId,
      fingerprint,
      since,
      decided: null,
      exception: null,
    };
  };

  let present: Issue[] = [];
  let previousEnd: number | null = null;
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k]!;
    const durationS = rng.int(8 * 60, 45 * 60);
    const finishedMs = start + durationS * 1000;
    const finished = iso(finishedMs);
    const target = counts[k]!;

    // Between the scans the consultant works on what the previous one found: a quarter of the
    // new items and some of the others get assigned; accepted risks are deferred.
    const decisions: Decision[] = [];
    for (const i of present) {
      if (i.exception) i.decided = 'deferred';
      else if (i.decided === null && rng.chance(i.since === k - 1 ? 0.25 : 0.15)) i.decided = 'in_progress';
      if (i.decided === 'deferred')
        decisions.push({ fingerprint: i.fingerprint, status: 'deferred', note: 'Risk accepted' });
      else if (i.decided === 'in_progress')
        decisions.push({ fingerprint: i.fingerprint, status: 'in_progress', note: 'Assigned for remediation' });
    }

    // Which findings of the previous session stay, which are resolved, which are new.
    const kept: Issue[] = [];
    const added: Issue[] = [];
    for (const s of SEVERITIES) {
      const mine = present.filter((i) => i.severity === s);
      const p = mine.length;
      const t = target[s];
      const churn = k === 0 ? 0 : rng.int(0, Math.floor(Math.min(p, t) / 5));
      const remove = Math.max(0, p - t) + churn;
      // Accepted risks are the last to go away.
      const order = [...rng.shuffle(mine.filter((i) => !i.exception)), ...rng.shuffle(mine.filter((i) => i.exception))];
      const gone = new Set(order.slice(0, remove));
      for (const i of mine) if (!gone.has(i)) kept.push(i);
      const add = Math.max(0, t - p) + churn;
      for (let n = 0; n < add; n++) added.push(newIssue(s, k));
    }
    present = [...kept, ...added].sort(byReportOrder);

    // Accepted risk exceptions: the ones still present stay (renewed when past expiry), more are marked up to --with-exceptions.
    const wanted = Math.min(opts.exceptions, present.length);
    for (const i of present) {
      if (i.exception && ymd(finishedMs) > i.exception.expiry)
        i.exception = { ...i.exception, approvedAt: finished, expiry: ymd(finishedMs + EXCEPTION_DAYS * DAY_MS) };
    }
    const have = present.filter((i) => i.exception).length;
    for (const i of rng.shuffle(present.filter((x) => !x.exception)).slice(0, Math.max(0, wanted - have))) {
      i.exception = {
        reason: rng.pick(EXCEPTION_REASONS),
        approver: rng.pick(APPROVERS),
        approvedAt: finished,
        expiry: ymd(finishedMs + EXCEPTION_DAYS * DAY_MS),
      };
    }
    const exceptions: ExceptionRule[] = present.flatMap((i) =>
      i.exception
        ? [
            {
              fingerprint: i.fingerprint,
              title: null,
              host: null,
              reason: i.exception.reason,
              approver: i.exception.approver,
              approved_at: i.exception.approvedAt,
              expiry: i.exception.expiry,
            },
          ]
        : [],
    );

    yield {
      sessionId: scannerSessionId(start),
      sequence: k + 1,
      startedAt: new Date(start),
      finishedAt: new Date(finishedMs),
      findings: present.map(finding),
      hosts: hostInfos,
      exceptions,
      decisions,
      decidedAt: previousEnd === null ? null : new Date(Math.round((previousEnd + start) / 2000) * 1000),
      riskScore: riskScore(countsOf(present)),
      totalFindings: present.length,
    };
    previousEnd = finishedMs;
  }
}

function countsOf(issues: readonly Issue[]): BySeverity {
  const out = emptyCounts();
  for (const i of issues) out[i.severity]++;
  return out;
}
