import { factsOf } from './facts.ts';
import { html } from './html.ts';
import type { ReportInput } from './types.ts';
import { page } from './page.ts';
import { benchmarkSection } from './sections/benchmark.ts';
import { complianceSection } from './sections/compliance.ts';
import { consultation } from './sections/consultation.ts';
import { exceptionsSection } from './sections/exceptions.ts';
import { findingsSection } from './sections/findings.ts';
import { footer } from './sections/footer.ts';
import { header } from './sections/header.ts';
import { hostsSection } from './sections/hosts.ts';
import { orc964Section } from './sections/orc964.ts';
import { overview, scope } from './sections/overview.ts';
import { remediationSection } from './sections/remediation.ts';
import { topologySection } from './sections/topology.ts';
import { topRisksSection } from './sections/top-risks.ts';
import { trendSection } from './sections/trend.ts';
import { when } from './sections/parts.ts';

export function report(input: ReportInput): string {
  const { doc, branding } = input;
  const facts = factsOf(doc);
  const title = `Vulnerability report: ${facts.target}`;
  return page({
    title,
    kind: 'report',
    branding,
    body: html`${header('Vulnerability Assessment Report', facts, branding)}<main><p class="no-print"><button id="printBtn" type="button">Print</button></p>${[
      scope(facts),
      overview(facts),
      trendSection(input.trend, facts.target),
      topRisksSection(facts.findings),
      findingsSection(doc),
      hostsSection(doc),
      remediationSection(doc, facts.sessionId),
      exceptionsSection(doc),
      complianceSection(doc),
      orc964Section(doc),
      topologySection(doc),
      benchmarkSection(doc),
      consultation(branding),
    ]}</main>${footer(branding, facts.finishedAt === null ? null : when(facts.finishedAt))}`,
  });
}
