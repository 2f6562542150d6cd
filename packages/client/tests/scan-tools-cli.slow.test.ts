import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli, SVC } from '@svc/test-support/cli';

/**
 * `svc scan` as a real process on loopback only: a web server on 127.0.0.1 that names an old
 * nginx in its Server header, scanned with the optional tools (real whatweb) and with `--no-tools`.
 * Needs root (nmap's SYN scan) and whatweb from setup-system.sh.
 */

interface Finding {
  port: number;
  rule_id: string;
  severity: string;
  source?: string;
  sources?: string[];
}

let dir: string;
let server: http.Server;
let port: number;
let withTools: CliResult;
let noTools: CliResult;

const sessionOf = async (r: CliResult) => {
  const { path: dirOf } = JSON.parse(r.stdout) as { path: string };
  const doc = JSON.parse(await fs.readFile(path.join(dirOf, 'session_results.json'), 'utf8')) as {
    findings: Finding[];
    coverage?: unknown;
  };
  return {
    findings: doc.findings,
    coverage: doc.coverage,
    log: await fs.readFile(path.join(dirOf, 'pipeline.log'), 'utf8'),
  };
};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-scan-tools-cli-'));
  server = http.createServer((_req, res) => {
    res.writeHead(200, { Server: 'nginx/1.18.0', 'Content-Type': 'text/html' });
    res.end('<html><head><title>loopback</title></head><body>ok</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  const scan = (extra: string[], sessions: string) =>
    runCli(
      SVC,
      [
        'scan',
        '--targets',
        '127.0.0.1',
        '--ports',
        `T:${port}`,
        '--sessions-dir',
        path.join(dir, sessions),
        '--json',
        ...extra,
      ],
      { timeoutMs: 5 * 60_000 },
    );
  withTools = await scan([], 'with');
  noTools = await scan(['--no-tools'], 'without');
}, 11 * 60_000);

afterAll(async () => {
  server?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('svc scan with the optional tools on loopback', () => {
  it('runs whatweb on the web service and names it as the source of its findings', async () => {
    expect(withTools.code, withTools.stderr).toBe(0);
    expect(withTools.stderr).toMatch(
      new RegExp(`^whatweb: http://127\\.0\\.0\\.1:${port}/ \\(\\d+ ms, exit 0\\)$`, 'm'),
    );
    const { findings, log } = await sessionOf(withTools);
    const whatweb = findings.filter((f) => f.source === 'whatweb' || f.sources?.includes('whatweb'));
    expect(whatweb.map((f) => f.rule_id)).toEqual(
      expect.arrayContaining([
        'http-version-disclosed',
        'outdated-software:nginx-resolver-off-by-one',
        'web-technologies',
      ]),
    );
    expect(whatweb.find((f) => f.rule_id === 'http-version-disclosed')).toMatchObject({ port, severity: 'low' });
    expect(log).toMatch(
      new RegExp(`^\\S+Z stage tool whatweb command \\S+/whatweb .* http://127\\.0\\.0\\.1:${port}/$`, 'm'),
    );
    expect(log).toMatch(/^\S+Z stage tool testssl\.sh nothing to check$/m);
  });

  it('writes what it looked at: the host that answered, the port nmap scanned, the profile and the tools that ran', async () => {
    const block = { hosts: ['127.0.0.1'], ports: { tcp: String(port) }, profile: 'quick_recon', source: 'svc-scan' };
    expect((await sessionOf(withTools)).coverage).toEqual({ ...block, tools: ['nmap', 'whatweb'] });
    expect((await sessionOf(noTools)).coverage).toEqual({ ...block, tools: ['nmap'] });
  });

  it('--no-tools runs nmap and its rules only', async () => {
    expect(noTools.code, noTools.stderr).toBe(0);
    expect(noTools.stderr).not.toContain('whatweb');
    const { findings, log } = await sessionOf(noTools);
    expect(findings.some((f) => f.source !== undefined || f.sources !== undefined)).toBe(false);
    expect(log).not.toContain(' stage tool ');
  });
});
