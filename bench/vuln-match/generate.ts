/**
 * The input of bench/vuln-match.ts: a vulnerability index of N CVE records in the protocol's
 * shape (packages/protocol/src/vuln-index.ts) and M services as nmap's parser hands them over,
 * both written as JSON files. Deterministic for a given seed.
 *
 * The spread follows NVD's: products by a Zipf law (s 0.8 over N / 8 products, so the most
 * affected product has about 3 % of the CVEs, as the Linux kernel has), 1 to 3 vulnerable
 * ranges per CVE (a fifth of them over two products), ranges of the four kinds NVD writes
 * (exact version, up to excluding, from including up to excluding, up to including), summaries
 * of 60 to 280 characters, a tenth of the CVEs with EPSS and 0.5 % in KEV. Services lean to
 * the popular network daemons (below); one in five names a product the index does not know,
 * one in ten gives no version. The Debian security tracker's section: half the
 * products are Debian packages whose every CVE has a statement in four releases, and a third of
 * the services of such a product show a bookworm package revision in their banner.
 */
import fs from 'node:fs';
import { seededRandom } from '@svc/test-support/random';
import {
  severityOfCvss,
  VULN_INDEX_FORMAT,
  type VulnIndex,
  type VulnIndexCve,
  type VulnIndexDebian,
  type VulnIndexRange,
} from '@svc/protocol';

/** Draws an index 0..n-1 with probability ∝ 1/(i+1)^s, by binary search in the cumulative weights. */
function zipf(n: number, s: number, rnd: () => number): () => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / (i + 1) ** s;
    cumulative[i] = sum;
  }
  return () => {
    const x = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const WORDS =
  'a remote attacker could execute arbitrary code via crafted request buffer overflow in the parser of the server allows denial of service through heap use after free when handling authentication bypass improper input validation leads to information disclosure'.split(
    ' ',
  );

export interface VulnBenchInput {
  indexFile: string;
  servicesFile: string;
  indexBytes: number;
  cves: number;
  products: number;
  ranges: number;
  services: number;
  /** Services whose CPE names a product of the index. */
  knownProducts: number;
  /** Distinct (product, version) pairs among the services. */
  distinctPairs: number;
  /** Source packages of the Debian section, and their statements (package, CVE, release). */
  debianPackages: number;
  debianStatements: number;
  /** Services whose banner names a Debian revision. */
  debianServices: number;
}

export interface BenchService {
  name: string;
  product: string;
  version?: string;
  cpes: string[];
}

export function generateVulnBench(dir: string, cveCount: number, serviceCount: number, seed: number): VulnBenchInput {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const productCount = Math.max(1, Math.floor(cveCount / 8));
  const keys = Array.from({ length: productCount }, (_, i) => `a:vendor${i % 4000}:product${i}`);
  // Each product's release line: 10 to 60 versions in order, some OpenSSH-like (9.2p1).
  const versionsOf = (i: number): string[] => {
    const r = seededRandom(seed ^ (i * 2654435761));
    const n = 10 + Math.floor(r() * 50);
    const style = Math.floor(r() * 3);
    const out: string[] = [];
    let major = 1 + Math.floor(r() * 8);
    let minor = 0;
    let patch = 0;
    for (let k = 0; k < n; k++) {
      if (r() < 0.15) {
        major++;
        minor = 0;
        patch = 0;
      } else if (r() < 0.4) {
        minor++;
        patch = 0;
      } else patch++;
      out.push(style === 0 ? `${major}.${minor}p${patch + 1}` : `${major}.${minor}.${patch}`);
    }
    return out;
  };
  const versionCache = new Map<number, string[]>();
  const versions = (i: number) => {
    let v = versionCache.get(i);
    if (v === undefined) {
      v = versionsOf(i);
      versionCache.set(i, v);
    }
    return v;
  };
  const product = zipf(productCount, 0.8, rnd);
  const cves: VulnIndexCve[] = [];
  const products: Record<string, VulnIndexRange[]> = {};
  let ranges = 0;
  for (let c = 0; c < cveCount; c++) {
    const year = 1999 + Math.floor(rnd() * 27);
    const cvss = rnd() < 0.05 ? null : Math.round((2 + rnd() * 8) * 10) / 10;
    const words = 10 + Math.floor(rnd() * 30);
    const summary = Array.from({ length: words }, () => pick(WORDS))
      .join(' ')
      .slice(0, 280);
    const kev = rnd() < 0.005;
    cves.push({
      id: `CVE-${year}-${String(10000 + c).padStart(5, '0')}`,
      cvss,
      cvss_version: cvss === null ? null : '3.1',
      severity: cvss === null ? null : severityOfCvss(cvss),
      summary,
      kev: kev ? { date_added: '2024-05-01', due_date: '2024-05-22', known_ransomware: rnd() < 0.2 } : null,
      epss: rnd() < 0.1 ? Math.round(rnd() * 1e5) / 1e5 : null,
      epss_percentile: null,
    });
    const over = rnd() < 0.2 ? 2 : 1;
    for (let p = 0; p < over; p++) {
      const i = product();
      const vs = versions(i);
      const key = keys[i] as string;
      const list = products[key] ?? [];
      products[key] = list;
      const count = 1 + Math.floor(rnd() * 3);
      for (let k = 0; k < count; k++) {
        const a = Math.floor(rnd() * vs.length);
        const b = Math.min(vs.length - 1, a + 1 + Math.floor(rnd() * 10));
        const kind = rnd();
        const range: VulnIndexRange =
          kind < 0.4
            ? { cve: c, version: vs[a] as string }
            : kind < 0.7
              ? { cve: c, end_excluding: vs[b] as string }
              : kind < 0.9
                ? { cve: c, start_including: vs[a] as string, end_excluding: vs[b] as string }
                : { cve: c, end_including: vs[a] as string };
        list.push(range);
        ranges++;
      }
    }
  }
  // The Debian security tracker's statements: three products in ten are Debian packages, each CVE of
  // one judged in four releases (bookworm fixed by a +deb12uN revision, a tenth open, a fifth
  // never affected), as the tracker judges every CVE of the packages it follows.
  const debian: VulnIndexDebian = {};
  const packagedVersion = new Map<number, { upstream: string; fixes: number }>();
  let statements = 0;
  for (const [key, list] of Object.entries(products)) {
    if (rnd() >= 0.3) continue;
    const i = Number(key.split(':')[2]?.slice('product'.length));
    const vs = versions(i);
    const stable = vs[Math.max(0, vs.length - 3)] as string;
    const latest = vs.at(-1) as string;
    packagedVersion.set(i, { upstream: stable, fixes: 1 + Math.floor(rnd() * 8) });
    const statement = (upstream: string, suffix: string) => {
      const x = rnd();
      return x < 0.1 ? null : x < 0.3 ? '0' : `${upstream}-1${suffix}${1 + Math.floor(rnd() * 8)}`;
    };
    debian[key.split(':')[2] as string] = {
      releases: {
        bullseye: [`${vs[Math.floor(vs.length / 2)]}-1+deb11u2`],
        bookworm: [`${stable}-1+deb12u4`],
        trixie: [`${latest}-1`],
        sid: [`${latest}-1`],
      },
      cves: [...new Set(list.map((r) => r.cve))].map((cve) => {
        statements += 4;
        return {
          cve,
          fixed: {
            bullseye: statement(vs[Math.floor(vs.length / 2)] as string, '+deb11u'),
            bookworm: statement(stable, '+deb12u'),
            trixie: statement(latest, '~deb13u'),
            sid: `${latest}-1`,
          },
        };
      }),
    };
  }

  const index: VulnIndex = {
    format: VULN_INDEX_FORMAT,
    version: `bench-${seed}`,
    generated_at: new Date(0).toISOString(),
    sources: {
      nvd: { records: cveCount, imported_at: new Date(0).toISOString() },
      kev: null,
      epss: null,
      debian: { records: Object.keys(debian).length, imported_at: new Date(0).toISOString() },
    },
    cves,
    products,
    debian,
  };
  const indexFile = `${dir}/vuln-index.json`;
  fs.writeFileSync(indexFile, JSON.stringify(index));

  // Services are network daemons: not the top 100 products (kernels, browsers, operating
  // systems, office suites, which nmap names without a version if at all) but the next 2,000
  // (17 to 180 CVEs each, as OpenSSH has about 130), the popular ones more often; a network
  // runs mostly recent releases with a tail of old ones.
  const TOP = Math.min(100, productCount - 1);
  const tier = zipf(Math.min(productCount - TOP, 2000), 1.1, rnd);
  const scanned = () => TOP + tier();
  const recent = (vs: readonly string[]) => vs[Math.floor(vs.length * (1 - rnd() ** 3))] ?? (vs[0] as string);
  const services: BenchService[] = [];
  let knownProducts = 0;
  let debianServices = 0;
  const pairs = new Set<string>();
  for (let s = 0; s < serviceCount; s++) {
    const unknown = rnd() < 0.2;
    const i = scanned();
    const key = unknown ? `a:other${s % 500}:daemon${s % 97}` : (keys[i] as string);
    const [, vendor, name] = key.split(':');
    // A third of the services of a Debian package run the Debian release's package, its revision in the banner.
    const packaged = unknown ? undefined : packagedVersion.get(i);
    const deb = packaged !== undefined && rnd() < 1 / 3 ? packaged : undefined;
    const version =
      deb !== undefined ? deb.upstream : rnd() < 0.1 ? undefined : unknown ? `1.${s % 7}.0` : recent(versions(i));
    const banner = deb === undefined ? version : `${version} Debian 1+deb12u${1 + Math.floor(rnd() * deb.fixes)}`;
    if (deb !== undefined) debianServices++;
    if (!unknown && version !== undefined) {
      knownProducts++;
      pairs.add(`${key}|${banner}`);
    }
    services.push({
      name: 'unknown',
      product: `${name}`,
      ...(banner === undefined ? {} : { version: banner }),
      cpes: [`cpe:/a:${vendor}:${name}${version === undefined ? '' : `:${version}`}`],
    });
  }
  const servicesFile = `${dir}/services.json`;
  fs.writeFileSync(servicesFile, JSON.stringify(services));
  return {
    indexFile,
    servicesFile,
    indexBytes: fs.statSync(indexFile).size,
    cves: cveCount,
    products: Object.keys(products).length,
    ranges,
    services: serviceCount,
    knownProducts,
    distinctPairs: pairs.size,
    debianPackages: Object.keys(debian).length,
    debianStatements: statements,
    debianServices,
  };
}
