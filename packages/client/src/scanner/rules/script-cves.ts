import { severityOfCvss } from '@svc/protocol';
import type { ScanFinding } from '../../pipeline/types.ts';
import type { NmapHost, NmapPort, NseScript, ScriptNode } from '../parse/types.ts';
import { finding, openPorts, serviceEvidence } from './finding.ts';
import { allElemValues, elemAt, quote, tableAt, tables } from './script-tree.ts';
import type { RuleFamily } from './types.ts';

/**
 * NSE scripts that name CVEs, which no other family reads: their CVEs become the references of
 * one finding per script and service (rule `nmap-script:<id>`), so nothing they name is dropped.
 * - `vulners`: a table per CPE of entries `id`, `type`, `cvss`, `is_exploit`; every CVE id an
 *   entry names (a `cve` entry, or an exploit module named after one) is kept, scored by the
 *   highest CVSS of the `cve` entries. It matches the reported version: potential.
 * - scripts of nmap's `vulns` library (the `vuln` category: smb-vuln-ms17-010, ssl-heartbleed,
 *   http-vuln-*): tables with a `state`; those VULNERABLE or LIKELY VULNERABLE are findings, with
 *   the CVEs of their `ids` (`CVE:CVE-2017-0143`) and key, their score, else the text's risk factor.
 * - any other script whose output names CVE ids (vulscan): those ids, unscored (medium).
 */

const CVE = /CVE-\d{4}-\d{4,}/gi;
const cvesIn = (text: string): string[] => [...new Set((text.match(CVE) ?? []).map((c) => c.toUpperCase()))];
const RISK: Readonly<Record<string, NonNullable<ScanFinding['severity']>>> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  critical: 'critical',
};

interface ScriptResult {
  title: string;
  cves: string[];
  cvss?: number | undefined;
  severity: NonNullable<ScanFinding['severity']>;
  detail: string;
  potential: boolean;
}

function productOf(port: NmapPort | undefined): string | undefined {
  const s = port?.service;
  const name = [s?.product, s?.version].filter((x) => x !== undefined).join(' ');
  return name === '' ? undefined : name;
}

function vulners(script: NseScript, port: NmapPort | undefined): ScriptResult | null {
  const entries = tables(script.children).flatMap((cpe) => tables(cpe.children));
  const cves = cvesIn(entries.map((e) => elemAt(e.children, 'id') ?? '').join(' '));
  if (cves.length === 0) return null;
  const scores = entries
    .filter((e) => elemAt(e.children, 'type') === 'cve')
    .map((e) => Number(elemAt(e.children, 'cvss')))
    .filter((n) => Number.isFinite(n) && n >= 0 && n <= 10);
  const cvss = scores.length === 0 ? undefined : Math.max(...scores);
  const product = productOf(port) ?? tables(script.children)[0]?.key ?? 'the service';
  return {
    title: `${product}: ${cves.length} CVE${cves.length === 1 ? '' : 's'} named by nmap's vulners script (potential)`,
    cves,
    cvss,
    severity: cvss === undefined ? 'medium' : severityOfCvss(cvss),
    detail: `vulners matched the reported version; CVEs: ${cves.join(', ')}`,
    potential: true,
  };
}

/** A node list of script output: the script's own top level, or one of its tables. */
interface Entry {
  key?: string | undefined;
  children: ScriptNode[];
}

/** A `vulns` library entry's state: vulnerable, or not (NOT VULNERABLE, unknown). */
const isVulnerable = (t: Entry) => /^(LIKELY )?VULNERABLE/.test(elemAt(t.children, 'state') ?? '');

/** The `vulns` library's entries of a script: one table per vulnerability, or its fields at the top. */
function vulnsEntries(script: NseScript): Entry[] {
  const entries: Entry[] = [{ children: script.children }, ...tables(script.children)];
  return entries.filter((e) => elemAt(e.children, 'state') !== undefined);
}

/** Null when no entry is vulnerable (NOT VULNERABLE is shown with vulns.showall). */
function vulnsLibrary(script: NseScript): ScriptResult | null {
  const found = vulnsEntries(script).filter(isVulnerable);
  if (found.length === 0) return null;
  const cves = cvesIn(
    found.map((t) => [t.key ?? '', ...allElemValues(tableAt(t.children, 'ids')?.children ?? [])].join(' ')).join(' '),
  );
  const scores = found.flatMap((t) =>
    allElemValues(tableAt(t.children, 'scores')?.children ?? []).map((v) => Number(/^([\d.]+)/.exec(v)?.[1])),
  );
  const scored = scores.filter((n) => Number.isFinite(n) && n >= 0 && n <= 10);
  const cvss = scored.length === 0 ? undefined : Math.max(...scored);
  const risk = /Risk factor:\s*(\w+)/i.exec(script.output)?.[1]?.toLowerCase() ?? '';
  const titles = found.map((t) => elemAt(t.children, 'title') ?? script.id);
  return {
    title: titles.length === 1 ? titles[0]! : `${script.id}: ${titles.length} vulnerabilities`,
    cves,
    cvss,
    severity: cvss !== undefined ? severityOfCvss(cvss) : (RISK[risk] ?? 'medium'),
    detail: `${found.map((t) => `${elemAt(t.children, 'title') ?? script.id}: ${elemAt(t.children, 'state')}`).join('; ')}`,
    potential: false,
  };
}

function named(script: NseScript): ScriptResult | null {
  const cves = cvesIn(`${script.output} ${allElemValues(script.children).join(' ')}`);
  if (cves.length === 0) return null;
  return {
    title: `${script.id}: ${cves.length} CVE${cves.length === 1 ? '' : 's'} named in the script's output (potential)`,
    cves,
    severity: 'medium',
    detail: `the output names ${cves.join(', ')}; it gives no score (rated medium)`,
    potential: true,
  };
}

function resultOf(script: NseScript, port: NmapPort | undefined): ScriptResult | null {
  if (script.id === 'vulners') return vulners(script, port);
  return vulnsEntries(script).length > 0 ? vulnsLibrary(script) : named(script);
}

function findingOf(host: NmapHost, port: NmapPort | undefined, script: NseScript): ScanFinding[] {
  const r = resultOf(script, port);
  if (r === null) return [];
  const where = port === undefined ? 'host script' : serviceEvidence(port);
  return [
    finding(host, port, {
      rule_id: `nmap-script:${script.id}`,
      title: r.title,
      severity: r.severity,
      category: 'vulnerable_software',
      // vulners' own output is one line per id, exploits included: the CVEs above say what matters.
      evidence: script.id === 'vulners' ? `${where}; ${r.detail}` : `${where}; ${r.detail}; ${quote(script, 6)}`,
      description: r.potential
        ? `nmap's ${script.id} script lists these CVEs for what the service reports; each is potential until checked (a distribution may have backported the fix).`
        : `nmap's ${script.id} script reports ${r.title} as vulnerable.`,
      remediation:
        r.cves.length === 0
          ? 'Apply the vendor fix for the vulnerability the script names.'
          : `Apply the vendor fixes for ${r.cves.length === 1 ? r.cves[0] : 'the CVEs listed'} (upgrade the software or the distribution package).`,
      cve: r.cves,
      ...(r.cvss === undefined ? {} : { cvss: r.cvss }),
      // A script that lists CVEs for the reported version matched a range; one that reports
      // VULNERABLE checked the service (the default match of a rule naming CVEs).
      ...(r.potential
        ? { match: { kind: 'version_range', confidence: 'potential', source: `nmap's ${script.id} script` } }
        : {}),
    }),
  ];
}

/** The family, skipping scripts another family reads (they report their own findings). */
export function scriptCves(readElsewhere: ReadonlySet<string>): RuleFamily {
  const own = (s: NseScript) => !readElsewhere.has(s.id);
  return {
    id: 'script-cves',
    scripts: [],
    evaluate(host) {
      return [
        ...openPorts(host).flatMap((port) => port.scripts.filter(own).flatMap((s) => findingOf(host, port, s))),
        ...host.hostscripts.filter(own).flatMap((s) => findingOf(host, undefined, s)),
      ];
    },
  };
}
