/**
 * One measured pass of bench/vuln-match.ts, in its own process so each peak memory is that pass's alone:
 *
 *   node --expose-gc bench/vuln-match/run-once.ts load|hand|match <vuln-index.json> <services.json>
 *
 * `load` reads the index file and parses it with one JSON.parse, nothing more (the floor of
 * loading); `hand` matches every service against the hand table (matchKnownVulnerable, what a
 * scan does today, no index); `match` reads the index a chunk at a time (readVulnIndexFile) and
 * matches every service against it (vulnLookup and vulnFeedResults, the hand table's
 * CVEs left out), the bench's measure. The services
 * are read before the clock starts. Prints one JSON line: wall and CPU time, the matching alone,
 * peak RSS (process.resourceUsage().maxRSS), heap used at the end, and the live heap after a
 * collection forced once everything is measured (what the index and the lookup hold).
 */
import fs from 'node:fs';
import type { VulnIndex } from '@svc/protocol';
// CVE matching's own door: the engine's whole door would load the scanner's rule set, some 50 MiB of RSS.
import {
  matchKnownVulnerable,
  readVulnIndexFile,
  VULN_INDEX_RAW_MEMBERS,
  vulnFeedResults,
  vulnLookup,
} from '@svc/client/engine/cve-match';
import type { BenchService } from './generate.ts';

export type VulnMode = 'load' | 'hand' | 'match';

export interface VulnRun {
  mode: VulnMode;
  ms: number;
  /** Matching alone, without loading the index. */
  matchMs: number;
  cpuMs: number;
  maxRssMiB: number;
  heapUsedMiB: number;
  /** Heap used after a forced collection, the index still referenced. */
  liveHeapMiB: number;
  startRssMiB: number;
  /** Service and CVE pairs matched. */
  matches: number;
}

const MODES: readonly VulnMode[] = ['load', 'hand', 'match'];
const [mode, indexFile, servicesFile] = process.argv.slice(2) as [VulnMode, string | undefined, string | undefined];
if (!MODES.includes(mode) || indexFile === undefined || servicesFile === undefined)
  throw new Error('usage: run-once.ts load|hand|match <vuln-index.json> <services.json>');
const feed = mode === 'match' ? { vulnFeedResults, vulnLookup } : null;
const services = JSON.parse(fs.readFileSync(servicesFile, 'utf8')) as BenchService[];
const nmapServices = services.map((s) => ({ ...s, method: 'probed', conf: 10 }));
const startRssMiB = process.memoryUsage.rss() / 2 ** 20;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
// `load` is JSON.parse of the whole file (Buffer then toString: a string that large is made
// outside the heap, and JSON.parse copies its values instead of slicing it); `match` reads the
// file a chunk at a time (readVulnIndexFile), so the whole text is never held.
const index =
  mode === 'hand'
    ? null
    : mode === 'load'
      ? (JSON.parse(fs.readFileSync(indexFile).toString('utf8')) as VulnIndex)
      : (readVulnIndexFile(indexFile, undefined, VULN_INDEX_RAW_MEMBERS) as VulnIndex);
const m0 = performance.now();
let matches = 0;
if (mode === 'hand') for (const s of nmapServices) matches += matchKnownVulnerable(s).length;
if (feed !== null && index !== null) {
  const lookup = feed.vulnLookup(index);
  for (const s of nmapServices) matches += feed.vulnFeedResults(s, lookup).length;
}
const matchMs = performance.now() - m0;
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const maxRssMiB = process.resourceUsage().maxRSS / 1024;
const heapUsedMiB = process.memoryUsage().heapUsed / 2 ** 20;
(globalThis as { gc?: () => void }).gc?.();
const result: VulnRun = {
  mode,
  ms,
  matchMs,
  cpuMs: (cpu.user + cpu.system) / 1000,
  maxRssMiB,
  heapUsedMiB,
  liveHeapMiB: process.memoryUsage().heapUsed / 2 ** 20,
  startRssMiB,
  matches,
};
// The index stays reachable to here, so heapUsed counts it.
if (index !== null && index.cves.length === 0) console.error('empty index');
console.log(JSON.stringify(result));
