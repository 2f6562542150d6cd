import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { callerDirectory } from '../../config/caller-dir.ts';
import { ConfigError, loadConfig } from '../../config/index.ts';
import { migrateToLatest } from '../../db/migrate.ts';
import { DomainError } from '../../domain/errors.ts';
import { type FeedSource, importFeeds, type ImportReport } from '../../vuln-feeds/import.ts';
import { withDatabase } from '../database.ts';

/**
 * `npm run feeds:import -- --nvd <file>... --kev <file> --epss <file> --debian <file>`: imports vulnerability
 * feed files (plain or gzip) into the portal's database, as its configuration names it, and
 * builds the index scanners fetch (docs/vuln-feeds.md). Any one feed may be given alone.
 */

class UsageError extends Error {}

function sourceOf(file: string): FeedSource {
  const full = path.resolve(callerDirectory(), file);
  const stat = fs.statSync(full, { throwIfNoEntry: false });
  if (stat === undefined) throw new UsageError(`${full} does not exist`);
  if (!stat.isFile()) throw new UsageError(`${full} is not a file`);
  return { label: full, open: () => fs.createReadStream(full) };
}

function summary(report: ImportReport): string {
  const lines: string[] = [];
  if (report.nvd)
    lines.push(
      `NVD: ${report.nvd.read} records read from ${report.nvd.files} file${report.nvd.files === 1 ? '' : 's'}, ${report.nvd.changed} new or changed; ${report.nvd.total} CVE records held`,
    );
  if (report.kev)
    lines.push(`KEV: ${report.kev.records} entries (catalogue ${report.kev.catalog_version ?? 'without a version'})`);
  if (report.epss)
    lines.push(`EPSS: ${report.epss.records} scores (score date ${report.epss.score_date ?? 'not given'})`);
  if (report.debian)
    lines.push(
      `Debian: ${report.debian.packages} source packages, ${report.debian.cves} CVEs, ${report.debian.statements} release statements`,
    );
  const i = report.index;
  lines.push(
    `index ${i.version} (${i.changed ? 'new' : 'unchanged'}): ${i.cves} CVEs, ${i.products} products, ${i.ranges} ranges, ${i.debian_packages} Debian packages, ${i.bytes} bytes compressed`,
  );
  return `${lines.join('\n')}\n`;
}

interface Options {
  nvd?: string[];
  kev?: string;
  epss?: string;
  debian?: string;
}

async function run(opts: Options): Promise<void> {
  if (opts.nvd === undefined && opts.kev === undefined && opts.epss === undefined && opts.debian === undefined)
    throw new UsageError('nothing to import: give --nvd <file>..., --kev <file>, --epss <file> and/or --debian <file>');
  const inputs = {
    ...(opts.nvd ? { nvd: opts.nvd.map(sourceOf) } : {}),
    ...(opts.kev ? { kev: sourceOf(opts.kev) } : {}),
    ...(opts.epss ? { epss: sourceOf(opts.epss) } : {}),
    ...(opts.debian ? { debian: sourceOf(opts.debian) } : {}),
  };
  const report = await withDatabase(loadConfig(), async (database) => {
    await migrateToLatest(database.db);
    return importFeeds(database.pool, inputs, () => new Date());
  });
  process.stdout.write(summary(report));
}

const program = new Command('feeds-import')
  .description(
    "Import vulnerability feeds (NVD CVE JSON 2.0, CISA KEV JSON, FIRST EPSS CSV, the Debian security tracker's JSON; plain or gzip) and build the index",
  )
  .option('--nvd <files...>', 'NVD CVE JSON 2.0 feed files (yearly, modified or recent), later files win')
  .option('--kev <file>', "CISA's known_exploited_vulnerabilities.json")
  .option('--epss <file>', "FIRST's epss_scores-<date>.csv(.gz)")
  .option(
    '--debian <file>',
    "the Debian security tracker's JSON (https://security-tracker.debian.org/tracker/data/json)",
  )
  .action(run);

try {
  await program.parseAsync();
} catch (err) {
  const known = err instanceof UsageError || err instanceof DomainError || err instanceof ConfigError;
  process.stderr.write(`${known ? '' : 'failed: '}${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(known ? 2 : 1);
}
