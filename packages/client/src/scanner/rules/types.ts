import type { NotCheckedPlace, VulnIndex } from '@svc/protocol';
import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost } from '../parse/types.ts';

export interface RuleContext {
  /** When the scan ran (certificate validity is judged against it, never against the clock). */
  scanTime: Date;
  /** The vulnerability index services are matched against; no matching when absent. */
  vulnIndex?: VulnIndex | null | undefined;
}

/** One family of detection rules: the NSE scripts it reads and the function that applies it to a host. */
export interface RuleFamily {
  id: string;
  /** NSE scripts whose output the family reads; `-sV` service detection is assumed for all. */
  scripts: readonly string[];
  /** The scanner's own NSE scripts it reads (scanner/nse/), which every profile running scripts adds. */
  ownScripts?: readonly string[];
  evaluate: (host: NmapHost, ctx: RuleContext) => ScanFinding[];
  /** The checks the family's scripts said they could not make on the host (the session's coverage.not_checked). */
  notChecked?: (host: NmapHost) => NotCheckedPlace[];
}
