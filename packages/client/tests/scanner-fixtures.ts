import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { parseNmapXml, scanTimeOf } from '../src/scanner/parse/index.ts';
import type { NmapHost, NmapRun } from '../src/scanner/parse/types.ts';
import type { RuleFamily } from '../src/scanner/rules/types.ts';

/** Loading the nmap fixtures of tests/fixtures/nmap and running one rule family on them. */

export function fixtureText(name: string): string {
  return readFileSync(fileURLToPath(new URL(`./fixtures/nmap/${name}`, import.meta.url)), 'utf8');
}

export function fixture(name: string): NmapRun {
  return parseNmapXml(fixtureText(name));
}

export function hostOf(run: NmapRun, ip: string): NmapHost {
  const h = run.hosts.find((x) => x.addresses.some((a) => a.addr === ip));
  if (h === undefined) throw new Error(`no host ${ip} in fixture`);
  return h;
}

/** The family's findings on one host of a fixture, judged at the scan's own end time. */
export function run(family: RuleFamily, name: string, ip: string): ScanFinding[] {
  const parsed = fixture(name);
  const scanTime = scanTimeOf(parsed.info);
  if (scanTime === undefined) throw new Error('fixture has no scan time');
  return family.evaluate(hostOf(parsed, ip), { scanTime });
}

export const WEAK = '10.99.0.5';
export const HARDENED = '10.99.0.6';
export const HAND = 'handwritten-lab-odd-ports.xml';
export const REAL = 'real-lab-odd-ports.xml';

/** The fields a test pins besides the texts: rule, severity, category, where. */
export function brief(f: ScanFinding) {
  return { rule_id: f.rule_id, severity: f.severity, category: f.category, port: f.port, service: f.service };
}
