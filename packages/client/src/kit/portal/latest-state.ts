import type { LatestStateResponse } from '@svc/protocol';
import { createPortalClient } from './client.ts';
import { PortalError } from './errors.ts';
import type { PortalTarget } from './target.ts';

/**
 * The portal's latest state of a scan target before the remediation stage
 * (docs/decisions.md#prior-state-from-the-portal). Never fails a scan: nothing uploaded yet (404) is
 * no state, said in one info line (a first scan, or a target spelled differently from the
 * uploaded ones, shows in pipeline.log); any other failure is one warning and the local history
 * alone is used.
 */
export async function portalPriorState(
  portal: PortalTarget,
  scanTarget: string,
  clientId: string | undefined,
  warn: (message: string) => void,
  info: (message: string) => void = () => {},
): Promise<LatestStateResponse | null> {
  if (portal.apiKey === null) return null;
  try {
    return await createPortalClient({ target: portal }).latestState(scanTarget, clientId);
  } catch (err) {
    if (!(err instanceof PortalError)) throw err;
    if (err.status === 404) {
      info(
        `Portal state of ${scanTarget}: nothing uploaded for this target yet; remediation uses the local session history`,
      );
      return null;
    }
    warn(`Portal state of ${scanTarget} not read (${err.message}): remediation uses the local session history`);
    return null;
  }
}
