import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { type NmapHost, runNmap } from '../src/scanner/index.ts';
import { dig } from '../src/scanner/tools/dig.ts';
import {
  EXTERNAL_TOOLS,
  type EnrichmentTool,
  runTool,
  type ToolContext,
  type ToolInvocation,
  type ToolOutput,
} from '../src/scanner/tools/index.ts';
import { masscan } from '../src/scanner/tools/masscan.ts';
import { smbclient } from '../src/scanner/tools/smbclient.ts';
import { snmpwalk } from '../src/scanner/tools/snmpwalk.ts';
import { type CliResult, runCli, SVC } from '@svc/test-support/cli';
import { type HostRole, type Netlab, startNetlab } from '@svc/test-support/netlab';

/**
 * snmpwalk, smbclient, dig and masscan run for real against the test network, inside its scanner
 * namespace, on what a real nmap scan of it found. Needs root. With SVC_CAPTURE_TOOL_FIXTURES=1
 * it also writes each tool's invocation and output to tests/fixtures/tools/ (the parser tests' input).
 */

const PORTS = 'T:21-23,53,80,443,445,2222,5432,6379,11211,U:53,161';
const DOMAINS = ['netlab.test', 'relaxed.netlab.test', 'strict.netlab.test'];
const CAPTURE = process.env['SVC_CAPTURE_TOOL_FIXTURES'] === '1';
const FIXTURES = fileURLToPath(new URL('./fixtures/tools/', import.meta.url));

let lab: Netlab;
let hosts: NmapHost[];
let ctx: ToolContext;
const ran: { tool: string; invocation: ToolInvocation; output: ToolOutput }[] = [];
const findings: Record<string, ScanFinding[]> = {};

const BINARIES: Record<string, string> = {
  snmpwalk: '/usr/bin/snmpwalk',
  smbclient: '/usr/bin/smbclient',
  dig: '/usr/bin/dig',
  masscan: '/usr/bin/masscan',
};

async function run(tool: string, invocation: ToolInvocation, timeoutMs: number): Promise<ToolOutput> {
  const output = await runTool({
    path: BINARIES[tool] as string,
    args: invocation.args,
    timeoutMs,
    wrapper: lab.wrapper,
  });
  ran.push({ tool, invocation, output });
  return output;
}

/** Plans on nmap's hosts, runs every invocation and its follow-ups, and parses them all. */
async function enrich(tool: EnrichmentTool): Promise<ScanFinding[]> {
  const out: ScanFinding[] = [];
  for (const invocation of tool.plan(hosts, ctx)) {
    const output = await run(tool.name, invocation, tool.timeoutMs);
    out.push(...tool.parse(invocation, output, ctx));
    for (const next of tool.followUp?.(invocation, output, ctx) ?? []) {
      out.push(...tool.parse(next, await run(tool.name, next, tool.timeoutMs), ctx));
    }
  }
  return out;
}

function capture(): void {
  mkdirSync(FIXTURES, { recursive: true });
  writeFileSync(`${FIXTURES}nmap-hosts.json`, `${JSON.stringify(hosts, null, 2)}\n`);
  const names = new Map<string, number>();
  for (const { tool, invocation, output } of ran) {
    const what = invocation.host === undefined ? 'sweep' : invocation.label.replace(/^\S+ /, '');
    const base = `${tool}-${what.replace(/[^a-z0-9.]+/gi, '-').replace(/^-|-$/g, '')}`.toLowerCase();
    const n = (names.get(base) ?? 0) + 1;
    names.set(base, n);
    const { durationMs: _, ...stable } = output;
    writeFileSync(
      `${FIXTURES}${base}${n > 1 ? `-${n}` : ''}.json`,
      `${JSON.stringify({ invocation, output: stable }, null, 2)}\n`,
    );
  }
}

beforeAll(async () => {
  lab = await startNetlab({ dns: true, gateway: true });
  const roles: HostRole[] = ['legacy', 'smb', 'dns', 'hardened'];
  const nmap = await runNmap({
    targets: roles.map((r) => lab.hosts[r].ip),
    profile: 'quick_recon',
    ports: 'T:53,445,U:53,161',
    wrapper: lab.wrapper,
    scope: [lab.subnet],
    timeoutMs: 3 * 60_000,
  });
  hosts = nmap.hosts;
  ctx = {
    scanTime: new Date(nmap.finishedAt),
    workDir: lab.dir,
    privileged: true,
    domains: DOMAINS,
    ports: PORTS,
  };
  for (const tool of [snmpwalk, smbclient, dig]) findings[tool.name] = await enrich(tool);
  if (CAPTURE) capture();
}, 6 * 60_000);

afterAll(() => lab?.stop());

describe('svc scan with the tools installed, inside the scanner namespace', () => {
  let dir: string;
  let r: CliResult;
  let doc: { findings: (ScanFinding & { source?: string })[] };
  let log: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-scan-tools2-'));
    const targets = (['legacy', 'smb', 'dns', 'hardened'] as const).map((role) => ipOf(role));
    if (!targets.every((t) => t.startsWith('10.231.0.'))) throw new Error('refusing to scan outside the test network');
    r = await runCli(
      '/usr/sbin/ip',
      [
        'netns',
        'exec',
        lab.scannerNs,
        SVC,
        'scan',
        '--targets',
        targets.join(','),
        '--ports',
        'T:53,445,U:53,161',
      ].concat(['--domains', 'netlab.test,relaxed.netlab.test', '--json']),
      { env: { SVC_SESSIONS_DIR: join(dir, 'sessions') }, timeoutMs: 5 * 60_000 },
    );
    const session = (JSON.parse(r.stdout) as { path: string }).path;
    doc = JSON.parse(readFileSync(join(session, 'session_results.json'), 'utf8')) as typeof doc;
    log = readFileSync(join(session, 'pipeline.log'), 'utf8');
  }, 6 * 60_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("merges each tool's findings into the session with the tool as the source", () => {
    expect(r.code, r.stderr).toBe(0);
    const bySource = (source: string) =>
      doc.findings
        .filter((f) => f.source === source)
        .map((f) => `${f.host} ${f.rule_id}`)
        .sort();
    expect(bySource('snmpwalk')).toEqual(
      ['snmp-exposes-interfaces', 'snmp-exposes-processes', 'snmp-exposes-software', 'snmp-exposes-system'].map(
        (id) => `${ipOf('legacy')} ${id}`,
      ),
    );
    expect(bySource('smbclient')).toContain(`${ipOf('smb')} smb-anonymous-share-list`);
    expect(bySource('dig')).toEqual(
      [
        'dns-zone-transfer:netlab.test',
        'email-dmarc-missing:netlab.test',
        'email-dmarc-policy-none:relaxed.netlab.test',
        'email-spf-allow-all:relaxed.netlab.test',
        'email-spf-missing:netlab.test',
      ].map((id) => `${ipOf('dns')} ${id}`),
    );
    expect(doc.findings.filter((f) => f.host === ipOf('hardened'))).toEqual([]);
  });

  it('logs each tool command in pipeline.log; masscan is not used for four targets', () => {
    expect(log).toContain(`tool snmpwalk command /usr/bin/snmpwalk -v2c -c public`);
    expect(log).toContain(`tool smbclient command /usr/bin/smbclient -N -g -L`);
    expect(log).toContain(`tool dig command /usr/bin/dig @${ipOf('dns')}`);
    expect(log).not.toMatch(/tool masscan command/);
  });
});

const ipOf = (role: HostRole) => lab.hosts[role].ip;
const ruleIds = (list: readonly ScanFinding[]) => list.map((f) => `${f.host} ${f.rule_id} ${f.severity}`).sort();

describe('the tools are registered', () => {
  it('EXTERNAL_TOOLS holds masscan first (discovery), then the enrichment tools', () => {
    expect(EXTERNAL_TOOLS.map((t) => `${t.kind}:${t.name}:${t.debianPackage}`)).toEqual(
      expect.arrayContaining([
        'discovery:masscan:masscan',
        'enrichment:snmpwalk:snmp',
        'enrichment:smbclient:smbclient',
        'enrichment:dig:bind9-dnsutils',
      ]),
    );
  });
});

describe('snmpwalk on the SNMP agent answering "public"', () => {
  it('walks only the legacy host, with community public, inside the scanner namespace', () => {
    const walks = ran.filter((r) => r.tool === 'snmpwalk');
    expect(walks.map((r) => r.invocation.args.at(-1))).toEqual([
      '1.3.6.1.2.1.1',
      '1.3.6.1.2.1.2.2.1.2',
      '1.3.6.1.2.1.25.4.2.1.4',
      '1.3.6.1.2.1.25.6.3.1.2',
    ]);
    for (const w of walks) {
      expect(w.invocation.args.slice(0, 3)).toEqual(['-v2c', '-c', 'public']);
      expect(w.invocation.args.at(-2)).toBe(`udp:${ipOf('legacy')}:161`);
      expect(w.output.exitCode).toBe(0);
    }
  });

  it('reports the system, interfaces, processes and software the community exposes, as snmpwalk', () => {
    const list = findings['snmpwalk'] ?? [];
    expect(ruleIds(list)).toEqual(
      [
        'snmp-exposes-interfaces low',
        'snmp-exposes-processes medium',
        'snmp-exposes-software medium',
        'snmp-exposes-system low',
      ].map((r) => `${ipOf('legacy')} ${r}`),
    );
    for (const f of list) {
      expect(f).toMatchObject({ source: 'snmpwalk', port: 161, protocol: 'udp', service: 'snmp' });
    }
    const by = (id: string) => list.find((f) => f.rule_id === id)?.evidence ?? '';
    expect(by('snmp-exposes-system')).toContain('sysLocation: "netlab"');
    expect(by('snmp-exposes-system')).toContain('sysContact: "none"');
    expect(by('snmp-exposes-system')).toMatch(/sysDescr: "Linux /);
    expect(by('snmp-exposes-interfaces')).toMatch(
      /^snmpwalk -v2c -c public 1\.3\.6\.1\.2\.1\.2\.2\.1\.2 .*: 2 interfaces: lo, eth0$/,
    );
    expect(by('snmp-exposes-processes')).toMatch(/\(running processes\): 1 running processes: \/usr\/sbin\/snmpd$/);
    // The netlab host is this machine's root file system: which packages come first depends on
    // what is installed, so only the shape (Debian's name_version_arch) is pinned.
    expect(by('snmp-exposes-software')).toMatch(
      /\(installed software\): \d{3,} installed software: [a-z0-9][a-z0-9+.-]*_\S+_(all|amd64), /,
    );
  });
});

describe('smbclient on the Samba host', () => {
  it('lists the shares anonymously and reads the guest share, with listing only', () => {
    const calls = ran.filter((r) => r.tool === 'smbclient').map((r) => r.invocation.args);
    expect(calls).toEqual([
      ['-N', '-g', '-L', `//${ipOf('smb')}`, '-p', '445', '-m', 'SMB3', '-t', '10'],
      ['-N', `//${ipOf('smb')}/public`, '-p', '445', '-m', 'SMB3', '-t', '10', '-c', 'ls'],
    ]);
  });

  it('reports the anonymous share listing and the readable share, as smbclient', () => {
    const list = findings['smbclient'] ?? [];
    expect(ruleIds(list)).toEqual([
      `${ipOf('smb')} smb-anonymous-share-list medium`,
      `${ipOf('smb')} smb-anonymous-share-readable:public high`,
    ]);
    for (const f of list) expect(f).toMatchObject({ source: 'smbclient', port: 445, protocol: 'tcp' });
    expect(list[0]?.evidence).toMatch(/^smbclient -N -L listed 2 shares: public \(Disk\), IPC\$ \(IPC: IPC Service/);
    expect(list[1]?.evidence).toBe(`smbclient -N //${ipOf('smb')}/public -c ls listed 1 entries: README.txt`);
  });
});

describe('dig against the BIND server', () => {
  it('asks only the found server, without recursion, for each domain', () => {
    const calls = ran.filter((r) => r.tool === 'dig').map((r) => r.invocation.args);
    expect(calls).toHaveLength(9);
    for (const args of calls) {
      expect(args.slice(0, 7)).toEqual([
        `@${ipOf('dns')}`,
        '-p',
        '53',
        '+norecurse',
        '+time=3',
        '+tries=1',
        '+nocookie',
      ]);
    }
  });

  it('finds the zone transfer with its record count, missing SPF/DMARC, SPF +all and DMARC p=none', () => {
    const list = findings['dig'] ?? [];
    expect(ruleIds(list)).toEqual(
      [
        'dns-zone-transfer:netlab.test high',
        'email-dmarc-missing:netlab.test medium',
        'email-dmarc-policy-none:relaxed.netlab.test low',
        'email-spf-allow-all:relaxed.netlab.test high',
        'email-spf-missing:netlab.test medium',
      ].map((r) => `${ipOf('dns')} ${r}`),
    );
    for (const f of list) expect(f).toMatchObject({ source: 'dig', port: 53, service: 'domain' });
    const axfr = list.find((f) => f.rule_id === 'dns-zone-transfer:netlab.test');
    // SOA twice, NS, four TXT at the apex and the subdomains, ns plus the seven hosts' A records.
    expect(axfr?.evidence).toMatch(new RegExp(`^dig @${ipOf('dns')} AXFR netlab.test returned 16 records; names: `));
    expect(list.find((f) => f.rule_id === 'email-spf-allow-all:relaxed.netlab.test')?.evidence).toBe(
      `dig @${ipOf('dns')} TXT relaxed.netlab.test: "v=spf1 +all"`,
    );
  });

  it('plans nothing without --domains', () => {
    expect(dig.plan(hosts, { ...ctx, domains: [] })).toEqual([]);
  });
});

describe('the hardened host', () => {
  it('gets no invocation and no finding from any tool', () => {
    expect(ran.filter((r) => r.invocation.host === ipOf('hardened'))).toEqual([]);
    expect(
      Object.values(findings)
        .flat()
        .filter((f) => f.host === ipOf('hardened')),
    ).toEqual([]);
  });
});

describe('masscan discovery of the test network', () => {
  it('wants more than 256 addresses, as root, of IPv4 only', () => {
    expect(masscan.wants([lab.subnet], ctx)).toBe(false);
    expect(masscan.wants(['10.231.0.0/23'], ctx)).toBe(true);
    expect(masscan.wants(['10.231.0.0/23'], { ...ctx, privileged: false })).toBe(false);
    expect(masscan.wants(['10.231.0.0/23', 'host.netlab.test'], ctx)).toBe(false);
  });

  it('finds exactly the lab hosts with their open TCP ports', async () => {
    const invocation = masscan.plan([lab.subnet], ctx);
    expect(invocation.args).toEqual(
      [
        '-p',
        '21-23,53,80,443,445,2222,5432,6379,11211',
        '--rate',
        '5000',
        '--retries',
        '1',
        '--wait',
        '3',
        '--open-only',
      ].concat('-oL', '-', lab.subnet),
    );
    const output = await run('masscan', invocation, 60_000);
    if (CAPTURE) capture();
    expect(output.exitCode).toBe(0);
    expect(masscan.parse(output, ctx)).toEqual([
      { host: ipOf('legacy'), ports: [21, 23] },
      { host: ipOf('data'), ports: [5432, 6379, 11211] },
      { host: ipOf('web'), ports: [80, 443] },
      { host: ipOf('ssh'), ports: [22, 2222] },
      { host: ipOf('smb'), ports: [445] },
      { host: ipOf('dns'), ports: [53] },
      { host: ipOf('hardened'), ports: [22, 443] },
    ]);
  });
});
