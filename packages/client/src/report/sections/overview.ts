import {
  EPSS_RAISE,
  GRADE_CAPS,
  GRADE_FLOORS,
  RISK_GRADES,
  RISK_SCALE,
  RISK_WEIGHTS,
  SEVERITIES,
  SEVERITY_FLOORS,
  type Severity,
} from '@svc/protocol';
import type { Facts } from '../facts.ts';
import { type Html, html } from '../html.ts';
import { gradeBadge, num, section, severityBadge, table, when } from './parts.ts';

export function scope(facts: Facts): Html {
  const row = (label: string, value: string | number | null) =>
    value === null ? null : html`<dt>${label}</dt><dd>${value}</dd>`;
  return section(
    'scope',
    'Scope',
    html`<dl class="meta">${[
      row('Client', facts.client),
      row('Target', facts.target),
      row('Session', facts.sessionId),
      row('Scan window', `${when(facts.startedAt)} to ${when(facts.finishedAt)}`),
      row('Profile', facts.profile),
      row('Hosts', facts.totalHosts),
      row('Findings', facts.findings.length),
      row('Scan type', 'Network scan, unauthenticated'),
    ]}</dl>`,
  );
}

/** Actual and operational risk, what the exceptions take off, and the formula (one sentence on the one-page summary). */
export function scores(facts: Facts, formula: 'full' | 'short' = 'full'): Html {
  const operational =
    facts.operationalScore === null
      ? html`<div class="score"><div>Operational risk</div><div class="muted">No risk exceptions recorded</div></div>`
      : html`<div class="score" id="score-operational"><div>Operational risk</div><div class="value">${facts.operationalScore} ${gradeBadge(facts.operationalGrade)}</div><div class="muted">Without findings under an accepted, unexpired exception</div></div>`;
  const impact =
    facts.exceptedCount > 0
      ? html`<p id="exception-impact">Risk exceptions cover ${facts.exceptedCount} finding${facts.exceptedCount === 1 ? '' : 's'} and take ${facts.scoreDelta} point${facts.scoreDelta === 1 ? '' : 's'} off the score.</p>`
      : html`<p id="exception-impact" class="muted">No accepted exception lowers the score.</p>`;
  const rescored =
    facts.currentScore === null
      ? null
      : html`<p id="score-rescored">This session was scored before the worst open finding bounded the score. By the current formula it scores ${facts.currentScore.score}, grade ${facts.currentScore.grade}.</p>`;
  return html`<div class="scores"><div class="score" id="score-actual"><div>Risk score</div><div class="value">${facts.riskScore} ${gradeBadge(facts.riskGrade)}</div><div class="muted">0 (none) to 100; grade A (best) to F</div></div>${operational}</div>${impact}${rescored}${scoreFormula(formula)}`;
}

/** The formula in a few sentences, from the protocol's constants so it cannot drift (docs/scoring.md). */
function scoreFormula(form: 'full' | 'short'): Html {
  // Severities that share a floor are named together: "high or medium 40 (grade C at best)".
  const groups: { names: Severity[]; floor: number }[] = [];
  for (const s of SEVERITIES) {
    const last = groups.at(-1);
    if (last !== undefined && last.floor === SEVERITY_FLOORS[s]) last.names.push(s);
    else groups.push({ names: [s], floor: SEVERITY_FLOORS[s] });
  }
  const floors = (withCaps: boolean) =>
    groups
      .map(({ names, floor }) => {
        const cap = GRADE_CAPS[names[0]!];
        return `${names.join(' or ')} ${floor}${!withCaps || cap === 'A' ? '' : ` (grade ${cap} at best)`}`;
      })
      .join(', ');
  const weights = SEVERITIES.map((s) => `${s} ${RISK_WEIGHTS[s]}`).join(', ');
  const bands = `${RISK_GRADES.slice(0, -1)
    .map((g, i) => `${g} under ${GRADE_FLOORS[RISK_GRADES[i + 1] as keyof typeof GRADE_FLOORS]}`)
    .join(', ')}, F from ${GRADE_FLOORS.F}`;
  if (form === 'short')
    return html`<p id="score-formula" class="muted">The worst open finding sets the lowest possible score (${floors(false)}); every open finding moves it towards 100. Grades: ${bands}.</p>`;
  return html`<p id="score-formula" class="muted">The worst open finding sets the lowest possible score: ${floors(true)}. Every open finding then moves the score towards 100: score = 100 − (100 − lowest) × e<sup>−w/${RISK_SCALE}</sup>, w the sum of weights ${weights}. Grades: ${bands}. A finding naming a known-exploited CVE (CISA KEV) counts as critical; one with EPSS ${EPSS_RAISE} or more one severity higher. The operational score leaves out findings under an accepted, unexpired exception.</p>`;
}

export function severityBreakdown(facts: Facts): Html {
  const max = Math.max(1, ...SEVERITIES.map((s) => facts.counts[s]));
  const rows = SEVERITIES.map(
    (s) =>
      html`<tr data-severity="${s}"><td>${severityBadge(s)}</td>${num(facts.counts[s])}<td style="width:60%"><div class="bar bar-${s}" style="width:${Math.round((facts.counts[s] / max) * 100)}%"></div></td></tr>`,
  );
  return html`<h3>Findings by severity</h3>${table(['Severity', { label: 'Findings', num: true }, ''], rows)}`;
}

export function overview(facts: Facts): Html {
  return section('risk', 'Overall risk', html`${scores(facts)}${severityBreakdown(facts)}`);
}
