/**
 * @svc/client/engine: the parts of svc that tests, benchmarks and other packages' test helpers
 * drive directly (scanner, CVE matching, pipeline, report, alerts, imports, synthetic sessions,
 * session production, the upload's benchmark step, the smoke test's checks). What a second
 * program on the host needs is the kit (@svc/client/kit); the engine imports the kit, never the
 * CLI (.dependency-cruiser.cjs). The part doors beside this file load one part alone, for
 * benchmarks that measure a part's memory.
 */
export * from './cve-match.ts';
export * from './nmap-parse.ts';
export * from './pipeline.ts';

// The scanner: nmap's arguments and run, the detection rules, one scan start to end.
export {
  buildNmapArgs,
  DEFAULT_NMAP_PATH,
  detectFindings,
  formatCommand,
  type NmapProgress,
  type NmapRunResult,
  parseTargets,
  PROFILES,
  runNmap,
} from '../scanner/index.ts';
export { writeOwnScripts } from '../scanner/nse/index.ts';
export { runScan } from '../scanner/run/run-scan.ts';

// The pipeline's inputs and settings.
export { CATEGORIES } from '../pipeline/compliance-map.ts';
export { type ExceptionRule, parseExceptionsFile } from '../pipeline/exceptions.ts';
export { normalizeFindings } from '../pipeline/findings.ts';
export { orcSettingsFrom } from '../pipeline/orc964.ts';
export type { HostInfo, ScanFinding } from '../pipeline/types.ts';

// The report's branding.
export { brandingFromEnv } from '../report/index.ts';
export { defaultBranding } from '../report/branding.ts';

// A session directory: produced, and read back as the files an upload sends.
export { sessionDirFiles } from '../session-dir/display-files.ts';
export { produceSession } from '../session-dir/produce.ts';

// The upload's benchmark step.
export { attachBenchmark } from '../upload/benchmark.ts';

// Synthetic sessions.
export { CATALOG } from '../synthetic/catalog.ts';
export { stagedDocs, stagesInputOf, SYNTHETIC_ALERTS } from '../synthetic/chain.ts';
export {
  apportion,
  type GenerateOptions,
  planCollection,
  planCounts,
  riskGrade,
  riskScore,
  SEEDED_END,
} from '../synthetic/generate.ts';
export { DEFAULT_MIX, parseMix } from '../synthetic/options.ts';
export { Random } from '../synthetic/random.ts';

// The smoke test's checks.
export { CHECK_NAMES } from '../smoke-test/checks.ts';
