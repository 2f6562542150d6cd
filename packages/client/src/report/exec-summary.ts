import { SEVERITIES } from '@svc/protocol';
import { cvesOf, factsOf, highestSeverity, hostOf } from './facts.ts';
import { html } from './html.ts';
import type { ReportInput } from './types.ts';
import { page } from './page.ts';
import { consultation } from './sections/consultation.ts';
import { footer } from './sections/footer.ts';
import { header } from './sections/header.ts';
import { nextSteps } from './sections/next-steps.ts';
import { scope, scores } from './sections/overview.ts';
import { num, SEVERITY_LABELS, section, table, when } from './sections/parts.ts';
import { deltaText } from './sections/remediation.ts';
import { topRisksTable } from './sections/top-risks.ts';
import { triageNote } from './sections/triage.ts';
import { trendSection } from './sections/trend.ts';

/** One printable page for a manager (docs/scanner/report.md): scope, overall risk, counts, top 5, trend, next steps. */
export function execSummary(input: ReportInput): string {
  const { doc, branding } = input;
  const facts = factsOf(doc);
  const highest = highestSeverity(facts.counts);
  const urgentHosts = new Set(
    facts.findings.filter((f) => f.severity === 'critical' || f.severity === 'high').map(hostOf),
  ).size;
  const cves = new Set(facts.findings.flatMap(cvesOf)).size;
  const counts = table(
    [...SEVERITIES.map((s) => ({ label: SEVERITY_LABELS[s], num: true as const })), { label: 'Total', num: true }],
    [html`<tr>${SEVERITIES.map((s) => num(facts.counts[s]))}${num(facts.findings.length)}</tr>`],
  );
  return page({
    title: `Executive summary: ${facts.target}`,
    kind: 'exec',
    branding,
    body: html`${header('Executive Summary', facts, branding)}<main>${[
      scope(facts),
      section(
        'risk',
        'Overall risk',
        html`<p>Highest severity found: <strong>${highest === null ? 'none' : SEVERITY_LABELS[highest]}</strong>. ${urgentHosts} host${urgentHosts === 1 ? '' : 's'} with critical or high findings; ${cves} distinct CVE${cves === 1 ? '' : 's'}.${triageNote(doc)}</p>${scores(facts, 'short')}${counts}`,
      ),
      section('top-risks', 'Top 5 risks', topRisksTable(facts.findings, 5)),
      trendSection(input.trend, facts.target, deltaText(doc, facts.sessionId)),
      nextSteps(doc, facts),
      consultation(branding),
    ]}</main>${footer(branding, facts.finishedAt === null ? null : when(facts.finishedAt))}`,
  });
}
