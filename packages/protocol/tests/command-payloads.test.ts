import { describe, expect, it } from 'vitest';
import { COMMAND_TYPES, CONFIG_KEY_NOT_ALLOWED, REMOTE_CONFIG_ALLOWLIST, type CommandType } from '../src/agents.ts';
import { checkCommandPayload } from '../src/command-payloads.ts';
import type { RemoteConfigKey } from '../src/remote-config.ts';

/** docs/agent/commands.md: what a command's payload must be before it is queued or run. */

function accepted(type: CommandType, payload: Record<string, unknown>): Record<string, unknown> {
  const result = checkCommandPayload(type, payload);
  if (!result.ok) throw new Error(`${type} ${JSON.stringify(payload)} was refused: ${result.message}`);
  return result.payload;
}

function rejection(type: CommandType, payload: Record<string, unknown>): string {
  const result = checkCommandPayload(type, payload);
  if (result.ok) throw new Error(`${type} ${JSON.stringify(payload)} was accepted`);
  return result.message;
}

describe('checkCommandPayload: run_scan', () => {
  it('accepts targets alone and with profile and upload, normalising the target list', () => {
    expect(accepted('run_scan', { targets: '10.0.0.0/24' })).toEqual({ targets: '10.0.0.0/24' });
    expect(
      accepted('run_scan', {
        targets: ' 10.0.0.1 , host.example.com,,10.0.1.0/24 ',
        profile: 'quick',
        upload: true,
      }),
    ).toEqual({
      targets: '10.0.0.1,host.example.com,10.0.1.0/24',
      profile: 'quick',
      upload: true,
    });
    // Any profile name is allowed (it only selects a mode flag on the agent).
    expect(accepted('run_scan', { targets: 'a', profile: 'my_custom-profile', upload: false })).toEqual({
      targets: 'a',
      profile: 'my_custom-profile',
      upload: false,
    });
  });

  it.each([
    ['missing', {}],
    ['null', { targets: null }],
    ['empty', { targets: '' }],
    ['blank', { targets: '   ' }],
    ['only commas', { targets: ' , ,' }],
    ['not a string', { targets: 42 }],
  ])('refuses %s targets with a message that no targets were specified', (_label, payload) => {
    expect(rejection('run_scan', payload)).toMatch(/no targets were specified/);
  });

  it('refuses a target that could become a scanner option or carries shell syntax', () => {
    expect(rejection('run_scan', { targets: '-oN /etc/passwd' })).toMatch(/invalid target/);
    expect(rejection('run_scan', { targets: '10.0.0.1,--script=evil' })).toMatch(/invalid target/);
    expect(rejection('run_scan', { targets: '10.0.0.1;reboot' })).toMatch(/invalid target/);
    expect(rejection('run_scan', { targets: '10.0.0.1 10.0.0.2' })).toMatch(/invalid target/);
  });

  it('checks targets with the scan target rule: the address budget (default one /16, or the given one) and no v4/v6 mix', () => {
    const over = (n: number, max: number) =>
      `targets cover ${n} addresses, more than the ${max} allowed per run (SVC_SCAN_MAX_ADDRESSES)`;
    expect(rejection('run_scan', { targets: '0-255.0-255.0-255.0-255' })).toBe(over(2 ** 32, 65_536));
    expect(rejection('update_schedule', { schedule_id: 's', targets: '10.0.0.0/8' })).toBe(over(2 ** 24, 65_536));
    expect(rejection('run_scan', { targets: '10.0.0.1,fe80::1' })).toBe(
      'IPv4 and IPv6 targets cannot be scanned in one run',
    );
    expect(
      checkCommandPayload('run_scan', { targets: '10.0.0.0/8' }, { scanBudget: { maxAddresses: 2 ** 24 } }),
    ).toEqual({ ok: true, payload: { targets: '10.0.0.0/8' }, unknown: {} });
    expect(checkCommandPayload('run_scan', { targets: '10.0.0.0/24' }, { scanBudget: { maxAddresses: 255 } })).toEqual({
      ok: false,
      message: over(256, 255),
    });
  });

  it('refuses a non-boolean upload and a bad profile', () => {
    expect(rejection('run_scan', { targets: 'a', upload: 'true' })).toBe('payload.upload must be true or false');
    expect(rejection('run_scan', { targets: 'a', profile: '--full' })).toMatch(/^payload\.profile must be/);
    expect(rejection('run_scan', { targets: 'a', profile: '' })).toBe('payload.profile must be a non-empty string');
  });
});

describe('checkCommandPayload: push_config', () => {
  const GOOD: Record<(typeof REMOTE_CONFIG_ALLOWLIST)[number], string> = {
    DAEMON_POLL_INTERVAL: '30',
    DAEMON_HEARTBEAT_INTERVAL: '60',
    DAEMON_SCAN_RETRY_MAX: '3',
    DAEMON_SCAN_RETRY_BACKOFF: '30',
    DAEMON_LOG_LEVEL: 'info',
    ALERT_ENABLED: 'true',
    ALERT_RISK_THRESHOLD: '70',
    ALERT_ON_NEW_CRITICAL: 'false',
    SVC_SCAN_TIMEOUT: '28800',
  };
  it.each(REMOTE_CONFIG_ALLOWLIST.map((k) => [k]))('accepts the allowlisted key %s with a value of its type', (key) => {
    expect(accepted('push_config', { config_key: key, config_value: GOOD[key] })).toEqual({
      config_key: key,
      config_value: GOOD[key],
    });
  });

  it('turns numbers and booleans into their string form', () => {
    expect(accepted('push_config', { config_key: 'ALERT_RISK_THRESHOLD', config_value: 70 })).toEqual({
      config_key: 'ALERT_RISK_THRESHOLD',
      config_value: '70',
    });
    expect(accepted('push_config', { config_key: 'ALERT_ENABLED', config_value: false })).toEqual({
      config_key: 'ALERT_ENABLED',
      config_value: 'false',
    });
  });

  // Values of the wrong type for their key used to be queued for the agent.
  it.each([
    [
      'DAEMON_POLL_INTERVAL',
      'soon',
      'payload.config_value must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL',
    ],
    [
      'DAEMON_HEARTBEAT_INTERVAL',
      5,
      'payload.config_value must be an integer from 10 to 86400 (seconds) for DAEMON_HEARTBEAT_INTERVAL',
    ],
    ['DAEMON_SCAN_RETRY_MAX', '1000', 'payload.config_value must be an integer from 0 to 20 for DAEMON_SCAN_RETRY_MAX'],
    [
      'DAEMON_SCAN_RETRY_BACKOFF',
      '-5',
      'payload.config_value must be an integer from 1 to 3600 (seconds) for DAEMON_SCAN_RETRY_BACKOFF',
    ],
    ['ALERT_RISK_THRESHOLD', '70%', 'payload.config_value must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD'],
    ['ALERT_ENABLED', 'yes', 'payload.config_value must be true or false for ALERT_ENABLED'],
    ['ALERT_ON_NEW_CRITICAL', 1, 'payload.config_value must be true or false for ALERT_ON_NEW_CRITICAL'],
    [
      'SVC_SCAN_TIMEOUT',
      '59',
      'payload.config_value must be an integer from 60 to 259200 (seconds) for SVC_SCAN_TIMEOUT',
    ],
    ['DAEMON_LOG_LEVEL', '', 'payload.config_value must be one of debug, info, warning, error for DAEMON_LOG_LEVEL'],
    [
      'DAEMON_LOG_LEVEL',
      'trace',
      'payload.config_value must be one of debug, info, warning, error for DAEMON_LOG_LEVEL',
    ],
  ])('refuses %s = %j, a value of the wrong type or range', (key, value, message) => {
    expect(rejection('push_config', { config_key: key, config_value: value })).toBe(message);
  });

  it.each([
    'SCAN_TARGETS',
    'DAEMON_STORAGE_PATH',
    'daemon_poll_interval',
    'DAEMON_POLL_INTERVAL ',
    'PATH',
    'constructor',
    '__proto__',
  ])('refuses %j, which is not in the remote-update allowlist', (key) => {
    expect(rejection('push_config', { config_key: key, config_value: '1' })).toContain(CONFIG_KEY_NOT_ALLOWED);
  });

  it('refuses a non-string key, and a missing key or value', () => {
    expect(rejection('push_config', { config_key: 5, config_value: '1' })).toContain(CONFIG_KEY_NOT_ALLOWED);
    expect(rejection('push_config', { config_value: '1' })).toBe('payload.config_key is required for push_config');
    expect(rejection('push_config', { config_key: 'ALERT_ENABLED' })).toBe(
      'payload.config_value is required for push_config',
    );
  });

  it.each([
    ['true\nfeed'],
    ['true\rreturn'],
    ['true\u0000'],
    ['true\t'],
    ['true\u007f'],
    ['true\u0085'],
    ['true\u009b'],
    ['true\u2028'],
    ['true\u2029'],
  ])('refuses a config_value with a control character (%j)', (value) => {
    expect(rejection('push_config', { config_key: 'ALERT_ENABLED', config_value: value })).toBe(
      'payload.config_value must not contain control characters',
    );
  });

  it('refuses object values', () => {
    expect(rejection('push_config', { config_key: 'ALERT_ENABLED', config_value: { a: 1 } })).toBe(
      'payload.config_value must be a string, number or boolean',
    );
  });
});

describe('checkCommandPayload: set_log_level, shutdown, restart', () => {
  it.each([['debug'], ['info'], ['warning'], ['error']])('accepts level %s', (level) => {
    expect(accepted('set_log_level', { level })).toEqual({ level });
  });

  it.each([['warn'], ['DEBUG'], ['trace'], [''], [3]])('refuses level %j', (level) => {
    expect(rejection('set_log_level', { level })).toBe('payload.level must be one of debug, info, warning, error');
  });

  it('requires a level', () => {
    expect(rejection('set_log_level', {})).toBe('payload.level is required for set_log_level');
  });

  it('shutdown takes an optional boolean graceful; restart takes nothing', () => {
    expect(accepted('shutdown', {})).toEqual({});
    expect(accepted('shutdown', { graceful: false })).toEqual({ graceful: false });
    expect(rejection('shutdown', { graceful: 'no' })).toBe('payload.graceful must be true or false');
    expect(accepted('restart', {})).toEqual({});
  });
});

describe('checkCommandPayload: update', () => {
  it('accepts a branch, a vX.Y.Z tag, both, or neither', () => {
    expect(accepted('update', {})).toEqual({});
    expect(accepted('update', { branch: 'main' })).toEqual({ branch: 'main' });
    expect(accepted('update', { branch: 'release/4.2' })).toEqual({ branch: 'release/4.2' });
    expect(accepted('update', { version: 'v4.2.3' })).toEqual({ version: 'v4.2.3' });
    expect(accepted('update', { branch: 'main', version: 'v10.0.12' })).toEqual({
      branch: 'main',
      version: 'v10.0.12',
    });
  });

  it.each([['v1.2'], ['1.2.3'], ['v1.2.3-rc1'], ['v1.2.3;id'], ['--version']])('refuses version %j', (version) => {
    expect(rejection('update', { version })).toBe('payload.version must be a version tag vX.Y.Z');
  });

  it.each([['--upload-pack=x'], ['-b'], ['../main'], ['a..b'], ['main/'], ['x.lock'], ['main branch'], ['main\n']])(
    'refuses branch %j',
    (branch) => {
      expect(rejection('update', { branch })).toMatch(/^payload\.branch must/);
    },
  );
});

describe('checkCommandPayload: update_schedule and push_session', () => {
  it('accepts update_schedule with only a schedule id, and with every field', () => {
    expect(accepted('update_schedule', { schedule_id: 'sched_0123456789ab' })).toEqual({
      schedule_id: 'sched_0123456789ab',
    });
    expect(
      accepted('update_schedule', {
        schedule_id: 'sched_0123456789ab',
        action: 'create',
        cron: '0  3 * * 1-5',
        profile: 'quick_recon',
        targets: '10.0.0.0/24,10.0.1.5',
      }),
    ).toEqual({
      schedule_id: 'sched_0123456789ab',
      action: 'create',
      cron: '0 3 * * 1-5',
      profile: 'quick_recon',
      targets: '10.0.0.0/24,10.0.1.5',
    });
  });

  it('refuses update_schedule without a schedule id, with an unknown action or a bad cron', () => {
    expect(rejection('update_schedule', { action: 'update' })).toBe(
      'payload.schedule_id is required for update_schedule',
    );
    expect(rejection('update_schedule', { schedule_id: 's', action: 'remove' })).toBe(
      'payload.action must be one of update, create, delete',
    );
    expect(rejection('update_schedule', { schedule_id: 's', cron: '* * *' })).toBe(
      'payload.cron must be a cron expression of 5 or 6 fields',
    );
    expect(rejection('update_schedule', { schedule_id: 's', cron: '* * * * * $(id)' })).toBe(
      'payload.cron must be a cron expression of 5 or 6 fields',
    );
    expect(rejection('update_schedule', { schedule_id: '../etc' })).toBe('payload.schedule_id must be a schedule id');
    expect(rejection('update_schedule', { schedule_id: '-rf' })).toBe('payload.schedule_id must be a schedule id');
    expect(rejection('update_schedule', { schedule_id: 's', profile: '-x' })).toMatch(
      /^payload\.profile must be a profile name/,
    );
  });

  it('push_session takes an optional session name YYYYMMDD_HHMMSS', () => {
    expect(accepted('push_session', {})).toEqual({});
    expect(accepted('push_session', { session_id: '20250101_120000' })).toEqual({
      session_id: '20250101_120000',
    });
    expect(rejection('push_session', { session_id: '../../etc/passwd' })).toBe(
      'payload.session_id must be a session name YYYYMMDD_HHMMSS',
    );
    expect(rejection('push_session', { session_id: '20250101-120000' })).toBe(
      'payload.session_id must be a session name YYYYMMDD_HHMMSS',
    );
  });
});

describe('checkCommandPayload: unknown keys', () => {
  // The rollout rule: the portal accepts a new field before the agents know it; an agent ignores it.
  it.each(COMMAND_TYPES.map((t) => [t]))('%s accepts a key it does not know and passes it through', (type) => {
    const payload: Record<string, unknown> =
      type === 'run_scan'
        ? { targets: '10.0.0.1', surprise: { x: 1 } }
        : type === 'update_schedule'
          ? { schedule_id: 's1', surprise: { x: 1 } }
          : type === 'push_config'
            ? { config_key: 'ALERT_ENABLED', config_value: true, surprise: { x: 1 } }
            : type === 'set_log_level'
              ? { level: 'info', surprise: { x: 1 } }
              : { surprise: { x: 1 } };
    const result = checkCommandPayload(type, payload);
    if (!result.ok) throw new Error(result.message);
    expect(result.payload).not.toHaveProperty('surprise');
    expect(result.unknown).toEqual({ surprise: { x: 1 } });
  });

  it('still checks the values of the keys it knows next to an unknown one', () => {
    expect(rejection('shutdown', { graceful: 'no', later: 1 })).toBe('payload.graceful must be true or false');
  });

  it.each([['__proto__'], ['-x'], ['a b'], ['k'.repeat(65)]])('refuses %s as a key name', (key) => {
    const payload = JSON.parse(`{"${key}": 1}`) as Record<string, unknown>;
    expect(rejection('restart', payload)).toBe(
      `Unknown payload key for restart must be a name (letters, digits and _, starting with a letter, at most 64): ${key.slice(0, 64)}`,
    );
  });

  it('null optional values count as absent', () => {
    expect(accepted('run_scan', { targets: 'a', profile: null, upload: null })).toEqual({ targets: 'a' });
  });
});

describe('checkCommandPayload: typed results', () => {
  it('types an accepted payload by its command type', () => {
    const result = checkCommandPayload('push_config', { config_key: 'ALERT_ENABLED', config_value: true });
    if (!result.ok) throw new Error(result.message);
    // Compile-time: config_key is an allowlisted key and config_value a string.
    const key: RemoteConfigKey = result.payload.config_key;
    const value: string = result.payload.config_value;
    expect([key, value]).toEqual(['ALERT_ENABLED', 'true']);
  });
});
