import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { severityOfCvss } from '@svc/protocol';
import type { RuleResult } from '../rules/finding.ts';
import { KNOWN_VULNERABLE_CHECKED } from '../../cve-match/known-vulnerable.ts';
import { matchKnownVulnerable } from '../../cve-match/match.ts';
import { toolFinding } from './finding.ts';
import { httpServices, located, type ServiceTarget } from './services.ts';
import type { EnrichmentTool, SourcedFinding, ToolInvocation } from './types.ts';

/**
 * whatweb: the web technologies of each HTTP(S) service and the versions they disclose, at
 * aggression level 1 (one request, no redirects followed so it never leaves the address nmap found).
 * A disclosed version is a low finding and is checked against the project's known-vulnerable
 * table; the technology list itself is info.
 */

const NAME = 'whatweb';

/** One target of whatweb's `--log-json` array. */
export interface WhatwebTarget {
  target: string;
  http_status?: number;
  plugins: Record<string, { version?: string[]; string?: string[]; module?: string[] }>;
}

/** Plugins that describe the address rather than the web service. */
const NOT_TECHNOLOGY = new Set(['Country', 'IP']);

const describe = (name: string, p: WhatwebTarget['plugins'][string]) => {
  const detail = [...(p.version ?? []), ...(p.string ?? [])];
  return detail.length === 0 ? name : `${name}[${detail.join(',')}]`;
};

/** Findings of one service from whatweb's JSON (pure: the unit tests feed it real captured output). */
export function whatwebFindings(inv: ToolInvocation, targets: readonly WhatwebTarget[]): SourcedFinding[] {
  const results: RuleResult[] = [];
  for (const t of targets) {
    const plugins = Object.entries(t.plugins ?? {}).filter(([name]) => !NOT_TECHNOLOGY.has(name));
    if (plugins.length === 0) continue;
    const versioned = plugins.flatMap(([name, p]) => (p.version ?? []).map((version) => ({ name, version })));
    if (versioned.length > 0) {
      const listed = versioned.map((v) => `${v.name} ${v.version}`).join(', ');
      results.push({
        rule_id: 'http-version-disclosed',
        title: `Web server discloses software versions (${listed})`,
        severity: 'low',
        category: 'misconfiguration',
        evidence: `${t.target} [${t.http_status ?? '?'}]: ${listed}`,
        description:
          'The service names its software and exact version in its answers, which tells an attacker which ' +
          'published vulnerabilities to try.',
        remediation:
          'Hide version numbers in headers and pages (e.g. nginx `server_tokens off;`, Apache `ServerTokens Prod`).',
        cwe: ['CWE-200'],
      });
      for (const v of versioned) {
        for (const { entry } of matchKnownVulnerable({ product: v.name, version: v.version, cpes: [] })) {
          results.push({
            rule_id: `outdated-software:${entry.id}`,
            title: `${entry.title} (${entry.cve.join(', ')})`,
            severity: severityOfCvss(entry.cvss),
            category: 'vulnerable_software',
            evidence:
              `${t.target}: ${v.name} ${v.version} is in the affected range; potential: matched on the reported ` +
              `version only (known-vulnerable table of ${KNOWN_VULNERABLE_CHECKED})`,
            description: `${entry.product}: ${entry.summary}`,
            remediation: `Upgrade ${entry.product} to ${entry.fixed} or later, or to the distribution's fixed package.`,
            cve: entry.cve,
            urls: entry.source.filter((s) => s.startsWith('http')),
            cvss: entry.cvss,
            match: { kind: 'version_range', confidence: 'potential', source: 'known-vulnerable table' },
          });
        }
      }
    }
    results.push({
      rule_id: 'web-technologies',
      title: 'Web technologies identified',
      severity: 'info',
      category: 'exposed_service',
      evidence: `${t.target} [${t.http_status ?? '?'}]: ${plugins.map(([name, p]) => describe(name, p)).join(', ')}`,
      description: 'What whatweb recognised of the web service (server, frameworks, page features).',
      remediation: 'Check that each listed component is expected, supported and kept up to date.',
    });
  }
  return results.map((r) => toolFinding(NAME, inv, r));
}

const urlOf = (t: ServiceTarget) => `${t.tls ? 'https' : 'http'}://${net.isIPv6(t.ip) ? `[${t.ip}]` : t.ip}:${t.port}/`;

const logFileOf = (inv: ToolInvocation): string => {
  const arg = inv.args.find((a) => a.startsWith('--log-json='));
  if (arg === undefined) throw new Error('invocation without --log-json');
  return arg.slice('--log-json='.length);
};

export const whatweb: EnrichmentTool = {
  kind: 'enrichment',
  name: NAME,
  debianPackage: 'whatweb',
  capability: 'web technologies and disclosed versions of each HTTP(S) service',
  timeoutMs: 2 * 60_000,
  plan(hosts, ctx) {
    return httpServices(hosts).map((t) => ({
      ...located(t),
      label: urlOf(t),
      args: [
        '--color=never',
        '--no-errors',
        '--quiet',
        '--aggression=1',
        '--follow-redirect=never',
        '--open-timeout=10',
        '--read-timeout=20',
        `--log-json=${path.join(ctx.workDir, `whatweb-${t.ip.replaceAll(':', '_')}-${t.port}.json`)}`,
        urlOf(t),
      ],
    }));
  },
  parse(inv) {
    let text: string;
    try {
      text = readFileSync(logFileOf(inv), 'utf8');
    } catch {
      throw new Error('whatweb wrote no JSON log');
    }
    return whatwebFindings(inv, JSON.parse(text) as WhatwebTarget[]);
  },
};
