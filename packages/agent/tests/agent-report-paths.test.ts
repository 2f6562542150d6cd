import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executeCommand } from '../src/commands/dispatch.ts';
import { statusReport } from '../src/commands/index.ts';
import type { CommandContext } from '../src/commands/outcome.ts';
import { withoutHostPaths } from '../src/commands/output.ts';
import type { CommandHost } from '../src/types.ts';

/**
 * What svcd reports to the portal, which the tenant's users read ("agent results carry
 * absolute paths"): the host's directories and the full paths in command lines are gone; the
 * session id, file names, counts and the scan's own options stay.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-report-paths-'));
const root = path.join(tmp, 'var', 'lib', 'svc', 'sessions');
fs.mkdirSync(root, { recursive: true });
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A stand-in for `svc scan --json` (a real process): its answer and its stderr as svc writes them. */
function fakeSvc(): string {
  const bin = path.join(tmp, 'opt', 'svc', 'packages', 'client', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const script = path.join(bin, 'svc');
  const answer = {
    path: path.join(root, '20260101_120000'),
    session_id: '20260101_120000',
    summary: { total_findings: 3, total_hosts: 2 },
    upload: { session_id: '20260101_120000', share_url: `https://portal.example/share/?token=${'a'.repeat(64)}` },
  };
  fs.writeFileSync(
    script,
    [
      '#!/bin/bash',
      `cat <<'EOF'\n${JSON.stringify(answer, null, 2)}\nEOF`,
      `cat >&2 <<'EOF'`,
      'Running as root: SYN scan with OS detection',
      'nmap: /usr/bin/nmap -sS -n --open -p T:22,80,U:161 --script ssl-cert -oX - -- 10.0.0.0/24 (1234 ms)',
      `warning: whatweb: no answer, see ${tmp}/tmp/svc-scan-tools-x1/whatweb.json`,
      `Session 20260101_120000: 3 findings on 2 hosts, written to ${path.join(root, '20260101_120000')}/report_acme.html`,
      'EOF',
    ].join('\n'),
    { mode: 0o755 },
  );
  return script;
}

function host(over: Partial<CommandHost> = {}): CommandHost {
  const quiet = () => undefined;
  return {
    agentId: 'svcd_test0001',
    stateDir: path.join(tmp, 'state'),
    portal: undefined as never,
    portalOrigin: 'http://127.0.0.1:1',
    commandTimeoutMs: 10_000,
    scanTimeoutMs: 10_000,
    sessionsRoot: root,
    svcCommand: [fakeSvc()],
    childEnv: process.env,
    log: { debug: quiet, info: quiet, warning: quiet, error: quiet },
    schedules: { has: () => false, apply: () => '' },
    applyConfig: quiet,
    setLogLevel: quiet,
    restart: quiet,
    reload: quiet,
    shutdown: quiet,
    stopping: () => false,
    install: { kind: 'image' },
    ...over,
  };
}

const ctx = (h: CommandHost): CommandContext => ({ host: h, deadline: Date.now() + 10_000, onChild: () => undefined });
const command = (command_type: string, payload: Record<string, unknown>) =>
  ({
    id: 9,
    command_type,
    payload,
    priority: 5,
    created_by: 'admin@test.local',
    created_at: new Date().toISOString(),
  }) as Parameters<typeof executeCommand>[0];

async function reported(type: string, payload: Record<string, unknown>, h = host()) {
  const c = command(type, payload);
  return statusReport(c, await executeCommand(c, ctx(h)), h);
}

describe('status reports carry no host paths', () => {
  it('run_scan: the session by its id, the nmap options without its path, counts and the share URL kept', async () => {
    const report = await reported('run_scan', { targets: '10.0.0.0/24', upload: true });
    expect(report).toMatchObject({ status: 'completed', exit_code: 0, session_id: '20260101_120000' });
    expect(JSON.parse(report.stdout ?? '')).toEqual({
      path: '20260101_120000',
      session_id: '20260101_120000',
      summary: { total_findings: 3, total_hosts: 2 },
      upload: { session_id: '20260101_120000', share_url: `https://portal.example/share/?token=${'a'.repeat(64)}` },
    });
    expect(report.stderr).toBe(
      [
        'Running as root: SYN scan with OS detection',
        'nmap: nmap -sS -n --open -p T:22,80,U:161 --script ssl-cert -oX - -- 10.0.0.0/24 (1234 ms)',
        'warning: whatweb: no answer, see whatweb.json',
        'Session 20260101_120000: 3 findings on 2 hosts, written to 20260101_120000/report_acme.html',
        '',
      ].join('\n'),
    );
    expect(`${report.stdout}${report.stderr}`).not.toContain(tmp);
  });

  it('push_session and update: their own refusals name no directory', async () => {
    const none = await reported('push_session', {});
    expect(none.stderr).toBe("push_session: no session to push: the agent's sessions directory holds none\n");
    const missing = await reported('push_session', { session_id: '20260101_000000' });
    expect(missing.stderr).toBe("push_session: session 20260101_000000 not found in the agent's sessions directory\n");
    const install = path.join(tmp, 'opt', 'not-a-checkout');
    fs.mkdirSync(install, { recursive: true });
    const update = await reported('update', {}, host({ install: { kind: 'checkout', dir: install } }));
    expect(update.stderr).toMatch(/^update: needs a git checkout: the agent's install directory is not one\n/);
    expect(update.stderr).not.toContain(tmp);
  });

  it('a program that cannot start is named by its file name', async () => {
    const report = await reported(
      'run_scan',
      { targets: '10.0.0.1' },
      host({ svcCommand: [path.join(tmp, 'nope', 'svc')] }),
    );
    expect(report.status).toBe('failed');
    expect(report.stderr).not.toContain(tmp);
  });
});

describe('withoutHostPaths', () => {
  it.each([
    [`${root}/20260101_120000`, '20260101_120000'],
    [`"${root}/20260101_120000/report_a.html"`, '"20260101_120000/report_a.html"'],
    [`at ${root}`, 'at sessions'],
    ['/usr/bin/nmap -sS -- 10.0.0.0/24', 'nmap -sS -- 10.0.0.0/24'],
    ['--log-json=/tmp/x/whatweb.json', '--log-json=whatweb.json'],
    ['(/etc/svc/configs/portal.conf)', '(portal.conf)'],
    // Not paths: URLs, CIDR blocks, port lists, ratios.
    ['https://portal.example/share/?token=ab', 'https://portal.example/share/?token=ab'],
    ['10.0.0.0/24 T:22/tcp 3/5 hosts', '10.0.0.0/24 T:22/tcp 3/5 hosts'],
    ['/', '/'],
  ])('%j → %j', (input, output) => {
    expect(withoutHostPaths(input, root)).toBe(output);
  });
});
