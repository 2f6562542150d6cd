import { riskGrade, riskScore, scoringCounts, severityOf, type Finding, type SessionFile } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import type { AlertRules } from './settings.ts';

/**
 * Which alerts a finished session triggers (docs/scanner/alerts.md). Pure:
 * the session, the prior session of the same target (or null), the rules and the time in;
 * the webhook payload of each triggered alert out, in the order risk_threshold, new_critical
 * (new known-exploited findings included, marked `kev`), scan_complete. Delivery is notify.ts's.
 */

export const ALERT_TYPES = ['risk_threshold', 'new_critical', 'scan_complete', 'test'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** The webhook JSON, also the one description of an alert that every channel renders. */
export interface AlertPayload {
  event: 'svc_alert';
  alert_type: AlertType;
  timestamp: string;
  session_id: string;
  target: string;
  risk_score: number;
  risk_grade: string;
  new_critical_high: number;
  total_findings: number;
  subject: string;
  message: string;
  /** On new_critical only, when findings became known exploited (CISA KEV) since the prior scan. */
  kev?: true;
  /** How many: with `kev`. */
  new_kev?: number;
}

/** How many new finding titles a new_critical message lists before "and N more". */
const LISTED = 10;

/** Control characters and line breaks would split a mail header or a log line. */
const oneLine = (s: string) => s.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();

/**
 * A finding's identity across sessions: its fingerprint, else the fingerprint of its rule, host,
 * port and protocol, else its title, host and port (files of older scanners).
 */
export function findingKey(f: Finding): string {
  if (typeof f.fingerprint === 'string') return f.fingerprint;
  const host = typeof f.host === 'string' ? f.host : typeof f.ip === 'string' ? f.ip : '';
  if (typeof f.rule_id === 'string' && host !== '')
    return findingFingerprint({ rule_id: f.rule_id, host, port: f.port, protocol: f.protocol });
  return JSON.stringify(['title', f.title ?? '', host.toLowerCase(), f.port ?? '']);
}

const findingsOf = (s: SessionFile | null): Finding[] => (Array.isArray(s?.findings) ? s.findings : []);

/** Critical and high findings of `session` absent from `prior`; with no prior session every one is new. */
export function newCriticalHigh(session: SessionFile, prior: SessionFile | null): Finding[] {
  const before = new Set(findingsOf(prior).map(findingKey));
  return findingsOf(session).filter((f) => {
    const s = severityOf(f.severity);
    return (s === 'critical' || s === 'high') && !before.has(findingKey(f));
  });
}

/**
 * Known-exploited findings (`kev` true) that were not known exploited in `prior`: absent from it,
 * or there without `kev` (the catalogue added the CVE since). One that was already known
 * exploited is not new.
 */
export function newKev(session: SessionFile, prior: SessionFile | null): Finding[] {
  const before = new Set(
    findingsOf(prior)
      .filter((f) => f.kev === true)
      .map(findingKey),
  );
  return findingsOf(session).filter((f) => f.kev === true && !before.has(findingKey(f)));
}

/** `title (severity, host)` of the first LISTED findings, and "; and N more". */
function listed(findings: readonly Finding[], extra: (f: Finding) => string = () => ''): string {
  const titles = findings
    .slice(0, LISTED)
    .map(
      (f) =>
        `${oneLine(f.title ?? f.rule_id ?? 'untitled')} (${severityOf(f.severity)}${(f.host ?? f.ip) ? `, ${oneLine(String(f.host ?? f.ip))}` : ''}${extra(f)})`,
    );
  const more = findings.length > LISTED ? `; and ${findings.length - LISTED} more` : '';
  return `${titles.join('; ')}${more}`;
}

export interface SessionFacts {
  session_id: string;
  target: string;
  risk_score: number;
  risk_grade: string;
  total_findings: number;
}

/** What the payload says of a session: the file's own score when it has one, else the protocol's rule over its findings. */
export function sessionFacts(session: SessionFile): SessionFacts {
  const meta = session.metadata ?? {};
  const findings = findingsOf(session);
  // The grade is taken from the same block as the score, else graded from it.
  const block =
    typeof session.summary?.risk_score === 'number'
      ? session.summary
      : typeof meta.risk_score === 'number'
        ? meta
        : null;
  const score = block?.risk_score ?? riskScore(scoringCounts(findings));
  const grade = block?.risk_grade ?? riskGrade(score);
  const id =
    meta.session_id ?? ('session_id' in session && typeof session.session_id === 'string' ? session.session_id : '');
  return {
    session_id: id,
    target: oneLine(meta.target ?? session.target ?? ''),
    risk_score: score,
    risk_grade: grade,
    total_findings:
      typeof session.summary?.total_findings === 'number' ? session.summary.total_findings : findings.length,
  };
}

export function evaluateAlerts(
  session: SessionFile,
  prior: SessionFile | null,
  rules: AlertRules,
  now: Date,
): AlertPayload[] {
  if (!rules.enabled) return [];
  const facts = sessionFacts(session);
  const fresh = newCriticalHigh(session, prior);
  const base = { event: 'svc_alert' as const, timestamp: now.toISOString(), ...facts, new_critical_high: fresh.length };
  const on = facts.target === '' ? '' : ` on ${facts.target}`;
  const out: AlertPayload[] = [];
  if (facts.risk_score >= rules.risk_threshold) {
    out.push({
      ...base,
      alert_type: 'risk_threshold',
      subject: `[SVC] Risk score ${facts.risk_score} (grade ${facts.risk_grade}) reached the alert threshold${on}`,
      message: `Session ${facts.session_id}${on}: risk score ${facts.risk_score} (grade ${facts.risk_grade}) >= threshold ${rules.risk_threshold}; ${facts.total_findings} findings, ${fresh.length} new critical/high.`,
    });
  }
  // The contract's alert types are a closed list: a new known-exploited finding (whatever its severity)
  // is part of new_critical, marked `kev: true` with its count (additive fields).
  const exploited = rules.on_new_critical ? newKev(session, prior) : [];
  if (rules.on_new_critical && (fresh.length > 0 || exploited.length > 0)) {
    const plural = (n: number) => (n === 1 ? '' : 's');
    const kevSubject = `${exploited.length} ${fresh.length > 0 ? 'known exploited' : `new known-exploited finding${plural(exploited.length)}`}`;
    const subject = [
      ...(fresh.length > 0 ? [`${fresh.length} new critical/high finding${plural(fresh.length)}`] : []),
      ...(exploited.length > 0 ? [kevSubject] : []),
    ].join(', ');
    const sentences = [
      ...(fresh.length > 0
        ? [`${fresh.length} critical/high finding${plural(fresh.length)} not in the prior scan: ${listed(fresh)}.`]
        : []),
      ...(exploited.length > 0
        ? [
            `${exploited.length} finding${plural(exploited.length)} naming a CVE in CISA's Known Exploited Vulnerabilities catalogue, not known exploited in the prior scan: ${listed(exploited, (f) => (f.kev_date_added === undefined ? '' : `, KEV since ${f.kev_date_added}`))}.`,
          ]
        : []),
    ];
    out.push({
      ...base,
      alert_type: 'new_critical',
      subject: `[SVC] ${subject}${on}`,
      message: `Session ${facts.session_id}${on}: ${sentences.join(' ')}`,
      ...(exploited.length > 0 ? { kev: true, new_kev: exploited.length } : {}),
    });
  }
  if (rules.on_scan_complete) {
    out.push({
      ...base,
      alert_type: 'scan_complete',
      subject: `[SVC] Scan complete${on}: risk score ${facts.risk_score} (grade ${facts.risk_grade})`,
      message: `Session ${facts.session_id}${on} finished: risk score ${facts.risk_score} (grade ${facts.risk_grade}), ${facts.total_findings} findings, ${fresh.length} new critical/high.`,
    });
  }
  return out;
}

/** The manual `svc alert --test` alert: no session behind it, so zero counts and grade A. */
export function testAlert(now: Date): AlertPayload {
  return {
    event: 'svc_alert',
    alert_type: 'test',
    timestamp: now.toISOString(),
    session_id: '',
    target: '',
    risk_score: 0,
    risk_grade: 'A',
    new_critical_high: 0,
    total_findings: 0,
    subject: '[SVC] Test alert',
    message: 'Test alert sent by svc alert --test: this alert channel is configured correctly.',
  };
}
