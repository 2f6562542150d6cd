import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TOOLS } from '../src/host-checks/tools.ts';
import { runCli, tempHome, tool } from '@svc/test-support/cli';
import { CORE_TOOLS, fakeAptGet, makeBinDir, SHIM_TOOLS, type BinDir } from './helpers/host-bin.ts';
import { startPty, type PtySession } from './helpers/pty.ts';

/**
 * dependency_check.sh run as a real process with a PATH made to order: the shim tools and
 * nmap are symlinks to the real programs, the core tools are stand-in scripts (only their
 * presence on the PATH counts), no optional tool is there, and `apt-get` is a fake that logs
 * its arguments and, on install, symlinks the real nmap into the dir. Nothing on the machine
 * is installed or changed.
 */
const DEP = tool('dependency_check.sh');
const OPTIONAL = TOOLS.filter((t) => t.tier === 'optional');
const INSTALL_NMAP = 'DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=120 nmap';
const ESC = '\x1b[';

let bin: BinDir;
let aptLog: string;
let home: string;

function envOf(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: bin.dir, HOME: home, LANG: 'C.UTF-8', ...extra };
}

beforeEach(async () => {
  bin = makeBinDir(SHIM_TOOLS);
  for (const t of CORE_TOOLS) bin.script(t, '#!/bin/sh\nexit 0\n');
  aptLog = path.join(bin.dir, 'apt-get.log');
  fakeAptGet(bin, aptLog, { provides: ['nmap'] });
  home = await tempHome();
});

afterEach(() => {
  bin.remove();
  fs.rmSync(home, { recursive: true, force: true });
});

describe('dependency_check.sh with the required tools present', () => {
  beforeEach(() => {
    expect(bin.link('nmap')).toBe(true);
  });

  it('exits 0 and reports every missing optional tool as a skipped capability', async () => {
    const r = await runCli(DEP, [], { env: envOf(), home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^Required tools\n {2}ok {7}nmap +\S+\/nmap$/m);
    expect(r.stdout).toContain(`Skipped capabilities (${OPTIONAL.length} optional tools missing)`);
    for (const t of OPTIONAL) expect(r.stdout).toContain(`  - ${t.capability} (${t.id}; `);
    // Package names are the detected manager's (apt here): dig comes from dnsutils.
    expect(r.stdout).toContain('(dig; apt package dnsutils)');
    expect(r.stdout).toContain(
      '  - full TLS audit of each TLS service: protocols, ciphers, certificate, known TLS vulnerabilities (testssl.sh; apt package testssl.sh)',
    );
    // No scan uses nikto or nuclei, so they are not listed.
    expect(r.stdout).not.toMatch(/nikto|nuclei/);
    expect(r.stdout).toMatch(/Required and core tools present; 7 optional tools missing\n$/);
    expect(r.stdout).not.toContain(ESC);
    expect(fs.existsSync(aptLog)).toBe(false);
  });

  it('--json lists the tiers, the missing tools and the skipped capabilities', async () => {
    bin.script('sslscan', '#!/bin/sh\nexit 0\n');
    const r = await runCli(DEP, ['--json'], { env: envOf(), home });
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(true);
    expect(doc.package_manager).toBe('apt');
    expect(doc.missing).toEqual({
      required: [],
      core: [],
      optional: OPTIONAL.map((t) => t.id).filter((id) => id !== 'sslscan'),
    });
    expect(doc.tools.find((t: { name: string }) => t.name === 'nmap')).toMatchObject({
      tier: 'required',
      present: true,
      path: path.join(bin.dir, 'nmap'),
    });
    expect(doc.tools.find((t: { name: string }) => t.name === 'sslscan')).toMatchObject({
      tier: 'optional',
      present: true,
    });
    expect(doc.skipped_capabilities).toHaveLength(OPTIONAL.length - 1);
    expect(doc.skipped_capabilities).toContainEqual({
      tool: 'dig',
      capability: 'DNS record checks: zone transfer, SPF, DMARC',
      package: 'dnsutils',
      homepage: null,
    });
    expect(doc.install_commands.required_and_core).toBeNull();
    expect(doc.install_commands.optional).toMatch(
      /^DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=120 testssl\.sh whatweb masscan dnsutils snmp smbclient$/,
    );
  });

  it('a missing core tool is a warning naming the lost capability, still exit 0', async () => {
    fs.rmSync(path.join(bin.dir, 'jq'));
    const r = await runCli(DEP, [], { env: envOf(), home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/MISSING {2}jq +agent command handling .* \(apt package jq\)/);
    expect(r.stdout).toContain(
      'Missing: jq (core); install with: DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=120 jq',
    );
    expect(r.stderr).toBe(
      'warning: core tools missing: jq (agent command handling and session JSON post-processing in shell hooks)\n',
    );
  });

  it('-h prints usage and exits 0; an unknown option exits 2', async () => {
    const help = await runCli(DEP, ['-h'], { env: envOf(), home });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: svc dependency-check [options]');
    expect(help.stdout).toContain('--json');
    const bad = await runCli(DEP, ['--bogus'], { env: envOf(), home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--bogus'");
  });
});

describe('dependency_check.sh with nmap missing, without a terminal', () => {
  it('stdin not a terminal: exit 1, no prompt, one line saying how to install', async () => {
    const r = await runCli(DEP, [], { env: envOf(), home });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('[y/N]');
    expect(r.stdout).toMatch(/MISSING {2}nmap +host discovery, port and service scanning \(apt package nmap\)/);
    expect(r.stderr).toBe(
      `error: nmap is required but not installed; install it with: ${INSTALL_NMAP} (no prompt: standard input is not a terminal)\n`,
    );
    expect(fs.existsSync(aptLog)).toBe(false);
  });

  it('CI set: never prompts, even with answers waiting on stdin', async () => {
    const r = await runCli(DEP, [], { env: envOf({ CI: 'true' }), home, input: 'y\n' });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('[y/N]');
    expect(r.stderr).toBe(
      `error: nmap is required but not installed; install it with: ${INSTALL_NMAP} (no prompt: CI is set (CI=true))\n`,
    );
    expect(fs.existsSync(aptLog)).toBe(false);
  });

  it('piped input (as from a script): a "y" on stdin installs nothing', async () => {
    const r = await runCli(DEP, [], { env: envOf(), home, input: 'y\n' });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toContain('[y/N]');
    expect(r.stderr).toContain('(no prompt: standard input is not a terminal)');
    expect(fs.existsSync(aptLog)).toBe(false);
  });

  it('--json: the report on stdout, the reason on stderr, exit 1', async () => {
    const r = await runCli(DEP, ['--json'], { env: envOf({ CI: '1' }), home });
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.missing.required).toEqual(['nmap']);
    expect(doc.install_prompt).toEqual({ prompted: false, installed: false });
    expect(doc.install_commands.required_and_core).toBe(INSTALL_NMAP);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('no package manager on the PATH: says where to get nmap', async () => {
    fs.rmSync(path.join(bin.dir, 'apt-get'));
    const r = await runCli(DEP, [], { env: envOf(), home });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: nmap is required but not installed; no supported package manager (apt-get, dnf, yum, apk, brew) found on the PATH: install nmap by hand (https://nmap.org/download) (no prompt: standard input is not a terminal)\n',
    );
  });
});

describe('dependency_check.sh under a real terminal (tmux)', () => {
  let pty: PtySession | undefined;
  afterEach(async () => {
    await pty?.close();
    pty = undefined;
  });

  it('nmap missing, CI unset: offers the install; "n" exits 1 without installing', async () => {
    pty = await startPty([DEP], envOf());
    await pty.waitFor(
      /Install nmap now with DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=120 nmap\? \[y\/N\] *$/m,
    );
    await pty.sendLine('n');
    expect(await pty.exitCode()).toBe(1);
    const screen = await pty.capture();
    expect(screen).toContain(
      `error: nmap is required but not installed (install declined); install it with: ${INSTALL_NMAP}`,
    );
    expect(fs.existsSync(aptLog)).toBe(false);
    expect(fs.existsSync(path.join(bin.dir, 'nmap'))).toBe(false);
  });

  it('"y" runs the install command, then finds nmap and exits 0', async () => {
    pty = await startPty([DEP], envOf());
    await pty.waitFor(/\[y\/N\] *$/m);
    await pty.sendLine('y');
    expect(await pty.exitCode()).toBe(0);
    expect(fs.readFileSync(aptLog, 'utf8')).toBe(
      'DEBIAN_FRONTEND=noninteractive install -y -o DPkg::Lock::Timeout=120 nmap\n',
    );
    expect(await pty.capture()).toContain(`Installed: nmap (${path.join(bin.dir, 'nmap')})`);
  });

  it('CI set: no prompt even on a terminal', async () => {
    pty = await startPty([DEP], envOf({ CI: 'true' }));
    expect(await pty.exitCode()).toBe(1);
    const screen = await pty.capture();
    expect(screen).not.toContain('[y/N]');
    expect(screen).toContain('(no prompt: CI is set (CI=true))');
    expect(fs.existsSync(aptLog)).toBe(false);
  });

  it('colors on a terminal, none with NO_COLOR, none when piped', async () => {
    bin.link('nmap');
    pty = await startPty([DEP], envOf());
    expect(await pty.exitCode()).toBe(0);
    const colored = await pty.capture({ escapes: true });
    expect(colored).toContain(`${ESC}32m`); // green "ok"
    expect(colored).toContain(`${ESC}33m`); // yellow "skipped"
    await pty.close();

    pty = await startPty([DEP], envOf({ NO_COLOR: '1' }));
    expect(await pty.exitCode()).toBe(0);
    const plain = await pty.capture({ escapes: true });
    expect(plain).toContain('Required and core tools present');
    expect(plain).not.toContain(ESC);

    const piped = await runCli(DEP, [], { env: envOf(), home });
    expect(piped.code).toBe(0);
    expect(piped.stdout + piped.stderr).not.toContain(ESC);
  });
});
