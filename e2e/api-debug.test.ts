import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { REPO, runCli, tool, writeConfig, type CliResult, type RunOptions } from '@svc/test-support/cli';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

// tools/api_debug.sh (`svc api-debug`) run as a process against the real portal.

const FIXTURE = path.join(REPO, 'packages/portal/tests/fixtures/session-minimal.json');
const STATUS_LINE =
  /^(GET|POST|PUT|PATCH|DELETE) http:\/\/127\.0\.0\.1:\d+\/api\/[a-z-]+\S* -> HTTP (\d{3}) in \d+ ms$/m;

let portal: TestPortal;
let key: string;
let admin: string;
let dir: string;

const debug = (args: string[], opts: RunOptions = {}): Promise<CliResult> => runCli(tool('api_debug.sh'), args, opts);

/** A copy of the minimal session fixture with a session id no other test uses. */
async function sessionFile(label = 's'): Promise<{ file: string; id: string }> {
  const id = `20251122_${randomBytes(5).toString('hex')}`;
  const doc = JSON.parse(await fs.readFile(FIXTURE, 'utf8')) as { metadata: { session_id: string } };
  doc.metadata.session_id = id;
  const file = path.join(dir, `${label}-${id}.json`);
  await fs.writeFile(file, JSON.stringify(doc));
  return { file, id };
}

async function sessionExists(id: string): Promise<boolean> {
  const res = await http(portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(admin) });
  if (res.status !== 200 && res.status !== 404) throw new Error(`sessions: ${res.status} ${res.text}`);
  return res.status === 200;
}

const statusOf = (stderr: string) => Number(STATUS_LINE.exec(stderr)?.[2]);

/** Runs a printed curl command through bash with the real key put back; returns the HTTP status curl saw. */
async function runCurl(curl: string, realKey: string): Promise<number> {
  expect(curl).toMatch(/^curl -sS --max-time \d+ /);
  const cmd = `${curl.replace('svc_biz_****', realKey)} -o /dev/null -w '%{http_code}'`;
  const { stdout } = await promisify(execFile)('bash', ['-c', cmd]);
  return Number(stdout.trim());
}

const fixture = usePortalWithKey({ tier: 'business' });

beforeAll(async () => {
  ({ portal, key } = fixture);
  admin = await portal.adminToken();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-api-debug-'));
});

afterAll(async () => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('api_debug.sh usage', () => {
  it('-h and `upload -h` print usage (exit 0); no subcommand or an unknown one is exit 2', async () => {
    const top = await debug(['-h']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: svc api-debug');
    for (const sub of [
      'health',
      'upload',
      'download',
      'share',
      'refresh',
      'benchmark',
      'heartbeat',
      'command-status',
      'sessions',
    ])
      expect(top.stdout).toMatch(new RegExp(`^  ${sub} `, 'm'));
    for (const opt of [
      '-c, --config',
      '-u, --url',
      '-k, --key',
      '-j, --jwt',
      '--quiet',
      '--show-curl',
      '--show-curl-only',
      '--timeout <sec>',
    ])
      expect(top.stdout).toContain(opt);

    const upload = await debug(['upload', '-h']);
    expect(upload.code).toBe(0);
    expect(upload.stdout).toContain('Usage: svc api-debug upload');
    for (const opt of ['-s, --session <json>', '-l, --log', '-r, --report', '-e, --exec', '--show-curl-only'])
      expect(upload.stdout).toContain(opt);

    const none = await debug([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('error: a subcommand is required');
    const unknown = await debug(['bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: unknown api-debug subcommand 'bogus'");
  });

  it('usage errors are exit 2 with a reason: no URL, no key, no JWT, missing option, bad JSON, --json with fields', async () => {
    const cases: [string[], RegExp][] = [
      [['health'], /No portal URL/],
      [['upload', '-u', portal.url, '-s', FIXTURE], /No API key/],
      [['health', '--agents', '-u', portal.url], /No identity token: pass -j/],
      [['sessions', '-u', portal.url], /No identity token: pass -j/],
      [['upload', '-u', portal.url, '-k', key], /required option '-s, --session <json>'/],
      [['upload', '-u', portal.url, '-k', key, '-s', path.join(dir, 'missing.json')], /-s: no such file/],
      [['heartbeat', '-u', portal.url, '-k', key, '--json', '{not json'], /--json is not valid JSON/],
      [['heartbeat', '-u', portal.url, '-k', key, '--agent-id', 'a1'], /missing --status/],
      [
        ['heartbeat', '-u', portal.url, '-k', key, '--agent-id', 'a1', '--json', '{}'],
        /--json cannot be combined with --agent-id/,
      ],
      [
        ['command-status', '-u', portal.url, '-k', key, '--command-id', 'x', '--agent-id', 'a', '--status', 'acked'],
        /--command-id must be a whole number/,
      ],
      [
        ['command-status', '-u', portal.url, '-k', key, '--command-id', '1', '--agent-id', 'a', '--status', 'done'],
        /Allowed choices are acked, completed, failed/,
      ],
      [['health', '-u', portal.url, '--timeout', '0'], /--timeout must be a whole number/],
    ];
    const results = await Promise.all(cases.map(([args]) => debug(args)));
    results.forEach((r, i) => {
      const [args, reason] = cases[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(reason);
      expect(r.stderr).not.toContain(key);
    });
  });
});

describe('api_debug.sh against the portal', () => {
  it('health needs no credential: the JSON body on stdout, the status line on stderr; --quiet drops the line', async () => {
    const r = await debug(['health', '-u', portal.url]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      status: 'ok',
      version: expect.any(String),
      timestamp: expect.any(String),
    });
    expect(r.stdout).toContain('\n  "status": "ok"'); // pretty-printed
    expect(r.stderr).toMatch(STATUS_LINE);
    expect(r.stderr).toContain(`GET ${portal.url}/api/health -> HTTP 200 in `);

    const quiet = await debug(['--quiet', 'health', '-u', portal.url]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(JSON.parse(quiet.stdout).status).toBe('ok');
  });

  it('global options work before and after the subcommand, and from a -c config file', async () => {
    const before = await debug(['-u', portal.url, '--timeout', '5', 'health']);
    const after = await debug(['health', '-u', portal.url, '--quiet']);
    expect(before.code).toBe(0);
    expect(after.code).toBe(0);
    expect(after.stderr).toBe('');

    const a = await sessionFile();
    const mixed = await debug(['-k', key, 'upload', '-s', a.file, '-u', `${portal.url}/api/upload`]);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(JSON.parse(mixed.stdout).session_id).toBe(a.id);

    const config = await writeConfig(
      dir,
      { CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key },
      'debug.conf',
    );
    const b = await sessionFile();
    const fromConfig = await debug(['-c', config, 'upload', '-s', b.file]);
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
    expect(JSON.parse(fromConfig.stdout).session_id).toBe(b.id);
    const afterSub = await debug(['upload', '-s', (await sessionFile()).file, '-c', config]);
    expect(afterSub.code, afterSub.stderr).toBe(0);
    expect(await sessionExists(b.id)).toBe(true);
  });

  it('upload, share, download, refresh, benchmark and sessions round-trip one session', async () => {
    const s = await sessionFile();
    const log = path.join(dir, 'pipeline.log');
    const report = path.join(dir, 'report.html');
    const exec = path.join(dir, 'exec.html');
    await fs.writeFile(log, 'line 1\nline 2\n');
    await fs.writeFile(report, '<html><body><h1>Report v1</h1></body></html>\n');
    await fs.writeFile(exec, '<html><body>Exec summary</body></html>\n');
    const env = { CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key };

    const up = await debug(['upload', '-s', s.file, '-l', log, '-r', report, '-e', exec], { env });
    expect(up.code, up.stderr).toBe(0);
    const body = JSON.parse(up.stdout) as {
      success: boolean;
      session_id: string;
      share_token: string;
      share_url: string;
    };
    expect(body).toMatchObject({
      success: true,
      session_id: s.id,
      share_token: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(statusOf(up.stderr)).toBe(200);
    expect(up.stderr).toContain(`POST ${portal.url}/api/upload -> HTTP 200`);
    expect(up.stderr).not.toContain(key);

    const share = await debug(['share', '-t', body.share_token], { env: { CONSULTATION_API_URL: portal.url } });
    expect(share.code, share.stderr).toBe(0);
    expect(share.stdout).toContain(s.id);

    const out = path.join(dir, 'log.out');
    const [toFile, toStdout] = await Promise.all([
      debug(['download', '-s', s.id, '-f', 'pipeline.log', '-o', out], { env }),
      debug(['download', '-s', s.id, '-f', 'report.html'], { env }),
    ]);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stdout).toBe('');
    expect(await fs.readFile(out, 'utf8')).toBe('line 1\nline 2\n');
    expect(toFile.stderr).toContain(`wrote 14 bytes to ${out}`);
    expect(toStdout.code).toBe(0);
    expect(toStdout.stdout).toBe('<html><body><h1>Report v1</h1></body></html>\n');

    const v2 = path.join(dir, 'report-v2.html');
    await fs.writeFile(v2, '<html><body><h1>Report v2</h1></body></html>\n');
    const refresh = await debug(['refresh', '-s', s.id, '-f', 'report.html', '-i', v2], { env });
    expect(refresh.code, refresh.stderr).toBe(0);
    expect(JSON.parse(refresh.stdout)).toMatchObject({ success: true, session_id: s.id, file: 'report.html' });
    expect(refresh.stderr).toContain(`PUT ${portal.url}/api/refresh?session=${s.id}&file=report.html -> HTTP 200`);
    const again = await debug(['download', '-s', s.id, '-f', 'report.html'], { env });
    expect(again.stdout).toBe('<html><body><h1>Report v2</h1></body></html>\n');

    const [bench, sessions, one] = await Promise.all([
      debug(['benchmark', '-s', s.id], { env }),
      debug(['sessions', '-j', admin, '-u', portal.url]),
      debug(['sessions', '-s', s.id], { env: { CONSULTATION_API_URL: portal.url, SVC_JWT: admin } }),
    ]);
    expect(bench.code, bench.stderr).toBe(0);
    expect(JSON.parse(bench.stdout)).toMatchObject({
      session_id: s.id,
      sample_size: expect.any(Number),
      metrics: { risk_score: expect.any(Object) },
    });
    expect(sessions.code, sessions.stderr).toBe(0);
    expect(sessions.stdout).toContain(s.id);
    expect(sessions.stderr).not.toContain(admin);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).session.session_id).toBe(s.id);

    const missing = await debug(['refresh', '-s', '20000101_000000', '-f', 'report.html', '-i', v2], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: HTTP 404: /m);
  });

  it('heartbeat registers an agent (seen by health --agents); --json is sent verbatim', async () => {
    const agentId = `dbg-${randomBytes(4).toString('hex')}`;
    const env = { CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key };
    const hb = await debug(['heartbeat', '--agent-id', agentId, '--status', 'running'], { env });
    expect(hb.code, hb.stderr).toBe(0);
    expect(JSON.parse(hb.stdout)).toMatchObject({ success: true, received_at: expect.any(String), commands: [] });
    expect(hb.stderr).toContain(`POST ${portal.url}/api/health -> HTTP 200`);

    const agents = await debug(['health', '--agents', '-j', admin], { env });
    expect(agents.code, agents.stderr).toBe(0);
    const pkg = JSON.parse(await fs.readFile(path.join(REPO, 'packages/client/package.json'), 'utf8')) as {
      version: string;
    };
    const agent = (JSON.parse(agents.stdout) as { agents: { agent_id: string }[] }).agents.find(
      (a) => a.agent_id === agentId,
    );
    expect(agent).toMatchObject({ agent_id: agentId, status: 'running', version: pkg.version, uptime_seconds: 0 });

    const partial = await debug(
      [
        'heartbeat',
        '--json',
        JSON.stringify({ agent_id: agentId, version: '1', timestamp: new Date().toISOString(), status: 'running' }),
      ],
      { env },
    );
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain('error: HTTP 400: Missing required field: uptime_seconds');
    expect(JSON.parse(partial.stdout)).toEqual({ error: 'Missing required field: uptime_seconds' });
  });

  it('command-status: a queued command arrives by heartbeat and is reported acked, then completed', async () => {
    const agentId = `dbg-${randomBytes(4).toString('hex')}`;
    const env = { CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key };
    expect((await debug(['heartbeat', '--agent-id', agentId, '--status', 'running', '--quiet'], { env })).code).toBe(0);
    const queued = await http(portal.url, 'POST', '/api/agent-commands', {
      headers: withToken(admin),
      json: { agent_id: agentId, command_type: 'restart' },
    });
    expect(queued.status).toBe(201);
    const id = queued.body.commands[0].id as number;

    const hb = await debug(['heartbeat', '--agent-id', agentId, '--status', 'running'], { env });
    expect(hb.code).toBe(0);
    expect(JSON.parse(hb.stdout).commands).toMatchObject([{ id, command_type: 'restart' }]);

    const acked = await debug(
      ['command-status', '--command-id', String(id), '--agent-id', agentId, '--status', 'acked'],
      { env },
    );
    expect(acked.code, acked.stderr).toBe(0);
    expect(JSON.parse(acked.stdout)).toEqual({ success: true, command_id: id, status: 'acked' });
    expect(acked.stderr).toContain(`PATCH ${portal.url}/api/agent-commands -> HTTP 200`);
    let detail = await http(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, { headers: withToken(admin) });
    expect(detail.body.command.status).toBe('acked');

    const done = await debug(
      [
        'command-status',
        '--json',
        JSON.stringify({
          command_id: id,
          agent_id: agentId,
          status: 'completed',
          exit_code: 0,
          stdout: 'restarted',
          stderr: '',
        }),
      ],
      { env },
    );
    expect(done.code, done.stderr).toBe(0);
    detail = await http(portal.url, 'GET', `/api/agent-commands?command_id=${id}`, { headers: withToken(admin) });
    expect(detail.body.command.status).toBe('completed');
    expect(detail.body.result).toMatchObject({ exit_code: 0, stdout: 'restarted' });

    // The portal refuses a transition the state table lacks: exit 1 with its reason.
    const again = await debug(
      ['command-status', '--command-id', String(id), '--agent-id', agentId, '--status', 'acked', '--exit-code', '0'],
      { env },
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: HTTP 409: /m);
  });

  it("a wrong key is exit 1 with the portal's error", async () => {
    const wrong = `svc_biz_${'0'.repeat(64)}`;
    const r = await debug(['upload', '-u', portal.url, '-k', wrong, '-s', (await sessionFile()).file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: HTTP 403: Invalid API key$/m);
    expect(statusOf(r.stderr)).toBe(403);
  });

  it('an unreachable portal is exit 1 at once; a portal that never answers is exit 1 after --timeout', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const sockets = new Set<net.Socket>();
    // The upper bound is counted from the server's first connection, not from the spawn: the
    // tool's start-up on a loaded machine is not the timeout under test.
    let reached = 0;
    const silent = net.createServer((socket) => {
      reached ||= Date.now();
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    try {
      const t0 = Date.now();
      const [refused, hung] = await Promise.all([
        debug(['health', '-u', `http://127.0.0.1:${closedPort}`, '--timeout', '5']).then((r) => ({
          ...r,
          ms: Date.now() - t0,
        })),
        debug(['health', '--timeout', '1', '-u', `http://127.0.0.1:${silentPort}`]).then((r) => ({
          ...r,
          ms: Date.now() - t0,
        })),
      ]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toBe(`error: Cannot reach http://127.0.0.1:${closedPort}: ECONNREFUSED`);
      expect(hung.code).toBe(1);
      expect(hung.stderr.trim()).toBe(`error: No answer from http://127.0.0.1:${silentPort} within 1 s`);
      expect(hung.ms).toBeGreaterThanOrEqual(1000);
      expect(reached).toBeGreaterThan(0);
      expect(t0 + hung.ms - reached).toBeLessThan(5000);
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('--show-curl-only prints the curl command with the secrets masked and sends nothing', async () => {
    const s = await sessionFile();
    const r = await debug(['--show-curl-only', 'upload', '-u', portal.url, '-k', key, '-s', s.file, '-l', FIXTURE]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(
      `curl -sS --max-time 30 -X POST -H 'x-api-key: svc_biz_****' -F 'session_json=@${s.file};type=application/json' -F 'pipeline_log=@${FIXTURE};type=text/plain' ${portal.url}/api/upload`,
    );
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(key.slice(8));
    expect(await sessionExists(s.id)).toBe(false);

    const jwt = await debug(['sessions', '-j', admin, '-u', portal.url, '--show-curl-only']);
    expect(jwt.code).toBe(0);
    expect(jwt.stdout).toContain("-H 'x-identity-token: ****'");
    expect(jwt.stdout + jwt.stderr).not.toContain(admin);

    const download = await debug([
      'download',
      '-s',
      s.id,
      '-o',
      path.join(dir, 'never.json'),
      '-u',
      portal.url,
      '-k',
      key,
      '--show-curl-only',
      '--timeout',
      '7',
    ]);
    expect(download.stdout.trim()).toBe(
      `curl -sS --max-time 7 -H 'x-api-key: svc_biz_****' -o ${path.join(dir, 'never.json')} '${portal.url}/api/download?session=${s.id}'`,
    );
    await expect(fs.access(path.join(dir, 'never.json'))).rejects.toThrow();
  });

  it('--show-curl prints a curl command that, with the key put back, gets the same status as the tool', async () => {
    const health = await debug(['health', '--show-curl', '-u', portal.url]);
    expect(health.code).toBe(0);
    const healthCurl = health.stderr.split('\n')[0]!;
    expect(await runCurl(healthCurl, key)).toBe(statusOf(health.stderr));
    expect(statusOf(health.stderr)).toBe(200);

    // Upload: the curl command reads the same file; give it a new session id so both uploads are new.
    const s = await sessionFile();
    const up = await debug(['--show-curl', 'upload', '-u', portal.url, '-k', key, '-s', s.file]);
    expect(up.code, up.stderr).toBe(0);
    const upCurl = up.stderr.split('\n')[0]!;
    expect(upCurl).toContain("'x-api-key: svc_biz_****'");
    expect(up.stdout + up.stderr).not.toContain(key);
    const doc = JSON.parse(await fs.readFile(s.file, 'utf8'));
    const curlId = `20251122_${randomBytes(5).toString('hex')}`;
    doc.metadata.session_id = curlId;
    await fs.writeFile(s.file, JSON.stringify(doc));
    expect(await runCurl(upCurl, key)).toBe(200);
    expect(await sessionExists(curlId)).toBe(true);

    // And a refusal: the wrong key gets 403 from both.
    const wrong = `svc_biz_${'1'.repeat(64)}`;
    const refused = await debug(['--show-curl', 'upload', '-u', portal.url, '-k', wrong, '-s', s.file]);
    expect(refused.code).toBe(1);
    expect(statusOf(refused.stderr)).toBe(403);
    expect(await runCurl(refused.stderr.split('\n')[0]!, wrong)).toBe(403);
  });
});
