import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PORT_LIST_RULE } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, SVC } from '@svc/test-support/cli';

/** `svc scan` as a real process: every refusal happens before nmap could start. */

let dir: string;
/** A PATH holding only what bin/svc itself needs, so nmap is not on it. */
let bareBin: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-scan-cli-'));
  bareBin = path.join(dir, 'bin');
  await fs.mkdir(bareBin);
  for (const tool of ['bash', 'env', 'dirname', 'readlink'])
    await fs.symlink(path.join('/usr/bin', tool), path.join(bareBin, tool));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** Without nmap on PATH: a value the checks let through ends at "nmap not found", never in a scan. */
const scan = (args: string[], env: Record<string, string> = {}) =>
  runCli(SVC, ['scan', '--sessions-dir', path.join(dir, 'sessions'), ...args], { env: { PATH: bareBin, ...env } });

async function noSessions(): Promise<void> {
  await expect(fs.readdir(path.join(dir, 'sessions'))).rejects.toMatchObject({ code: 'ENOENT' });
}

describe('svc scan: argument validation', () => {
  it('is listed by svc --help', async () => {
    const r = await runCli(SVC, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}scan \[options\] +scan hosts with nmap, apply the detection$/m);
  });

  it.each([
    ['-sS', 'error: invalid target "-sS": starts with "-" (a scanner would read it as an option)'],
    [
      '10.0.0.1;id',
      'error: invalid target "10.0.0.1;id": contains characters outside letters, digits and ". : / -" (shell or nmap syntax)',
    ],
    [
      '--script=http-shellshock',
      'error: invalid target "--script=http-shellshock": starts with "-" (a scanner would read it as an option)',
    ],
    ['file:///etc/passwd', 'error: invalid target "file:///etc/passwd": a URL: give the host name or address only'],
    ['10.0.0.256', 'error: invalid target "10.0.0.256": not an address, CIDR block, IPv4 range or host name'],
    [
      'host.example:22',
      'error: invalid target "host.example:22": host:port: give the host only (the profile or --ports selects ports)',
    ],
    ['::ffff:10.0.0.1', 'error: invalid target "::ffff:10.0.0.1": an IPv4-mapped IPv6 address: give the IPv4 address'],
  ])('refuses the hostile target %s: exit 2 with the validator message', async (target, message) => {
    const r = await scan([`--targets=${target}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`${message}\n`);
    expect(r.stdout).toBe('');
    await noSessions();
  });

  // The portal's run_scan check gives the same words (packages/portal/tests/scan-targets-route.test.ts).
  it.each([
    ['0-255.0-255.0-255.0-255', 2 ** 32],
    ['0.0.0.0/0', 2 ** 32],
    ['10.0.0.0/8', 2 ** 24],
    ['10.0.0.0/16,10.1.0.1', 65_537],
  ])('refuses %s beyond the default budget of one /16: exit 2, nothing scanned', async (targets, n) => {
    const r = await scan(['--targets', targets]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: targets cover ${n} addresses, more than the 65536 allowed per run (SVC_SCAN_MAX_ADDRESSES)\n`,
    );
    expect(r.stdout).toBe('');
    await noSessions();
  });

  it('SVC_SCAN_MAX_ADDRESSES sets the budget, from the environment or a config file', async () => {
    const small = await scan(['--targets', '10.0.0.0/23'], { SVC_SCAN_MAX_ADDRESSES: '256' });
    expect(small.code).toBe(2);
    expect(small.stderr).toBe(
      'error: targets cover 512 addresses, more than the 256 allowed per run (SVC_SCAN_MAX_ADDRESSES)\n',
    );
    const conf = path.join(dir, 'budget.conf');
    await fs.writeFile(conf, 'SVC_SCAN_MAX_ADDRESSES=16777216\n');
    // Within the raised budget the targets pass, and the run goes on to look for nmap.
    const large = await scan(['--targets', '10.0.0.0/8', '-c', conf]);
    expect(large.code).toBe(1);
    expect(large.stderr).toMatch(/^error: nmap not found on PATH/);
    const bad = await scan(['--targets', '10.0.0.1'], { SVC_SCAN_MAX_ADDRESSES: '0' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('error: SVC_SCAN_MAX_ADDRESSES must be a whole number from 1 to 16777216 (got "0")\n');
  });

  it('refuses more than 256 entries', async () => {
    const many = Array.from({ length: 257 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(',');
    const r = await scan(['--targets', many]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: too many targets: 257 entries, at most 256 per run\n');
  });

  it('refuses a mixed IPv4/IPv6 list', async () => {
    const r = await scan(['--targets', '10.0.0.1,::1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: IPv4 and IPv6 targets cannot be scanned in one run\n');
  });

  it('requires --targets', async () => {
    const r = await scan([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --targets is required (e.g. --targets 192.0.2.10,192.0.2.0/28)\n');
  });

  it('refuses an unknown profile, naming the known ones', async () => {
    const r = await scan(['--targets', '10.0.0.1', '-P', 'stealth']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: unknown scan profile "stealth": use one of [a-z_, ]*quick_recon[a-z_, ]*\n$/);
    expect(r.stderr).toContain('full_recon');
  });

  it('refuses a port list holding nmap syntax', async () => {
    const r = await scan(['--targets', '10.0.0.1', '--ports', '22 --script=x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: invalid port list "22 --script=x": must be ${PORT_LIST_RULE}\n`);
  });

  it('refuses a --domains value that is not a DNS name', async () => {
    const r = await scan(['--targets', '10.0.0.1', '--domains', 'example.com,-t AXFR']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: --domains: "-t AXFR" is not a DNS name (e.g. example.com)\n');
    await noSessions();
  });

  it('refuses a missing exceptions file', async () => {
    const missing = path.join(dir, 'no-such-exceptions.json');
    const r = await scan(['--targets', '10.0.0.1', '--exceptions', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: exceptions file not readable: ${missing}\n`);
    await noSessions();
  });
});

describe('svc scan: nmap missing', () => {
  it('exits 1 naming dependency_check.sh when nmap is not on PATH', async () => {
    const r = await scan(['--targets', '10.0.0.1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: nmap not found on PATH: install it (Debian: apt-get install nmap); tools/dependency_check.sh lists what the client tools need\n',
    );
    await noSessions();
  });
});
