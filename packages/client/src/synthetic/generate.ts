import {
  complianceSummaryOf,
  dualScore,
  emptyBySeverity,
  exceptionCountsOf,
  remediationSummaryOf,
  RISK_WEIGHTS,
  riskGrade,
  riskScore,
  SEVERITIES,
  type BySeverity,
  type RemediationStatus,
  type Severity,
} from '@svc/protocol';
import { CLIENT_VERSION } from '../version.ts';
import {
  APPROVERS,
  CATALOG,
  CONTROL_NAMES,
  EXCEPTION_REASONS,
  FRAMEWORKS,
  HOST_ROLES,
  OS_GUESSES,
  type CatalogEntry,
  type FrameworkKey,
} from './catalog.ts';
import { MAX_FINDINGS, SyntheticOptionError, type Mix, type Trend } from './options.ts';
import { Random } from './random.ts';

/**
 * Synthetic scan sessions in the scanner's `session_results.json` format (SPEC "Resources
 * and their fields", docs/session-file.md), for demos, portal load and tests. One run builds
 * a collection: `sessions` scans of one target, `interval` apart, whose findings persist,
 * get resolved and appear from one session to the next like a real scan history, with the
 * remediation tracking, exceptions, dual scoring, compliance mapping and topology a v4.2
 * scanner writes. docs/cli/synthetic_collection.md documents the rules.
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
const ALERT_RISK_THRESHOLD = 70;
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

export interface GeneratedSession {
  sessionId: string;
  /** The session_results.json document. */
  doc: Record<string, unknown>;
  /** The pipeline.log text. */
  log: string;
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
  /** The remediation title: unique within a session (the portal's remediation updates match by title). */
  title: string;
  firstSeen: string;
  status: RemediationStatus;
  priorStatus: RemediationStatus | null;
  statusChanged: string;
  note: string;
  exception: Exception | null;
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + 'Z';
const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const pad2 = (n: number) => String(n).padStart(2, '0');

/** `YYYYMMDD_HHMMSS` in UTC, the scanner's session id. */
export function sessionIdOf(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}_${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}`;
}

const SEVERITY_RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<Severity, number>;
const byReportOrder = (a: Issue, b: Issue) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.num - b.num;

function* generateSessions(opts: GenerateOptions, starts: number[], counts: BySeverity[]): Generator<GeneratedSession> {
  const rng = new Random(opts.seed);
  const hosts = makeHosts(opts.target, Math.ceil(Math.max(...counts.map(total)) / 3), rng);
  // Every (catalog entry, host) pair once, in random order per severity.
  const pairs = Object.fromEntries(
    SEVERITIES.map((s) => [s, rng.shuffle(CATALOG[s].flatMap((entry) => hosts.map((host) => ({ entry, host }))))]),
  ) as Record<Severity, { entry: CatalogEntry; host: Host }[]>;
  let issueCount = 0;
  const titles = new Set<string>();
  const newIssue = (severity: Severity, sessionId: string, at: string): Issue => {
    const num = ++issueCount;
    const id = `f-${String(num).padStart(3, '0')}`;
    const pair = pairs[severity].pop() ?? { entry: rng.pick(CATALOG[severity]), host: rng.pick(hosts) };
    let title = `${pair.entry.title} on ${pair.host.ip}${pair.entry.port === undefined ? '' : `:${pair.entry.port}`}`;
    if (titles.has(title)) title += ` (${id})`;
    titles.add(title);
    return {
      num,
      id,
      severity,
      entry: pair.entry,
      host: pair.host,
      title,
      firstSeen: sessionId,
      status: 'new',
      priorStatus: null,
      statusChanged: at,
      note: '',
      exception: null,
    };
  };

  let present: Issue[] = [];
  let previousId: string | null = null;
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k]!;
    const sessionId = sessionIdOf(start);
    const durationS = rng.int(8 * 60, 45 * 60);
    const finishedMs = start + durationS * 1000;
    const finished = iso(finishedMs);
    const target = counts[k]!;

    // Which findings of the previous session stay, which are resolved, which are new.
    const kept: Issue[] = [];
    const resolved: { issue: Issue; lastStatus: RemediationStatus }[] = [];
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
      for (const i of mine) gone.has(i) ? resolved.push({ issue: i, lastStatus: i.status }) : kept.push(i);
      const add = Math.max(0, t - p) + churn;
      for (let n = 0; n < add; n++) added.push(newIssue(s, sessionId, finished));
    }

    // Status of the findings seen before (SPEC remediation statuses; auto-detection sets new/persistent).
    for (const i of kept) {
      const before = i.status;
      let next: RemediationStatus;
      if (i.exception) next = 'deferred';
      else if (before === 'new') next = rng.chance(0.25) ? 'in_progress' : 'persistent';
      else if (before === 'persistent') next = rng.chance(0.15) ? 'in_progress' : 'persistent';
      else if (before === 'in_progress') next = 'in_progress';
      else next = 'persistent';
      i.priorStatus = before;
      if (next !== before) i.statusChanged = finished;
      i.status = next;
      i.note = next === 'in_progress' ? 'Assigned for remediation' : i.note;
    }
    present = [...kept, ...added].sort(byReportOrder);

    // Accepted risk exceptions: the ones still present stay (renewed when past expiry), more are marked up to --with-exceptions.
    const wanted = Math.min(opts.exceptions, present.length);
    for (const i of present) {
      if (i.exception && ymd(start) > i.exception.expiry)
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
      i.status = 'deferred';
      i.statusChanged = finished;
      i.note = 'Risk accepted';
    }

    const doc = sessionDocument({ opts, k, sessionId, start, finishedMs, hosts, present, resolved, added });
    yield {
      sessionId,
      doc,
      log: pipelineLog({ opts, k, sessionId, start, finishedMs, hosts, present, resolved, added, previousId }),
      riskScore: riskScore(countsOf(present)),
      totalFindings: present.length,
    };
    previousId = sessionId;
  }
}

function countsOf(issues: readonly Issue[]): BySeverity {
  const out = emptyCounts();
  for (const i of issues) out[i.severity]++;
  return out;
}

// ---- the session document ------------------------------------------------------------------

interface SessionState {
  opts: GenerateOptions;
  k: number;
  sessionId: string;
  start: number;
  finishedMs: number;
  hosts: Host[];
  present: Issue[];
  resolved: { issue: Issue; lastStatus: RemediationStatus }[];
  added: Issue[];
}

function remediationEntry(i: Issue): Record<string, unknown> {
  return {
    title: i.title,
    severity: i.severity,
    finding_id: i.id,
    host: i.host.ip,
    status: i.status,
    status_changed: i.statusChanged,
    note: i.note,
    first_seen: i.firstSeen,
    prior_status: i.priorStatus,
    exception_status: i.exception ? 'accepted' : null,
    exception_reason: i.exception?.reason ?? null,
    exception_approver: i.exception?.approver ?? null,
    exception_approved_at: i.exception?.approvedAt ?? null,
    exception_expiry: i.exception?.expiry ?? null,
    exception_expired: false,
  };
}

function finding(i: Issue): Record<string, unknown> {
  const e = i.entry;
  return {
    id: i.id,
    title: e.title,
    severity: i.severity,
    host: i.host.ip,
    hostname: i.host.hostname,
    ...(e.port === undefined ? {} : { port: e.port, protocol: e.protocol, service: e.service }),
    cvss: e.cvss,
    cve: e.cve,
    description: e.description,
    solution: e.solution,
  };
}

/** compliance[] entries, framework by framework in catalog order, and their summary (the protocol's rule). */
function compliance(present: readonly Issue[]) {
  const entries: { framework: string; control_id: string; control_name: string; finding_ids: string[] }[] = [];
  for (const key of Object.keys(FRAMEWORKS) as FrameworkKey[]) {
    const controls = new Map<string, string[]>();
    for (const i of present) {
      const control = i.entry.controls?.[key];
      if (control === undefined) continue;
      const ids = controls.get(control);
      if (ids) ids.push(i.id);
      else controls.set(control, [i.id]);
    }
    for (const [control, ids] of controls)
      entries.push({
        framework: FRAMEWORKS[key],
        control_id: control,
        control_name: CONTROL_NAMES[key][control] ?? control,
        finding_ids: ids,
      });
  }
  return { entries, summary: complianceSummaryOf(entries) };
}

function topology(hosts: readonly Host[], present: readonly Issue[]) {
  const nodes = hosts.map((h) => {
    const mine = present.filter((i) => i.host === h);
    const risk = riskScore(countsOf(mine));
    const ports = new Set(mine.map((i) => i.entry.port).filter((p) => p !== undefined));
    return {
      ip: h.ip,
      hostname: h.hostname,
      os_guess: h.os,
      port_count: ports.size,
      risk_score: risk,
      risk_grade: riskGrade(risk),
      subnet: h.subnet,
    };
  });
  const links: { source_ip: string; target_ip: string; type: 'subnet' }[] = [];
  for (let n = 1; n < nodes.length; n++) {
    if (nodes[n]!.subnet === nodes[n - 1]!.subnet)
      links.push({ source_ip: nodes[n - 1]!.ip, target_ip: nodes[n]!.ip, type: 'subnet' });
  }
  const subnets = [...new Set(nodes.map((n) => n.subnet))].map((prefix) => {
    const members = nodes.filter((n) => n.subnet === prefix);
    const avg = members.reduce((a, n) => a + n.risk_score, 0) / members.length;
    return { prefix, host_count: members.length, avg_risk: Math.round(avg * 10) / 10 };
  });
  return { nodes, links, subnets };
}

function sessionDocument(st: SessionState): Record<string, unknown> {
  const { opts, k, sessionId, start, finishedMs, hosts, present, resolved, added } = st;
  // Every present issue has an active exception or none (expired ones are renewed above).
  const scores = dualScore(countsOf(present), countsOf(present.filter((i) => i.exception)));
  const risk = scores.risk_score;
  const operational = scores.risk_score_operational;
  const resolvedIssues = resolved.map((r) => r.issue).sort(byReportOrder);
  const lastStatus = new Map(resolved.map((r) => [r.issue, r.lastStatus]));
  const remediation = present.map(remediationEntry);
  const remediationResolved = resolvedIssues.map((i) => ({
    ...remediationEntry({ ...i, exception: null, note: '' }),
    status: 'resolved',
    status_changed: iso(finishedMs),
    prior_status: lastStatus.get(i) ?? null,
  }));
  const { entries: complianceEntries, summary: complianceSummary } = compliance(present);
  const topo = topology(hosts, present);
  const finished = iso(finishedMs);
  const evaluatedAt = iso(finishedMs + 2000);
  const newCriticalHigh = added.filter((i) => i.severity === 'critical' || i.severity === 'high').length;
  const alerts = [
    ...(risk >= ALERT_RISK_THRESHOLD
      ? [
          {
            type: 'risk_threshold',
            timestamp: evaluatedAt,
            message: `Risk score ${risk} >= threshold ${ALERT_RISK_THRESHOLD}`,
            channels_notified: [],
          },
        ]
      : []),
    ...(newCriticalHigh > 0
      ? [
          {
            type: 'new_critical',
            timestamp: evaluatedAt,
            message: `${newCriticalHigh} new critical/high finding${newCriticalHigh === 1 ? '' : 's'}`,
            channels_notified: [],
          },
        ]
      : []),
    {
      type: 'scan_complete',
      timestamp: evaluatedAt,
      message: `Scan complete: ${present.length} findings, risk ${risk} (${riskGrade(risk)})`,
      channels_notified: [],
    },
  ];
  return {
    metadata: {
      session_id: sessionId,
      target: opts.target,
      ...(opts.clientId === undefined ? {} : { client_id: opts.clientId }),
      tool_version: TOOL_VERSION,
      scan_profile: 'synthetic',
      started_at: iso(start),
      finished_at: finished,
      has_exec_summary: false,
      has_topology: topo.nodes.length > 0,
      remediation_summary: remediationSummaryOf(remediation, remediationResolved),
      exception_summary: { ...exceptionCountsOf(remediation), score_delta: scores.exception_impact.score_delta },
      risk_score_operational: operational,
      risk_grade_operational: scores.risk_grade_operational,
      compliance_summary: complianceSummary,
      synthetic: { generator: GENERATOR, seed: opts.seed, trend: opts.trend, sequence: k + 1, sessions: opts.sessions },
    },
    summary: {
      risk_score: risk,
      risk_grade: scores.risk_grade,
      total_findings: present.length,
      total_hosts: hosts.length,
      severity_counts: countsOf(present),
      risk_score_operational: operational,
      risk_grade_operational: scores.risk_grade_operational,
      exception_impact: scores.exception_impact,
    },
    findings: present.map(finding),
    remediation,
    remediation_resolved: remediationResolved,
    compliance: complianceEntries,
    topology: topo,
    alerts_summary: {
      evaluated_at: evaluatedAt,
      total_triggered: alerts.length,
      alerts_triggered: alerts,
      config: { risk_threshold: ALERT_RISK_THRESHOLD, on_new_critical: true, on_scan_complete: true, channels: [] },
    },
  };
}

function pipelineLog(st: SessionState & { previousId: string | null }): string {
  const { opts, sessionId, start, finishedMs, hosts, present, resolved, added, previousId } = st;
  const counts = countsOf(present);
  const risk = riskScore(counts);
  const span = finishedMs - start;
  const at = (f: number) => `[${iso(start + Math.round((span * f) / 1000) * 1000)}]`;
  const excepted = present.filter((i) => i.exception).length;
  const ports = new Set(present.filter((i) => i.entry.port !== undefined).map((i) => `${i.host.ip}:${i.entry.port}`))
    .size;
  const minutes = Math.floor(span / 60_000);
  const seconds = Math.round((span % 60_000) / 1000);
  return [
    `${at(0)} svc ${TOOL_VERSION} pipeline started: session ${sessionId}, target ${opts.target}, profile synthetic`,
    `${at(0.1)} discovery: ${hosts.length} host${hosts.length === 1 ? '' : 's'} up`,
    `${at(0.35)} port scan: ${ports} open port${ports === 1 ? '' : 's'} with findings`,
    `${at(0.8)} vulnerability checks: ${present.length} findings (${SEVERITIES.map((s) => `${s} ${counts[s]}`).join(', ')})`,
    `${at(0.9)} remediation tracking: ${added.length} new, ${present.length - added.length} carried over, ${resolved.length} resolved since ${previousId ?? 'no previous session'}`,
    `${at(0.95)} risk score ${risk} (${riskGrade(risk)}); ${excepted} accepted exception${excepted === 1 ? '' : 's'}`,
    `${at(1)} pipeline complete in ${minutes}m ${pad2(seconds)}s (synthetic session from ${GENERATOR}, seed ${opts.seed})`,
    '',
  ].join('\n');
}
