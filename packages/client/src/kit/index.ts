/**
 * @svc/client/kit: what a second program on a scanning host shares with svc (svcd imports the
 * client by this name alone). The kit's files import nothing of the client outside src/kit/
 * (.dependency-cruiser.cjs), so a program built on it bundles none of the scanner, the pipeline
 * or the CLI.
 */

// Settings: a config file (KEY=value) over the environment.
export { ConfigError, readConfigFile, Settings } from './config/settings.ts';

// The portal: where it is, the typed client and its errors.
export { createPortalClient, type PortalClient } from './portal/client.ts';
export { PortalError } from './portal/errors.ts';
export {
  ALLOW_INSECURE_HTTP,
  insecureHttpAllowed,
  isLoopback,
  type PortalTarget,
  resolveTarget,
  transportPolicyOf,
  uploadUrlOf,
} from './portal/target.ts';

// The license: the key's format, the tier it grants, the features a tier opens, the cached answer.
export { licenseCacheFile } from './license/cache.ts';
export type { ClientTier } from './license/format.ts';
export { featureAllowed } from './license/gates.ts';
export { licenseState } from './license/service.ts';
export { DEFAULT_GRACE_S, DEFAULT_TTL_S, type LicenseState } from './license/tier.ts';

// Programs: run one with a deadline, kill a process tree.
export { killTree, startTimeOf, treeOf } from './process/kill-tree.ts';
export { runWithDeadline, signalGroup } from './process/run.ts';
export { exitOnSignals, removedAfter } from './process/exit-on-signals.ts';
export { findNmap, NMAP_MISSING } from './nmap-path.ts';

// Text from outside (banners, answers, child output) made safe for a terminal or a log.
export { printable, printableJson, stripEscapes } from './text/printable.ts';

// The sessions root: where sessions live, which are there.
export { listSessionIds, RESULTS_FILE } from './session-dir/history.ts';
export { sessionPath, sessionsRootOf } from './session-dir/root.ts';

// A schedule's id, the same for svc and svcd.
export { scheduleId } from './scheduling.ts';

export { CLIENT_VERSION } from './version.ts';
