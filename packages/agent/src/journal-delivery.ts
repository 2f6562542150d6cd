import { type PortalClient, PortalError } from '@svc/client/kit';
import type { Journal } from './journal.ts';
import type { AgentLogger, ReportBody } from './types.ts';

/**
 * Sends the journal's outbox to the portal, oldest first, stopping at the first report the
 * portal cannot take now. What "now" means:
 * - kept (sent again later): no answer, a timeout, 5xx, 408, 429, and 401/403 (a key problem the
 *   operator can fix; a deregistered agent stops anyway), and a target without a key;
 * - dropped with a warning: any other 4xx (409 for a transition the portal already made, 404 for
 *   a purged command, 400): sending it again could never succeed and would block every later one;
 * - delivered: 200, even with an answer that is not the protocol's (the portal took the report).
 */

type Verdict = 'delivered' | 'keep' | 'drop';

const KEEP_STATUSES = new Set([401, 403, 408, 429]);

function verdictOf(err: unknown): Verdict {
  if (!(err instanceof PortalError)) return 'keep';
  if (err.kind === 'invalid_answer') return 'delivered';
  if (err.kind !== 'http' || err.status === null) return 'keep';
  return err.status >= 500 || KEEP_STATUSES.has(err.status) ? 'keep' : 'drop';
}

const describe = (r: ReportBody) => `command ${r.command_id} ${r.status}`;

/**
 * Sends what the outbox holds; true when it is empty afterwards. Calls must not overlap (the
 * runner serialises them). `onRefused` hears of each report the portal refused for good (the
 * runner skips a command whose `acked` was refused: cancelled or expired meanwhile).
 */
export async function deliverOutbox(
  journal: Journal,
  portal: PortalClient,
  log: AgentLogger,
  onRefused?: (report: ReportBody, reason: string) => void,
): Promise<boolean> {
  for (;;) {
    const report = journal.outbox[0];
    if (report === undefined) return true;
    let verdict: Verdict = 'delivered';
    try {
      await portal.reportCommandStatus(report);
    } catch (err) {
      verdict = verdictOf(err);
      const reason = err instanceof Error ? err.message : String(err);
      if (verdict === 'keep') {
        log.warning(`status report kept for later: ${describe(report)}: ${reason}`, {
          pending: journal.outbox.length,
        });
        return false;
      }
      if (verdict === 'drop') {
        log.warning(`status report refused by the portal, dropped: ${describe(report)}: ${reason}`);
        onRefused?.(report, reason);
      }
    }
    if (verdict === 'delivered') log.debug(`status report sent: ${describe(report)}`);
    journal.dropReport(report);
  }
}
