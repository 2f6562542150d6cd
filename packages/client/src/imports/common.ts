import { type CoverageBlock, hostKindOf } from '@svc/protocol';
import type { Category } from '../pipeline/compliance-map.ts';
import { CoverageBuilder } from '../pipeline/coverage-builder.ts';
import type { HostInfo, ScanFinding } from '../pipeline/types.ts';
import { child, type XmlNode } from '../scanner/parse/xml-node.ts';
import { fieldText, MAX_FIELD_CHARS } from './guard.ts';
import { type ImportChecks, Keeper } from './keep.ts';

export const FORMATS = ['nmap', 'nessus', 'openvas', 'nuclei'] as const;
export type ForeignFormat = (typeof FORMATS)[number];
export type Severity = NonNullable<ScanFinding['severity']>;

/** One foreign file read into what the pipeline takes, plus what the file says about the scan. */
export interface ImportedScan {
  format: ForeignFormat;
  /** Which of the format's shapes the file is, when it has several (Nessus `v1`, Nuclei `JSON array`, Greenbone `CSV`). */
  variant?: string | undefined;
  /** The tool's version when the file names it. */
  version?: string | undefined;
  findings: ScanFinding[];
  hosts: HostInfo[];
  /** The scan's target as the file names it (nmap's arguments, Nessus's TARGET, Greenbone's target). */
  target?: string | undefined;
  startedAt?: Date | undefined;
  finishedAt?: Date | undefined;
  /** Records read: hosts (nmap, Nessus), results (Greenbone), lines (Nuclei). */
  records: number;
  /** What the file says its scan looked at (docs/cli/import.md, "Coverage"). */
  coverage: CoverageBlock;
  /** What was left out or cut on the way (imports/keep.ts). */
  checks: ImportChecks;
}

/** The hosts a file mentions, with the ports its findings or host records name; each checked by the keeper. */
export class HostBook {
  readonly #hosts = new Map<string, { hostname?: string; os?: string | undefined; ports: Set<number> }>();
  readonly #keeper: Keeper;

  constructor(keeper: Keeper) {
    this.#keeper = keeper;
  }

  /** A host record; left out (counted) when its address names no host. */
  add(
    address: string,
    info: { hostname?: string | undefined; os?: string | undefined; port?: number | undefined } = {},
  ): void {
    const ip = this.#keeper.host(address);
    if (ip === undefined) return;
    let h = this.#hosts.get(ip);
    if (h === undefined) {
      this.#keeper.countHost();
      h = { ports: new Set() };
      this.#hosts.set(ip, h);
    }
    if (h.hostname === undefined) {
      const hostname = this.#keeper.hostname(info.hostname);
      if (hostname !== undefined && hostname !== ip) h.hostname = hostname;
    }
    if (h.os === undefined && info.os !== undefined && info.os !== '') h.os = this.#keeper.text(info.os);
    if (info.port !== undefined && info.port > 0) h.ports.add(info.port);
  }

  /** Sorted by address. */
  list(): HostInfo[] {
    return [...this.#hosts.entries()]
      .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
      .map(([ip, h]) => ({
        ip,
        ...(h.hostname === undefined ? {} : { hostname: h.hostname }),
        ...(h.os === undefined ? {} : { os_guess: h.os.split('\n')[0]! }),
        open_ports: [...h.ports].sort((a, b) => a - b),
      }));
  }

  /** The distinct addresses, sorted: the import's target when the file names none. */
  addresses(): string[] {
    return this.list().map((h) => h.ip);
  }
}

/** A CVSS score from text, or undefined when absent or out of 0..10. */
export function cvssOf(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) && n >= 0 && n <= 10 ? n : undefined;
}

/**
 * The compliance category when the finding's name says it plainly; otherwise none, and the
 * pipeline maps a finding with a CVE to vulnerable_software (docs/cli/import.md "Compliance").
 */
const CATEGORY_WORDS: readonly [RegExp, Category][] = [
  [/default (credential|password|account|login)|default-login|blank password|empty password/i, 'default_credentials'],
  [/clear ?text|unencrypted|telnet|\bftp\b.*(password|login|auth)|basic auth.*http\b/i, 'cleartext_protocol'],
  [
    /\b(ssl|tls)\b.*(weak|medium strength|rc4|export|deprecated|version 1\.[01]|sslv[23])|sweet32|poodle|beast|weak (cipher|key|hash)|self[- ]signed|certificate.*(expired|untrusted|cannot be trusted)/i,
    'weak_crypto',
  ],
  [/backup file|\.bak\b|snapshot exposed/i, 'recovery_exposure'],
  [
    /misconfig|directory (listing|browsing)|http trace|trace method|missing.*header|anonymous (ftp|login|access)/i,
    'misconfiguration',
  ],
];

export function categoryOf(...texts: readonly (string | undefined)[]): Category | undefined {
  const text = texts.filter((t) => t !== undefined).join(' ');
  return CATEGORY_WORDS.find(([re]) => re.test(text))?.[1];
}

/** CVE ids, upper-cased and validated, in order without repeats. */
export function cveList(values: readonly string[]): string[] {
  const out = values.map((v) => v.trim().toUpperCase()).filter((v) => /^CVE-\d{4}-\d{4,}$/.test(v));
  return [...new Set(out)];
}

/** CWE ids as `CWE-<n>` from `CWE-79`, `cwe-79` or `79`. */
export function cweList(values: readonly string[]): string[] {
  const out = values.map((v) => v.trim().replace(/^cwe-/i, '')).filter((v) => /^\d+$/.test(v));
  return [...new Set(out.map((v) => `CWE-${v}`))];
}

export function referencesOf(cve: string[], cwe: string[], urls: string[]): Pick<ScanFinding, 'references'> {
  const refs = {
    ...(cve.length === 0 ? {} : { cve }),
    ...(cwe.length === 0 ? {} : { cwe }),
    ...(urls.length === 0 ? {} : { urls: [...new Set(urls)] }),
  };
  return Object.keys(refs).length === 0 ? {} : { references: refs };
}

/** The findings and hosts of one file, each kept through one Keeper (imports/keep.ts). */
export class ImportBook {
  readonly keeper = new Keeper();
  readonly hosts = new HostBook(this.keeper);
  readonly findings: ScanFinding[] = [];

  /** Keeps a finding and its host; a finding whose host names no host is left out (counted). */
  add(f: ScanFinding): void {
    const kept = this.keeper.finding(f);
    if (kept === null) return;
    this.hosts.add(kept.host!, { hostname: kept.hostname, port: kept.port });
    this.findings.push(kept);
  }

  /** A finding kept while its host was unknown (Keeper.pending), now placed; left out (counted) without a host. */
  place(kept: ScanFinding, host: string | undefined, hostname?: string): void {
    const ip = this.keeper.host(host);
    if (ip === undefined) return;
    kept.host = ip;
    const name = this.keeper.hostname(hostname);
    if (name !== undefined) kept.hostname = name;
    this.hosts.add(ip, { hostname: name, port: kept.port });
    this.findings.push(kept);
  }
}

/** An IPv4 or IPv6 address (not a host name). */
export const isAddress = (v: string): boolean => {
  const kind = hostKindOf(v);
  return kind === 'ipv4' || kind === 'ipv6';
};

/**
 * One finding per rule, host, port and protocol (the fingerprint's parts): a template matched
 * at several URLs of one service becomes one finding listing each match, so remediation tracks
 * one item, not several with one identity.
 */
export function mergeDuplicates(findings: readonly ScanFinding[]): ScanFinding[] {
  const byKey = new Map<string, ScanFinding>();
  for (const f of findings) {
    const key = JSON.stringify([f.rule_id, f.host, f.port ?? null, f.protocol ?? null]);
    const seen = byKey.get(key);
    if (seen === undefined) byKey.set(key, f);
    else if (
      f.evidence !== undefined &&
      f.evidence !== '' &&
      (seen.evidence ?? '').length < MAX_FIELD_CHARS &&
      !(seen.evidence ?? '').includes(f.evidence)
    )
      // The joined evidence is one field: the cut rule again.
      seen.evidence =
        seen.evidence === undefined || seen.evidence === '' ? f.evidence : fieldText(`${seen.evidence}\n${f.evidence}`);
  }
  return [...byKey.values()];
}

/** A property only when it has a value (exactOptionalPropertyTypes). */
export function given<K extends string, V>(key: K, value: V | undefined | null | ''): { [P in K]?: V } {
  return value === undefined || value === null || value === '' ? {} : ({ [key]: value } as { [P in K]: V });
}

/** The text of a child element, or undefined when absent or empty. */
export function textOf(node: XmlNode | undefined, name: string): string | undefined {
  const t = node === undefined ? undefined : child(node, name)?.text;
  return t === undefined || t === '' ? undefined : t;
}

/** A port number 1..65535, else undefined (0 is Nessus's and Greenbone's host level). */
export const validPort = (n: number): number | undefined =>
  Number.isInteger(n) && n > 0 && n <= 65535 ? n : undefined;

/** The earliest and latest of the times a file gives (per host, per line). */
export class TimeSpan {
  start: Date | undefined;
  end: Date | undefined;
  add(start: Date | undefined, end: Date | undefined = start): void {
    if (start !== undefined && (this.start === undefined || start < this.start)) this.start = start;
    if (end !== undefined && (this.end === undefined || end > this.end)) this.end = end;
  }
}

/**
 * The coverage of a Nessus, Greenbone or Nuclei file: the hosts it reports and the ports its
 * findings name, plus the port ranges the file states it scanned (nmap-style lists, `T:`/`U:`
 * prefixes) when it states them. A port a finding names was looked at whatever the stated range.
 */
export function reportedCoverage(
  format: ForeignFormat,
  hosts: HostBook,
  findings: readonly ScanFinding[],
  stated: readonly string[] = [],
): CoverageBlock {
  const coverage = new CoverageBuilder();
  for (const h of hosts.addresses()) coverage.addHost(h);
  for (const f of findings) {
    coverage.addHost(f.host);
    coverage.addPort(f.protocol ?? 'tcp', f.port);
  }
  for (const list of stated) coverage.addPrefixedList(list);
  return coverage.block({ profile: format, tools: [format], source: `import:${format}` });
}

/** The parser's result: duplicates merged, hosts listed, only the fields the file gave. */
export function importedScan(
  format: ForeignFormat,
  p: {
    book: ImportBook;
    records: number;
    span: TimeSpan;
    target?: string | undefined;
    version?: string | undefined;
    /** Port ranges the file states its scan covered, nmap-style (reportedCoverage). */
    statedPorts?: readonly string[] | undefined;
  },
): ImportedScan {
  const { book } = p;
  const keep = (s: string | undefined) => book.keeper.text(s);
  return {
    coverage: reportedCoverage(format, book.hosts, book.findings, p.statedPorts),
    format,
    ...given('version', keep(p.version)),
    findings: mergeDuplicates(book.findings),
    hosts: book.hosts.list(),
    ...given('target', keep(p.target)),
    ...given('startedAt', p.span.start),
    ...given('finishedAt', p.span.end),
    records: p.records,
    checks: book.keeper.checks,
  };
}
