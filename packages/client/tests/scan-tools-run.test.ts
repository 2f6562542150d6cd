import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { parseDomains } from '../src/scanner/run/domains.ts';
import { mergeToolFindings } from '../src/scanner/run/merge-findings.ts';
import { findProgram } from '../src/kit/process/find-program.ts';
import { installedTools, runDiscovery, runEnrichment, type ToolRunOptions } from '../src/scanner/run/tools-run.ts';
import type { NmapHost } from '../src/scanner/parse/types.ts';
import type { DiscoveryTool, EnrichmentTool, SourcedFinding } from '../src/scanner/tools/index.ts';

/**
 * How `svc scan` runs the optional tools: lookup on PATH, a missing tool skipped, real processes
 * (small scripts standing in for a tool's binary) with their timeout, and the merge of their
 * findings with nmap's.
 */

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tools-run-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

function options(): ToolRunOptions & { lines: string[]; infos: string[]; warnings: string[] } {
  const lines: string[] = [];
  const infos: string[] = [];
  const warnings: string[] = [];
  return {
    ctx: { scanTime: new Date('2026-11-25T00:00:00Z'), workDir: dir, privileged: false, domains: [] },
    env: { PATH: dir },
    info: (m) => infos.push(m),
    warn: (m) => warnings.push(m),
    log: (l) => lines.push(l),
    lines,
    infos,
    warnings,
  };
}

const nmapFinding = (rule_id: string, port: number): ScanFinding => ({
  rule_id,
  severity: 'medium',
  host: '10.0.0.5',
  port,
  protocol: 'tcp',
  evidence: `ssl-enum-ciphers on ${port}`,
});
const toolFinding = (source: string, rule_id: string, port: number): SourcedFinding => ({
  rule_id,
  severity: 'high',
  host: '10.0.0.5',
  port,
  protocol: 'tcp',
  evidence: `${source}: saw it`,
  source,
});

describe('mergeToolFindings', () => {
  it('keeps one finding per host, port and rule, naming every source and adding their evidence', () => {
    const merged = mergeToolFindings(
      [nmapFinding('tls-deprecated-protocol', 443), nmapFinding('certificate-expired', 443)],
      [
        toolFinding('testssl.sh', 'tls-deprecated-protocol', 443),
        toolFinding('sslscan', 'tls-deprecated-protocol', 443),
        toolFinding('sslscan', 'tls-deprecated-protocol', 443),
        toolFinding('testssl.sh', 'tls-deprecated-protocol', 8443),
        toolFinding('testssl.sh', 'testssl:LUCKY13', 443),
        toolFinding('sslscan', 'testssl:LUCKY13', 443),
      ],
    );
    expect(merged).toEqual([
      {
        ...nmapFinding('tls-deprecated-protocol', 443),
        source: 'nmap',
        sources: ['nmap', 'testssl.sh', 'sslscan'],
        evidence: 'ssl-enum-ciphers on 443; testssl.sh: saw it; sslscan: saw it',
      },
      nmapFinding('certificate-expired', 443),
      toolFinding('testssl.sh', 'tls-deprecated-protocol', 8443),
      {
        ...toolFinding('testssl.sh', 'testssl:LUCKY13', 443),
        sources: ['testssl.sh', 'sslscan'],
        evidence: 'testssl.sh: saw it; sslscan: saw it',
      },
    ]);
  });

  it("leaves nmap's findings untouched when no tool adds anything", () => {
    const nmap = [nmapFinding('certificate-expired', 443)];
    expect(mergeToolFindings(nmap, [])).toEqual(nmap);
  });
});

const enrichment = (name: string, over: Partial<EnrichmentTool> = {}): EnrichmentTool => ({
  kind: 'enrichment',
  name,
  debianPackage: `${name}-pkg`,
  capability: `${name} checks`,
  timeoutMs: 10_000,
  plan: (hosts) => hosts.map((h) => ({ args: [h.addresses[0]?.addr ?? ''], label: h.addresses[0]?.addr ?? '' })),
  parse: (inv, out) => [
    { rule_id: 'echo', host: inv.label, evidence: `${name}: ${out.stdout.trim()}`, source: name } as SourcedFinding,
  ],
  ...over,
});

const up = (addr: string) =>
  ({
    status: { state: 'up' },
    addresses: [{ addr, addrtype: 'ipv4' }],
    hostnames: [],
    ports: [],
    os: [],
    hostscripts: [],
  }) as NmapHost;

describe('tool lookup', () => {
  it('finds a tool under any of its binary names in an absolute PATH directory only', () => {
    const file = script('testssl', 'exit 0');
    expect(findProgram(['testssl.sh', 'testssl'], { PATH: `relative:${dir}` })).toBe(file);
    expect(findProgram(['testssl'], { PATH: path.relative(process.cwd(), dir) })).toBeNull();
  });

  it('skips a missing tool with one info line, also in pipeline.log', () => {
    script('present', 'exit 0');
    const opts = options();
    const found = installedTools(
      [enrichment('present'), enrichment('absent-tool', { debianPackage: 'absent-pkg', capability: 'absent checks' })],
      opts,
    );
    expect(found.enrichment.map((t) => t.path)).toEqual([path.join(dir, 'present')]);
    expect(opts.infos).toEqual(['absent-tool not installed: skipped (absent checks; Debian package absent-pkg)']);
    expect(opts.lines).toEqual(['tool absent-tool not installed: skipped (absent checks; Debian package absent-pkg)']);
  });
});

describe('runEnrichment', () => {
  it('runs each invocation with its fixed argv and logs the command, timing and exit', async () => {
    const echo = script('echoer', 'echo "checked $1"');
    const opts = options();
    const found = await runEnrichment(
      [{ tool: enrichment('echoer'), path: echo }],
      [up('10.0.0.5'), up('10.0.0.6')],
      opts,
    );
    expect(found.map((f) => f.evidence)).toEqual(['echoer: checked 10.0.0.5', 'echoer: checked 10.0.0.6']);
    expect(opts.lines).toEqual([
      `tool echoer command ${echo} 10.0.0.5`,
      expect.stringMatching(/^tool echoer 10\.0\.0\.5 \d+ ms, exit 0$/),
      `tool echoer command ${echo} 10.0.0.6`,
      expect.stringMatching(/^tool echoer 10\.0\.0\.6 \d+ ms, exit 0$/),
    ]);
    expect(opts.warnings).toEqual([]);
    expect(opts.infos).toEqual([
      expect.stringMatching(/^echoer: 10\.0\.0\.[56] \(\d+ ms, exit 0\)$/),
      expect.stringMatching(/^echoer: 10\.0\.0\.[56] \(\d+ ms, exit 0\)$/),
    ]);
  });

  it('names each tool that ran (the coverage block lists them); one that could not start did not run', async () => {
    const echo = script('echoer', 'echo ok');
    const ran: string[] = [];
    const opts = { ...options(), ran: (t: string) => void ran.push(t) };
    await runEnrichment(
      [
        { tool: enrichment('echoer'), path: echo },
        { tool: enrichment('ghost'), path: path.join(dir, 'no-such-program') },
      ],
      [up('10.0.0.5')],
      opts,
    );
    expect(ran).toEqual(['echoer']);
  });

  it('turns a timeout and unreadable output into warnings, never a failure', async () => {
    const slow = script('slow', 'sleep 30');
    const garbled = script('garbled', 'echo nonsense');
    const opts = options();
    const found = await runEnrichment(
      [
        { tool: enrichment('slow', { timeoutMs: 300 }), path: slow },
        {
          tool: enrichment('garbled', {
            parse: () => {
              throw new Error('no <ssltest> in the output');
            },
          }),
          path: garbled,
        },
      ],
      [up('10.0.0.5')],
      opts,
    );
    expect(found).toEqual([{ rule_id: 'echo', host: '10.0.0.5', evidence: 'slow: ', source: 'slow' }]);
    expect(opts.warnings.sort()).toEqual([
      'garbled 10.0.0.5: output not understood (no <ssltest> in the output)',
      'slow 10.0.0.5: timed out after 300 ms; its partial output is used',
    ]);
    expect(opts.lines).toContainEqual(expect.stringMatching(/^tool slow 10\.0\.0\.5 \d+ ms, exit none, timed out$/));
  });

  it('runs the follow-ups a tool derives from its output, once, after the invocation that named them', async () => {
    const lister = script(
      'lister',
      'if [ "$1" = "-L" ]; then echo "share:docs"; echo "share:pub"; else echo "read $2"; fi',
    );
    const opts = options();
    const tool = enrichment('lister', {
      plan: () => [{ args: ['-L', '10.0.0.5'], label: '10.0.0.5' }],
      followUp: (_inv, out) =>
        out.stdout
          .trim()
          .split('\n')
          .map((l) => l.replace('share:', ''))
          .map((share) => ({ args: ['-r', share], label: `10.0.0.5 share ${share}` })),
    });
    const found = await runEnrichment([{ tool, path: lister }], [up('10.0.0.5')], opts);
    expect(found.map((f) => f.evidence)).toEqual([
      'lister: share:docs\nshare:pub',
      'lister: read docs',
      'lister: read pub',
    ]);
    expect(opts.lines.filter((l) => l.includes(' command '))).toEqual([
      `tool lister command ${lister} -L 10.0.0.5`,
      `tool lister command ${lister} -r docs`,
      `tool lister command ${lister} -r pub`,
    ]);
  });

  it('logs a tool with nothing to check', async () => {
    const opts = options();
    await runEnrichment([{ tool: enrichment('idle', { plan: () => [] }), path: '/bin/true' }], [], opts);
    expect(opts.lines).toEqual(['tool idle nothing to check']);
  });
});

describe('runDiscovery', () => {
  const discovery = (over: Partial<DiscoveryTool> = {}): DiscoveryTool => ({
    kind: 'discovery',
    name: 'finder',
    debianPackage: 'finder',
    capability: 'fast discovery',
    timeoutMs: 10_000,
    wants: (targets) => targets.some((t) => t.includes('/')),
    plan: (targets) => ({ args: [...targets], label: targets.join(',') }),
    parse: (out) =>
      out.stdout
        .trim()
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => {
          const [host = '', ports = ''] = l.split(' ');
          return { host, ports: ports.split(',').map(Number) };
        }),
    sweptPorts: () => '1-1024',
    ...over,
  });

  it('narrows nmap to the live hosts and open ports the tool found, and says so', async () => {
    const finder = script('finder', 'printf "10.0.0.9 443,22\\n10.0.0.7 80\\n"');
    const opts = options();
    const found = await runDiscovery([{ tool: discovery(), path: finder }], ['10.0.0.0/24'], opts);
    expect(found).toEqual({ targets: ['10.0.0.9', '10.0.0.7'], ports: 'T:22,80,443', swept: '1-1024' });
    const said = 'finder found 2 live hosts with 3 open TCP ports: nmap scans only those';
    expect(opts.infos).toEqual([expect.stringMatching(/^finder: 10\.0\.0\.0\/24 \(\d+ ms, exit 0\)$/), said]);
    expect(opts.lines).toContain(`tool ${said}`);
  });

  it('leaves the targets to nmap when no tool wants them or nothing was found', async () => {
    const empty = script('finder-empty', 'exit 0');
    const opts = options();
    expect(await runDiscovery([{ tool: discovery(), path: empty }], ['10.0.0.5'], opts)).toBeUndefined();
    expect(opts.lines).toEqual([]);
    expect(await runDiscovery([{ tool: discovery(), path: empty }], ['10.0.0.0/24'], opts)).toBeUndefined();
    expect(opts.infos).toEqual([
      expect.stringMatching(/^finder: 10\.0\.0\.0\/24 \(\d+ ms, exit 0\)$/),
      'finder found no live host with an open port: nmap scans every target',
    ]);
  });
});

describe('--domains', () => {
  it('accepts DNS names, lower-cased and without duplicates', () => {
    expect(parseDomains('Example.com,mail.example.org.,example.com')).toEqual(['example.com', 'mail.example.org']);
  });

  it.each(['-oX', 'localhost', 'a..b', 'exa mple.com', 'example.com;id', `${'a'.repeat(64)}.com`, ''])(
    'refuses %j',
    (bad) => {
      expect(() => parseDomains(bad)).toThrow(/^--domains: ".*" is not a DNS name \(e\.g\. example\.com\)$/);
    },
  );
});
