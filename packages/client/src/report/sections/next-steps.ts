import type { SessionFile } from '@svc/protocol';
import type { Facts } from '../facts.ts';
import { type Html, html } from '../html.ts';
import { topRisks } from '../top-risks.ts';
import { isNew } from './remediation.ts';
import { section } from './parts.ts';

/** Plain actions for a manager, most urgent first, derived from the session's numbers. */
export function nextSteps(doc: SessionFile, facts: Facts): Html {
  const steps: (Html | string)[] = [];
  const critical = topRisks(
    facts.findings.filter((f) => f.severity === 'critical'),
    3,
  );
  if (facts.counts.critical > 0)
    steps.push(
      html`Fix the ${facts.counts.critical} critical finding${facts.counts.critical === 1 ? '' : 's'} now, starting with ${critical.map((r) => r.title).join('; ')}.`,
    );
  if (facts.counts.high > 0)
    steps.push(
      `Plan the ${facts.counts.high} high finding${facts.counts.high === 1 ? '' : 's'} into the next 30 days.`,
    );
  const remediation = doc.remediation ?? [];
  const newCount = remediation.filter((e) => isNew(e, facts.sessionId)).length;
  if (doc.remediation !== undefined && newCount > 0)
    steps.push(`Review the ${newCount} finding${newCount === 1 ? '' : 's'} new since the prior scan.`);
  const expired = remediation.filter((e) => e.exception_status === 'expired' || e.exception_expired === true).length;
  if (expired > 0)
    steps.push(
      `Renew or close ${expired} expired risk exception${expired === 1 ? '' : 's'}: they count in the score again.`,
    );
  const pending = (doc.orc_964?.attestations ?? []).filter((a) => a.state !== 'true').length;
  if (pending > 0) steps.push(`Complete ${pending} pending ORC 9.64 attestation${pending === 1 ? '' : 's'}.`);
  steps.push('Rescan after the fixes to confirm them and update the trend.');
  return section('next-steps', 'Next steps', html`<ol>${steps.map((s) => html`<li>${s}</li>`)}</ol>`);
}
