import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { NODE_COMPILE_CACHE, REPO } from '@svc/test-support/cli';
import { http, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { testTempDir } from '@svc/test-support/temp-dirs';
import { until } from '@svc/test-support/wait';

export const SVCD = path.join(REPO, 'packages/agent/bin/svcd');

/** A fresh agent id (the hostname's id would be shared by every test on this machine). */
export const newAgentId = (label = 'agent'): string => `svcd_t${label}-${randomBytes(4).toString('hex')}`;

export interface SvcdOptions {
  /** Agent id (SVC_AGENT_ID); a fresh one when omitted. */
  agentId?: string;
  /** Files of the configs directory: name → KEY=VALUE lines. */
  configs?: Record<string, Record<string, string>>;
  /** An existing configs directory (shared across restarts of a test); `configs` are added to it. */
  configDir?: string;
  /** An existing HOME (state, license cache, sessions). */
  home?: string;
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Another svcd to run (a release archive's bin/svcd); the checkout's by default. */
  command?: string;
}

export interface SvcdProcess {
  child: ChildProcess;
  pid: number;
  agentId: string;
  home: string;
  configDir: string;
  stateDir: string;
  /** Everything the daemon wrote so far (stdout and stderr). */
  output(): string;
  /** Resolves with the first output line matching `re` (from the start of the output), or fails after `timeoutMs`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or the signal) when the process is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then the exit; SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const confText = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');

/** Writes the configs (mode 600 like an installer would). */
export async function writeConfigs(dir: string, configs: Record<string, Record<string, string>>): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (const [name, values] of Object.entries(configs))
    await fs.writeFile(path.join(dir, name), confText(values), { mode: 0o600 });
}

/** Starts a real `svcd` process with its own HOME and configs directory, environment minimal like a service's. */
export async function startSvcd(opts: SvcdOptions = {}): Promise<SvcdProcess> {
  const home = opts.home ?? (await testTempDir('svcd-home-'));
  const configDir = opts.configDir ?? path.join(home, 'configs');
  await writeConfigs(configDir, opts.configs ?? {});
  const agentId = opts.agentId ?? newAgentId();
  const stateDir = path.join(home, 'state');
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    NODE_COMPILE_CACHE,
    SVC_AGENT_ID: agentId,
    SVC_AGENT_STATE_DIR: stateDir,
  };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const child = spawn(opts.command ?? SVCD, ['--config-dir', configDir, ...(opts.args ?? [])], {
    env,
    cwd: home,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: string) => {
    out += d;
    for (const w of waiters) w();
  };
  child.stdout?.setEncoding('utf8').on('data', onData);
  child.stderr?.setEncoding('utf8').on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ code, signal });
      for (const w of waiters) w();
    });
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const waitFor = (re: RegExp, timeoutMs = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = out.split('\n').find((l) => re.test(l));
        if (line !== undefined) {
          done();
          resolve(line);
        } else if (gone) {
          done();
          reject(new Error(`svcd exited before ${re}:\n${out}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${re} from svcd within ${timeoutMs} ms:\n${out}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  const stop = async (timeoutMs = 20_000) => {
    if (!gone) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  if (child.pid === undefined) throw new Error('svcd did not start');
  return { child, pid: child.pid, agentId, home, configDir, stateDir, output: () => out, waitFor, exited, stop };
}

/** The portal settings every daemon config needs, with a short heartbeat interval. */
export function portalConf(uploadUrl: string, key: string, extra: Record<string, string> = {}): Record<string, string> {
  return { CONSULTATION_API_URL: uploadUrl, SVC_API_KEY: key, DAEMON_HEARTBEAT_INTERVAL: '1', ...extra };
}

/** Waits until the portal has seen the agent's first heartbeat (commands can be queued for it from then on). */
export async function untilRegistered(portal: TestPortal, agentId: string, timeoutMs = 30_000): Promise<void> {
  await until(
    async () => {
      const res = await http(portal.url, 'GET', '/api/health?agents=true', {
        headers: withToken(await portal.adminToken()),
      });
      return (res.body.agents as { agent_id: string }[]).some((a) => a.agent_id === agentId);
    },
    timeoutMs,
    () => `agent ${agentId} to send its first heartbeat`,
  );
}
