/**
 * Benchmark: `npm run feeds:import` of a generated NVD feed the size of the whole NVD (250,000
 * CVE records, gzip), a KEV catalogue of 1,500 entries and an EPSS CSV with a row per CVE, into
 * a fresh embedded PostgreSQL (the command's own, in a temp SVC_DATA_DIR), then the same import
 * again (nothing changes: the index keeps its version). Reports wall time and the command's peak
 * resident memory (GNU time), and the sizes of the files and of the stored index. Files and the
 * data directory are removed at the end, also on error or interrupt.
 *
 *   node bench/vuln-feeds-import.ts [--cves=250000]
 *
 * Results: bench/results/vuln-feeds-import-<timestamp>.json.
 */
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';
import { epssCsv, kevCatalog, type NvdCveSpec, nvdFeedPieces } from '@svc/test-support/vuln-feeds';
import { runTool } from './lib/children.ts';
import { installSignalHandlers, onCleanup, runBenchmark } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { REPO_ROOT } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';

const { values } = parseArgs({ options: { cves: { type: 'string' } }, strict: true });
const CVES = Number(values.cves ?? 250_000);
if (!Number.isInteger(CVES) || CVES < 1 || CVES > 2_000_000)
  throw new Error('--cves must be a whole number from 1 to 2,000,000');

const CLI = path.join(REPO_ROOT, 'packages/portal/src/operations/vuln-feeds/cli.ts');
const PRODUCTS = 20_000;
const TEXT = 'A crafted request lets a remote attacker execute code or read memory of the affected service. ';

/** NVD-like records: a description of about 300 characters, a few ranges over 20,000 products, CVSS 3.1 mostly. */
function* records(): Generator<NvdCveSpec> {
  for (let i = 0; i < CVES; i++) {
    const year = 1999 + (i % 27);
    const product = (k: number) =>
      `cpe:2.3:a:vendor${(i * 7 + k) % PRODUCTS}:product${(i * 13 + k) % PRODUCTS}:*:*:*:*:*:*:*:*`;
    yield {
      id: `CVE-${year}-${String(10000 + i).padStart(5, '0')}`,
      cvss: (i % 100) / 10,
      cvssVersion: i % 10 === 0 ? '2.0' : '3.1',
      description: TEXT.repeat(3),
      cpes: [
        { criteria: product(0), startIncluding: '1.0', endExcluding: `1.${i % 50}` },
        { criteria: product(1), endIncluding: `2.${i % 30}.1` },
        { criteria: `cpe:2.3:a:vendor${i % PRODUCTS}:product${i % PRODUCTS}:3.${i % 9}:*:*:*:*:*:*:*` },
      ],
    };
  }
}

async function write(file: string, pieces: Iterable<string>): Promise<number> {
  await pipeline(Readable.from(pieces), createGzip(), createWriteStream(file));
  return (await fs.stat(file)).size;
}

async function timedImport(dir: string, args: string[]) {
  const res = await runTool('/usr/bin/time', ['-f', 'TIME %e %M', process.execPath, CLI, ...args], {
    env: {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: dir,
      SVC_DATA_DIR: path.join(dir, 'data'),
      SVC_LOG_LEVEL: 'warn',
    },
    cwd: REPO_ROOT,
  });
  const m = /TIME ([\d.]+) (\d+)/.exec(res.out);
  if (res.code !== 0 || m === null) throw new Error(`feeds import failed (${res.code}):\n${res.out}`);
  return {
    seconds: Number(m[1]),
    peak_rss_mb: Math.round(Number(m[2]) / 1024),
    output: res.out.replace(/TIME .*\n?/, '').trim(),
  };
}

await runBenchmark(async () => {
  installSignalHandlers();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-bench-feeds-'));
  // Reachable by the postgres user a root run starts the database as: the cluster then lives in
  // the data directory, and goes with it.
  await fs.chmod(dir, 0o755);
  onCleanup('remove the feed files', () => fs.rm(dir, { recursive: true, force: true }));
  const nvd = path.join(dir, 'nvdcve-2.0-all.json.gz');
  const kev = path.join(dir, 'known_exploited_vulnerabilities.json.gz');
  const epss = path.join(dir, 'epss_scores.csv.gz');
  const ids = [...records()].map((r) => r.id);
  const sizes = {
    nvd_gz_bytes: await write(nvd, nvdFeedPieces(records(), CVES)),
    kev_gz_bytes: await write(kev, [kevCatalog(ids.slice(0, 1500).map((cve) => ({ cve, dateAdded: '2024-01-02' })))]),
    epss_gz_bytes: await write(epss, [
      epssCsv(ids.map((cve, i) => ({ cve, epss: (i % 1000) / 1000, percentile: (i % 997) / 997 }))),
    ]),
  };
  const args = ['--nvd', nvd, '--kev', kev, '--epss', epss];
  const first = await timedImport(dir, args);
  const again = await timedImport(dir, args);
  const result = { cves: CVES, ...sizes, first, again, machine: machineInfo() };
  console.log(
    table([
      ['run', 'seconds', 'peak RSS (MB)', 'index'],
      ['first import', first.seconds, first.peak_rss_mb, first.output.split('\n').at(-1) ?? ''],
      ['same files again', again.seconds, again.peak_rss_mb, again.output.split('\n').at(-1) ?? ''],
    ]),
  );
  console.log(`files: ${JSON.stringify(sizes)}\nwritten: ${writeResult('vuln-feeds-import', result)}`);
});
