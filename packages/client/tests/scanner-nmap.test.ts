import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isScanPortList, PORT_LIST_RULE } from '@svc/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  assertInScope,
  buildNmapArgs,
  formatCommand,
  NmapFailedError,
  NmapMissingError,
  OWN_RULE_SCRIPTS,
  PROFILES,
  parseTargets,
  REQUIRED_SCRIPTS,
  runNmap,
  TargetError,
  validatePorts,
  validateTarget,
} from '../src/scanner/index.ts';

// The rule itself is tested table by table in packages/protocol/tests/scan-targets.test.ts.
describe('target validation (the protocol rule as TargetError)', () => {
  it('validateTarget gives the kind and size, or throws TargetError with the rule message', () => {
    expect(validateTarget('10.231.0.0/24')).toEqual({ value: '10.231.0.0/24', kind: 'cidr4', addresses: 256 });
    expect(validateTarget('192.168.0-3.1-254')).toEqual({
      value: '192.168.0-3.1-254',
      kind: 'range4',
      addresses: 1016,
    });
    expect(() => validateTarget('-oN /tmp/x')).toThrow(TargetError);
    expect(() => validateTarget('-oN /tmp/x')).toThrow(
      'invalid target "-oN /tmp/x": starts with "-" (a scanner would read it as an option)',
    );
  });

  it('splits a comma-separated list, refuses one bad entry in it, and applies a budget when given', () => {
    expect(parseTargets('10.0.0.1, 10.0.1.0/24,', null).map((t) => t.value)).toEqual(['10.0.0.1', '10.0.1.0/24']);
    expect(() => parseTargets('10.0.0.1,-oN /tmp/x', null)).toThrow('starts with "-"');
    expect(() => parseTargets(' , ', null)).toThrow('no targets were specified');
    expect(() => parseTargets('10.0.0.1,::1', null)).toThrow('IPv4 and IPv6 targets cannot be scanned in one run');
    expect(parseTargets('10.0.0.0/8', null)).toHaveLength(1);
    expect(() => parseTargets('10.0.0.0/8', { maxAddresses: 65_536 })).toThrow(
      'targets cover 16777216 addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)',
    );
  });

  it('keeps targets inside a scope', () => {
    const scope = ['10.231.0.0/24'];
    const list = (t: string) => parseTargets(t, null);
    expect(() => assertInScope(list('10.231.0.10,10.231.0.0/25,10.231.0.1-254'), scope)).not.toThrow();
    expect(() => assertInScope(list('10.231.1.1'), scope)).toThrow('outside the allowed scope 10.231.0.0/24');
    expect(() => assertInScope(list('10.231.0.0/23'), scope)).toThrow('outside the allowed scope');
    expect(() => assertInScope(list('10.231.0.250-255,10.231.1.0-3'), scope)).toThrow('"10.231.1.0-3"');
    expect(() => assertInScope(list('example.org'), scope)).toThrow('outside the allowed scope');
  });
});

describe('nmap argument lists', () => {
  const targets = parseTargets('10.231.0.10,10.231.0.11', null);
  // Where runNmap would have written the scanner's own NSE scripts for the run.
  const scriptDir = '/tmp/svc-nse-x';

  it('quick_recon as root: SYN and UDP scan, the explicit high ports, every rule script, targets after --', () => {
    const args = buildNmapArgs(PROFILES.quick_recon, targets, { privileged: true, scriptDir });
    expect(args).toEqual([
      '-sS',
      '-sU',
      '-sV',
      '--version-light',
      '-n',
      '-p',
      'T:21-23,25,80,111,139,443,445,512-514,873,990,1433,2049,3306,3389,5432,5900,6379,8080,8443,9200,11211,27017,U:161',
      '--script',
      `${REQUIRED_SCRIPTS.join(',')},/tmp/svc-nse-x/svc-ssh-host-keys.nse`,
      '-T4',
      '--max-retries',
      '2',
      '--host-timeout',
      '15m',
      '--script-timeout',
      '2m',
      '--stats-every',
      '10s',
      '-oX',
      '-',
      '--',
      '10.231.0.10',
      '10.231.0.11',
    ]);
    for (const port of ['6379', '11211', '27017']) expect(args[6]).toContain(port);
  });

  it('no profile passes --open: a host without an open port must still be reported as up (coverage)', () => {
    for (const profile of Object.values(PROFILES))
      for (const privileged of [true, false])
        expect(buildNmapArgs(profile, targets, { privileged, scriptDir }), profile.name).not.toContain('--open');
  });

  it("a profile with the scanner's own scripts is not built without the directory they were written to", () => {
    expect(OWN_RULE_SCRIPTS).toEqual(['svc-ssh-host-keys']);
    expect(() => buildNmapArgs(PROFILES.quick_recon, targets, { privileged: true })).toThrow(
      "profile quick_recon runs the scanner's own NSE scripts: pass scriptDir",
    );
    expect(buildNmapArgs(PROFILES.discovery, targets, { privileged: true })).not.toContain('--script');
  });

  it('full_recon as root: all TCP ports, OS guess, default scripts without external ones plus the rule scripts', () => {
    const args = buildNmapArgs(PROFILES.full_recon, targets, { privileged: true, statsEverySeconds: 5, scriptDir });
    expect(args.slice(0, 5)).toEqual(['-sS', '-sU', '-sV', '-O', '--reason']);
    expect(args[args.indexOf('-p') + 1]).toBe('T:1-65535,U:161');
    const [expression = '', ...files] = (args[args.indexOf('--script') + 1] ?? '').split(',');
    expect(expression.startsWith('(default and not external) or ')).toBe(true);
    for (const s of REQUIRED_SCRIPTS) expect(expression.split(' or ')).toContain(s);
    expect(files).toEqual(['/tmp/svc-nse-x/svc-ssh-host-keys.nse']);
    expect(args[args.indexOf('--stats-every') + 1]).toBe('5s');
  });

  it('as a normal user: connect scan, no UDP, no OS guess, UDP ports dropped', () => {
    const quick = buildNmapArgs(PROFILES.quick_recon, targets, { privileged: false, scriptDir });
    expect(quick.slice(0, 6)).toEqual(['-sT', '--unprivileged', '-sV', '--version-light', '-n', '-p']);
    expect(quick).not.toContain('-sS');
    expect(quick).not.toContain('-sU');
    expect(quick[quick.indexOf('-p') + 1]).toBe(
      '21-23,25,80,111,139,443,445,512-514,873,990,1433,2049,3306,3389,5432,5900,6379,8080,8443,9200,11211,27017',
    );
    const full = buildNmapArgs(PROFILES.full_recon, targets, { privileged: false, scriptDir });
    expect(full).not.toContain('-O');
    expect(full[full.indexOf('-p') + 1]).toBe('1-65535');
  });

  it('a narrower port list replaces the profile ports; IPv6 targets add -6', () => {
    const args = buildNmapArgs(PROFILES.quick_recon, parseTargets('fe80::1', null), {
      privileged: true,
      ports: 'T:22,2222,U:161',
      scriptDir,
    });
    expect(args[args.indexOf('-p') + 1]).toBe('T:22,2222,U:161');
    expect(args).toContain('-6');
    expect(args.slice(-2)).toEqual(['--', 'fe80::1']);
    expect(() =>
      buildNmapArgs(PROFILES.quick_recon, targets, { privileged: false, ports: 'U:161', scriptDir }),
    ).toThrow('no TCP port left to scan without root');
  });

  it.each(['22 -oN x', '22,--script=x', '-1', '70000', '22-21', 'T:22;id', ''])('refuses the port list %j', (p) => {
    expect(() => validatePorts(p)).toThrow('invalid port list');
  });

  it("is the protocol's one rule (isScanPortList), the one run_scan's ports are checked with", () => {
    const long = `${'22,'.repeat(400)}22`;
    expect(isScanPortList(long)).toBe(false);
    expect(() => validatePorts(long)).toThrow(`invalid port list "${long}": must be ${PORT_LIST_RULE}`);
    expect(validatePorts('T:22,80,8000-8100,U:161')).toBe('T:22,80,8000-8100,U:161');
  });

  it('quotes a command for the log without changing plain words', () => {
    expect(formatCommand(['ip', 'netns', 'exec', 'ns-1', 'nmap', '--script', 'a or b', "it's"])).toBe(
      `ip netns exec ns-1 nmap --script 'a or b' 'it'\\''s'`,
    );
  });
});

const TRUNCATED = path.join(import.meta.dirname, 'fixtures', 'nmap', 'truncated.xml');

/** A bash script standing in for nmap, in a directory removed after the test; `dir` holds what it records. */
function fakeNmap(body: (dir: string) => string): { dir: string; fake: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fake-nmap-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const fake = path.join(dir, 'nmap');
  fs.writeFileSync(fake, `#!/bin/bash\n${body(dir)}`, { mode: 0o755 });
  return { dir, fake };
}

describe('runNmap before nmap starts', () => {
  it('refuses hostile targets before looking for nmap', async () => {
    await expect(
      runNmap({ targets: ['-oN /tmp/x'], profile: 'quick_recon', nmapPath: '/nonexistent' }),
    ).rejects.toThrow(TargetError);
  });

  it('names dependency_check.sh when nmap is missing', async () => {
    const run = runNmap({ targets: '127.0.0.1', profile: 'quick_recon', nmapPath: '/nonexistent/nmap' });
    await expect(run).rejects.toThrow(NmapMissingError);
    await expect(run).rejects.toThrow('nmap not found at /nonexistent/nmap');
    await expect(run).rejects.toThrow('tools/dependency_check.sh');
  });

  it('throws NmapFailedError with the message of nmap when nmap refuses its arguments (nothing is scanned)', async () => {
    const profile = { ...PROFILES.discovery, limits: ['--no-such-option'] };
    const run = runNmap({ targets: '127.0.0.1', profile, privileged: false, timeoutMs: 30_000 });
    await expect(run).rejects.toThrow(NmapFailedError);
    await expect(run).rejects.toMatchObject({ exitCode: 255 });
    await expect(run).rejects.toThrow('nmap exited with 255');
  });

  it('streams the XML through the parser and keeps the end of stderr: a cut-short run is incomplete, its warnings kept', async () => {
    // 100 kB of noise first: only stderr's tail is kept, and the warning is at its end.
    const { fake } = fakeNmap(
      () => `cat '${TRUNCATED}'\nhead -c 100000 /dev/zero | tr '\\0' x >&2\necho >&2\necho 'Warning: last words' >&2\n`,
    );
    const hosts: string[] = [];
    const r = await runNmap({
      targets: '127.0.0.1',
      profile: 'discovery',
      privileged: false,
      nmapPath: fake,
      timeoutMs: 60_000,
      onHost: (h) => hosts.push(h.addresses[0]?.addr ?? ''),
    });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, complete: false, warnings: ['Warning: last words'] });
    expect(hosts).toHaveLength(1);
  });

  it('output that is not an XML report fails the run as nmap failing, saying so, instead of as an unexpected error', async () => {
    const { fake } = fakeNmap(() => 'echo "Nmap version 7.93 ( https://nmap.org )"\n');
    const run = runNmap({
      targets: '127.0.0.1',
      profile: 'discovery',
      privileged: false,
      nmapPath: fake,
      timeoutMs: 60_000,
    });
    await expect(run).rejects.toBeInstanceOf(NmapFailedError);
    await expect(run).rejects.toThrow(
      `the output of ${fake} is not nmap's XML report (2:0: text data outside of root node.)`,
    );
  });

  it("gives nmap the scanner's own scripts in a private directory for the run only, and removes it after", async () => {
    // Records the file after --script's last comma and its directory with their modes, then reports.
    const { dir, fake } = fakeNmap(
      (d) => `while [ "$1" != --script ]; do shift; done
file=\${2##*,}
stat -c '%a %n' "$(dirname "$file")" "$file" > '${d}/seen'
cp "$file" '${d}/script.nse'
cat '${TRUNCATED}'
`,
    );
    await runNmap({
      targets: '127.0.0.1',
      profile: 'quick_recon',
      privileged: false,
      nmapPath: fake,
      timeoutMs: 60_000,
    });
    const [dirLine = '', fileLine = ''] = fs.readFileSync(path.join(dir, 'seen'), 'utf8').trim().split('\n');
    expect(dirLine).toMatch(new RegExp(`^700 ${os.tmpdir()}/svc-nse-\\w+$`));
    expect(fileLine).toBe(`600 ${dirLine.slice(4)}/svc-ssh-host-keys.nse`);
    expect(fs.existsSync(dirLine.slice(4))).toBe(false);
    const script = fs.readFileSync(path.join(dir, 'script.nse'), 'utf8');
    expect(script).toContain('portrule = shortport.ssh');
    expect(script).toContain('socket:send("SSH-2.0-svc_SSH_Host_Keys\\r\\n")');
  });

  it('refuses an unknown profile', async () => {
    await expect(runNmap({ targets: '127.0.0.1', profile: 'everything' })).rejects.toThrow(
      'unknown scan profile "everything": use one of quick_recon, full_recon, discovery',
    );
  });
});
