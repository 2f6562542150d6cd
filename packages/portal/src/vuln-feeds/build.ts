import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type pg from 'pg';
import {
  severityOfCvss,
  VULN_INDEX_FORMAT,
  type VulnIndexCve,
  type VulnIndexDebianCve,
  type VulnIndexRange,
  type VulnIndexSources,
} from '@svc/protocol';
import {
  currentIndexVersion,
  type IndexCveRow,
  type IndexDebianRow,
  type IndexRangeRow,
  readForBuild,
  type SourceRow,
  storeIndex,
} from './build-queries.ts';

export interface BuiltIndex {
  version: string;
  /** False when the content equals the index already served (nothing was stored). */
  changed: boolean;
  cves: number;
  products: number;
  ranges: number;
  /** Source packages the Debian tracker's statements are carried for. */
  debian_packages: number;
  /** Size of the stored gzip body. */
  bytes: number;
}

function sourcesOf(rows: SourceRow[]): VulnIndexSources {
  const row = (feed: string) => rows.find((r) => r.feed === feed);
  const nvd = row('nvd');
  const kev = row('kev');
  const epss = row('epss');
  const debian = row('debian');
  const at = (r: SourceRow) => r.imported_at.toISOString();
  return {
    nvd: nvd ? { records: nvd.records, imported_at: at(nvd) } : null,
    kev: kev ? { records: kev.records, catalog_version: kev.detail, imported_at: at(kev) } : null,
    epss: epss ? { records: epss.records, score_date: epss.detail, imported_at: at(epss) } : null,
    debian: debian ? { records: debian.records, imported_at: at(debian) } : null,
  };
}

function cveOf(r: IndexCveRow): VulnIndexCve {
  return {
    id: r.cve_id,
    cvss: r.cvss,
    cvss_version: r.cvss === null ? null : r.cvss_version,
    severity: r.cvss === null ? null : severityOfCvss(r.cvss),
    summary: r.summary ?? '',
    kev:
      r.date_added === null
        ? null
        : { date_added: r.date_added, due_date: r.due_date, known_ransomware: r.known_ransomware === true },
    epss: r.epss,
    epss_percentile: r.percentile,
  };
}

function rangeOf(r: IndexRangeRow, cve: number): VulnIndexRange {
  const range: VulnIndexRange = { cve };
  if (r.version !== null) range.version = r.version;
  if (r.start_including !== null) range.start_including = r.start_including;
  if (r.start_excluding !== null) range.start_excluding = r.start_excluding;
  if (r.end_including !== null) range.end_including = r.end_including;
  if (r.end_excluding !== null) range.end_excluding = r.end_excluding;
  return range;
}

/**
 * The Debian section's packages, each written whole once its rows (ordered by package, CVE and
 * release) are read: `"<package>":{"releases":{…},"cves":[{"cve":n,"fixed":{…}},…]}`.
 */
async function writeDebian(
  rows: AsyncIterable<IndexDebianRow>,
  position: ReadonlyMap<string, number>,
  write: (text: string) => Promise<void>,
): Promise<number> {
  let packages = 0;
  type Pkg = { name: string; releases: Record<string, string[]>; cves: VulnIndexDebianCve[] };
  // Widened: the closure below reads it, so the compiler must not narrow it to its initial null.
  let pkg = null as Pkg | null;
  const flush = async () => {
    if (pkg === null) return;
    const body = { releases: pkg.releases, cves: pkg.cves };
    await write(`${packages > 0 ? ',' : ''}${JSON.stringify(pkg.name)}:${JSON.stringify(body)}\n`);
    packages++;
  };
  for await (const row of rows) {
    const cve = position.get(row.cve_id);
    if (cve === undefined) continue;
    if (pkg?.name !== row.package) {
      await flush();
      pkg = { name: row.package, releases: row.releases, cves: [] };
    }
    let entry = pkg.cves.at(-1);
    if (entry?.cve !== cve) {
      entry = { cve, fixed: {} };
      pkg.cves.push(entry);
    }
    entry.fixed[row.release] = row.fixed_version;
    if (row.unimportant) entry.unimportant = [...(entry.unimportant ?? []), row.release];
  }
  await flush();
  return packages;
}

/**
 * The VulnIndex (packages/protocol/src/vuln-index.ts) of the imported feeds, written as JSON
 * straight into gzip while the rows stream in; `version` is the SHA-256 of the content (format,
 * CVEs, products), so re-importing the same feeds leaves the version, and every client's
 * cached copy, as it was. It is written last, once known; JSON does not order keys.
 */
export async function buildIndex(conn: pg.ClientBase, now: Date): Promise<BuiltIndex> {
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  gzip.on('data', (c: Buffer) => chunks.push(c));
  const hash = createHash('sha256').update(`format:${VULN_INDEX_FORMAT}\n`);
  let pending = '';
  const write = async (text: string, hashed = true) => {
    if (hashed) hash.update(text);
    pending += text;
    if (pending.length < 1 << 16) return;
    const full = !gzip.write(pending);
    pending = '';
    if (full) await once(gzip, 'drain');
  };
  const counts = await readForBuild(conn, async ({ sources, cves, ranges, debian }) => {
    await write(
      `{"format":${VULN_INDEX_FORMAT},"generated_at":${JSON.stringify(now.toISOString())},"sources":${JSON.stringify(sourcesOf(sources))},"cves":[`,
      false,
    );
    const position = new Map<string, number>();
    for await (const row of cves) {
      await write(`${position.size > 0 ? ',' : ''}${JSON.stringify(cveOf(row))}\n`);
      position.set(row.cve_id, position.size);
    }
    await write('],"products":{', false);
    let product: string | null = null;
    let products = 0;
    let count = 0;
    for await (const row of ranges) {
      const cve = position.get(row.cve_id);
      if (cve === undefined) continue;
      if (row.product !== product) {
        await write(`${product === null ? '' : '],'}${JSON.stringify(row.product)}:[`);
        product = row.product;
        products++;
      } else await write(',');
      await write(JSON.stringify(rangeOf(row, cve)));
      count++;
    }
    if (product !== null) await write(']');
    const tracked = sources.some((s) => s.feed === 'debian');
    await write(tracked ? '},"debian":{' : '},"debian":null');
    const debianPackages = tracked ? await writeDebian(debian, position, (t) => write(t)) : 0;
    if (tracked) await write('}');
    return { cves: position.size, products, ranges: count, debian_packages: debianPackages };
  });
  const version = hash.digest('hex');
  await write(`,"version":"${version}"}\n`, false);
  gzip.end(pending);
  await once(gzip, 'end');
  const body = Buffer.concat(chunks);
  const changed = (await currentIndexVersion(conn)) !== version;
  if (changed)
    await storeIndex(conn, {
      version,
      generated_at: now,
      cves: counts.cves,
      products: counts.products,
      ranges: counts.ranges,
      body,
    });
  return { version, changed, ...counts, bytes: body.length };
}
