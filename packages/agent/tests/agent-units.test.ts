import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backoffMs } from '../src/backoff.ts';
import { loadAgentConfig, MissingSettingError, requirePortal } from '../src/config.ts';
import { agentIdOf } from '../src/identity.ts';
import { createLogger } from '../src/logger.ts';
import { appendOverride, readOverrides } from '../src/overrides.ts';
import type { ScheduledScan } from '../src/scan-child.ts';
import { Scheduler } from '../src/schedules.ts';
import { scheduleId } from '@svc/client/kit';
import { profileArgs } from '../src/scan-args.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcd-unit-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('agent id', () => {
  it('is svcd_ + the first 8 hex of md5(hostname); SVC_AGENT_ID overrides', () => {
    const md5 = createHash('md5').update('scanner-01').digest('hex');
    const from = (values: Record<string, string>) => (key: string) => values[key];
    expect(agentIdOf(from({}), 'scanner-01')).toBe(`svcd_${md5.slice(0, 8)}`);
    expect(agentIdOf(from({ SVC_AGENT_ID: 'lab-agent' }), 'scanner-01')).toBe('lab-agent');
    expect(agentIdOf(from({ SVC_AGENT_ID: '  ' }), 'scanner-01')).toBe(`svcd_${md5.slice(0, 8)}`);
  });
});

describe('heartbeat backoff', () => {
  it('doubles from the base up to the interval, jittered between half and all of it', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffMs(n, 5000, 60_000, () => 1))).toEqual([
      5000, 10_000, 20_000, 40_000, 60_000,
    ]);
    expect([1, 2, 3].map((n) => backoffMs(n, 5000, 60_000, () => 0))).toEqual([2500, 5000, 10_000]);
    expect(backoffMs(1000, 5000, 300_000, () => 1)).toBe(300_000);
  });
});

describe('run_scan profile flags', () => {
  it('full_recon/full → --full, quick/quick_recon → -P quick_recon, others none', () => {
    expect(profileArgs('full_recon')).toEqual(['--full']);
    expect(profileArgs('full')).toEqual(['--full']);
    expect(profileArgs('quick')).toEqual(['-P', 'quick_recon']);
    expect(profileArgs('quick_recon')).toEqual(['-P', 'quick_recon']);
    expect(profileArgs('standard')).toEqual([]);
    expect(profileArgs(undefined)).toEqual([]);
  });
});

describe('the overrides file', () => {
  it('appends checked KEY=VALUE lines, mode 600; the last line per key wins', () => {
    appendOverride(dir, 'DAEMON_LOG_LEVEL', 'debug');
    appendOverride(dir, 'DAEMON_SCAN_RETRY_MAX', '7');
    appendOverride(dir, 'DAEMON_LOG_LEVEL', 'error');
    const file = path.join(dir, '.c2_overrides.conf');
    expect(fs.readFileSync(file, 'utf8')).toBe(
      'DAEMON_LOG_LEVEL=debug\nDAEMON_SCAN_RETRY_MAX=7\nDAEMON_LOG_LEVEL=error\n',
    );
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(readOverrides(dir)).toEqual({
      values: { DAEMON_LOG_LEVEL: 'error', DAEMON_SCAN_RETRY_MAX: '7' },
      refused: [],
    });
  });

  it('refuses a key outside the allowlist and a value with control characters, writing nothing', () => {
    expect(() => appendOverride(dir, 'SCAN_TARGETS', '10.0.0.0/8')).toThrow(
      'Config key not in remote-update allowlist',
    );
    expect(() => appendOverride(dir, 'DAEMON_LOG_LEVEL', 'debug\nSCAN_TARGETS=x')).toThrow(
      'config_value must not contain control characters',
    );
    expect(fs.existsSync(path.join(dir, '.c2_overrides.conf'))).toBe(false);
  });

  it('on reading, hand edits are checked again: unknown keys, newlines and bad values are dropped', () => {
    fs.writeFileSync(
      path.join(dir, '.c2_overrides.conf'),
      'ALERT_ENABLED=true\nSVC_API_KEY=stolen\nDAEMON_LOG_LEVEL="debug\\nX=1"\nDAEMON_HEARTBEAT_INTERVAL=5\n',
    );
    expect(readOverrides(dir)).toEqual({
      values: { ALERT_ENABLED: 'true' },
      refused: [
        'SVC_API_KEY: Config key not in remote-update allowlist',
        'DAEMON_LOG_LEVEL: config_value must not contain control characters',
        'DAEMON_HEARTBEAT_INTERVAL: config_value must be an integer from 10 to 86400 (seconds) for DAEMON_HEARTBEAT_INTERVAL',
      ],
    });
  });

  it('a carriage return inside a value refuses the line instead of splitting it; CRLF line ends are fine', () => {
    fs.writeFileSync(
      path.join(dir, '.c2_overrides.conf'),
      'ALERT_RISK_THRESHOLD=6\r0\nALERT_ENABLED=true\r\nDAEMON_SCAN_RETRY_MAX=2\r\n',
    );
    expect(readOverrides(dir)).toEqual({
      values: { ALERT_ENABLED: 'true', DAEMON_SCAN_RETRY_MAX: '2' },
      refused: ['ALERT_RISK_THRESHOLD: config_value must not contain control characters'],
    });
  });
});

describe('the configs directory', () => {
  it('*.conf in name order, dotfiles never as configs, overrides last; schedules and client id', () => {
    fs.writeFileSync(
      path.join(dir, 'a.conf'),
      'CONSULTATION_API_URL=https://portal.example/api/upload\nSVC_API_KEY=k\nDAEMON_LOG_LEVEL=info\n',
    );
    fs.writeFileSync(
      path.join(dir, 'b.conf'),
      'CLIENT_ID=acme\nSCAN_TARGETS=10.0.0.0/24\nSCAN_CRON=0 2 * * 1\nSCAN_PROFILE=full\nSCAN_UPLOAD=yes\nDAEMON_LOG_LEVEL=warning\n',
    );
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'SCAN_TARGETS=1.1.1.1\nSCAN_CRON=* * * * *\n');
    fs.writeFileSync(path.join(dir, '.c2_overrides.conf'), 'DAEMON_LOG_LEVEL=debug\n');
    const config = loadAgentConfig(dir, { DAEMON_LOG_LEVEL: 'error' });
    expect(config.files.map((f) => path.basename(f))).toEqual(['a.conf', 'b.conf']);
    expect(config.settings.get('DAEMON_LOG_LEVEL')).toBe('debug');
    expect(config.clientId).toBe('acme');
    expect(config.schedules).toEqual([
      { config: 'b.conf', targets: '10.0.0.0/24', cron: '0 2 * * 1', profile: 'full', ports: undefined, upload: true },
    ]);
    expect(requirePortal(config.settings)).toEqual({ url: 'https://portal.example/api/upload', key: 'k' });
  });

  it('a missing directory is a start-up error naming it', () => {
    expect(() => loadAgentConfig(path.join(dir, 'nope'), {})).toThrow(
      new MissingSettingError(`Configs directory not found: ${path.join(dir, 'nope')}`),
    );
  });
});

describe('logs', () => {
  const lines = (tty: boolean, env: NodeJS.ProcessEnv) => {
    const out = Object.assign(new PassThrough(), { isTTY: tty });
    let text = '';
    out.on('data', (b: Buffer) => {
      text += b.toString();
    });
    const log = createLogger(out, env, 'info');
    log.debug('hidden');
    log.warning('two words', { key: 'a b', n: 3, line: 'x\ny' });
    log.level = 'debug';
    log.debug('shown');
    return text;
  };

  it('logfmt at the live level; values quoted so none can start a new line', () => {
    const text = lines(false, {});
    expect(text.replace(/ts=\S+ /g, '')).toBe(
      'level=warning msg="two words" key="a b" n=3 line="x\\ny"\nlevel=debug msg=shown\n',
    );
  });

  it('color only on a terminal with NO_COLOR unset', () => {
    expect(lines(true, {})).toContain('\u001b[');
    expect(lines(true, { NO_COLOR: '1' })).not.toContain('\u001b[');
    expect(lines(false, {})).not.toContain('\u001b[');
  });
});

describe('the scheduler', () => {
  it('after update_schedule the scan keeps the schedule id the heartbeats report', async () => {
    const seen: ScheduledScan[] = [];
    const quiet = () => undefined;
    const scheduler = new Scheduler({
      log: { debug: quiet, info: quiet, warning: quiet, error: quiet },
      runScan: async (scan) => {
        seen.push(scan);
        return { exitCode: 0, sessionPath: null, stderrTail: '' };
      },
      retryMax: () => 0,
      retryBackoffMs: () => 1000,
    });
    scheduler.load([
      {
        config: 'n.conf',
        targets: '127.0.0.1',
        cron: '0 3 1 1 *',
        profile: undefined,
        ports: undefined,
        upload: false,
      },
    ]);
    const id = scheduleId('127.0.0.1', '0 3 1 1 *');
    scheduler.apply(id, 'update', { cron: '* * * * * *' });
    scheduler.start();
    const end = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await scheduler.stop();
    expect(scheduler.report().map((s) => s.schedule_id)).toEqual([id]);
    expect(seen[0]).toMatchObject({ scheduleId: id, cron: '* * * * * *' });
  });
});
