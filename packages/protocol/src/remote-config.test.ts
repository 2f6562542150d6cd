import { describe, expect, it } from 'vitest';
import { REMOTE_CONFIG_ALLOWLIST } from './agents.ts';
import {
  checkRemoteConfigValue,
  hasControlOrSeparator,
  isRemoteConfigKey,
  REMOTE_CONFIG_RULES,
  type RemoteConfigKey,
} from './remote-config.ts';

/** The push_config value rules the portal and the agent share. */

const ok = (key: RemoteConfigKey, value: unknown) => checkRemoteConfigValue(key, value);

describe('remote config value rules', () => {
  it('has a rule for every allowlisted key and for nothing else', () => {
    expect(Object.keys(REMOTE_CONFIG_RULES).sort()).toEqual([...REMOTE_CONFIG_ALLOWLIST].sort());
    for (const key of REMOTE_CONFIG_ALLOWLIST) expect(isRemoteConfigKey(key)).toBe(true);
    for (const key of ['SCAN_TARGETS', 'daemon_poll_interval', '__proto__', 'constructor', 'toString', 5, null])
      expect(isRemoteConfigKey(key)).toBe(false);
  });

  it.each([
    ['DAEMON_POLL_INTERVAL', 10, '10'],
    ['DAEMON_POLL_INTERVAL', '86400', '86400'],
    ['DAEMON_HEARTBEAT_INTERVAL', '60', '60'],
    ['DAEMON_SCAN_RETRY_MAX', 0, '0'],
    ['DAEMON_SCAN_RETRY_MAX', '20', '20'],
    ['DAEMON_SCAN_RETRY_BACKOFF', '1', '1'],
    ['DAEMON_SCAN_RETRY_BACKOFF', 3600, '3600'],
    ['ALERT_RISK_THRESHOLD', '0', '0'],
    ['ALERT_RISK_THRESHOLD', 100, '100'],
    ['ALERT_ENABLED', true, 'true'],
    ['ALERT_ENABLED', 'false', 'false'],
    ['ALERT_ON_NEW_CRITICAL', false, 'false'],
    ['DAEMON_LOG_LEVEL', 'debug', 'debug'],
    ['DAEMON_LOG_LEVEL', 'warning', 'warning'],
  ] as [RemoteConfigKey, unknown, string][])('accepts %s = %j as %j', (key, value, canonical) => {
    expect(ok(key, value)).toEqual({ ok: true, value: canonical });
  });

  it.each([
    ['DAEMON_POLL_INTERVAL', '9', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', 86401, 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', 'fast', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', '', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', '30.5', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', 30.5, 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', ' 30', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', '+30', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', '1e3', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', '030', 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_POLL_INTERVAL', true, 'must be an integer from 10 to 86400 (seconds) for DAEMON_POLL_INTERVAL'],
    ['DAEMON_HEARTBEAT_INTERVAL', '0', 'must be an integer from 10 to 86400 (seconds) for DAEMON_HEARTBEAT_INTERVAL'],
    ['DAEMON_SCAN_RETRY_MAX', '-1', 'must be an integer from 0 to 20 for DAEMON_SCAN_RETRY_MAX'],
    ['DAEMON_SCAN_RETRY_MAX', 21, 'must be an integer from 0 to 20 for DAEMON_SCAN_RETRY_MAX'],
    ['DAEMON_SCAN_RETRY_BACKOFF', '0', 'must be an integer from 1 to 3600 (seconds) for DAEMON_SCAN_RETRY_BACKOFF'],
    ['ALERT_RISK_THRESHOLD', '101', 'must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD'],
    ['ALERT_RISK_THRESHOLD', '99999999999999999999', 'must be an integer from 0 to 100 for ALERT_RISK_THRESHOLD'],
    ['ALERT_ENABLED', 'yes', 'must be true or false for ALERT_ENABLED'],
    ['ALERT_ENABLED', 'TRUE', 'must be true or false for ALERT_ENABLED'],
    ['ALERT_ENABLED', 1, 'must be true or false for ALERT_ENABLED'],
    ['ALERT_ON_NEW_CRITICAL', '', 'must be true or false for ALERT_ON_NEW_CRITICAL'],
    ['DAEMON_LOG_LEVEL', 'warn', 'must be one of debug, info, warning, error for DAEMON_LOG_LEVEL'],
    ['DAEMON_LOG_LEVEL', 'INFO', 'must be one of debug, info, warning, error for DAEMON_LOG_LEVEL'],
    ['DAEMON_LOG_LEVEL', '', 'must be one of debug, info, warning, error for DAEMON_LOG_LEVEL'],
    ['DAEMON_LOG_LEVEL', 1, 'must be one of debug, info, warning, error for DAEMON_LOG_LEVEL'],
    ['ALERT_ENABLED', { a: 1 }, 'must be a string, number or boolean'],
    ['ALERT_ENABLED', ['true'], 'must be a string, number or boolean'],
  ] as [RemoteConfigKey, unknown, string][])('refuses %s = %j', (key, value, reason) => {
    expect(ok(key, value)).toEqual({ ok: false, reason });
  });

  // C0, DEL, C1 (U+0080–U+009F) and the line and paragraph separators, anywhere in the value.
  it.each([
    ['\u0000'],
    ['\n'],
    ['\r'],
    ['\t'],
    ['\u007f'],
    ['\u0080'],
    ['\u0085'],
    ['\u009b'],
    ['\u009f'],
    ['\u2028'],
    ['\u2029'],
  ])('refuses %j in any value', (ch) => {
    expect(hasControlOrSeparator(`a${ch}b`)).toBe(true);
    for (const [key, good] of [
      ['ALERT_ENABLED', 'true'],
      ['DAEMON_LOG_LEVEL', 'info'],
      ['DAEMON_POLL_INTERVAL', '60'],
    ] as [RemoteConfigKey, string][]) {
      expect(ok(key, `${good}${ch}`)).toEqual({ ok: false, reason: 'must not contain control characters' });
      expect(ok(key, `${ch}${good}`)).toEqual({ ok: false, reason: 'must not contain control characters' });
    }
  });

  it('does not take ordinary text for a control', () => {
    for (const text of ['info', 'é', '\u00a0', '\u00ff', '\u2027', '\u202a', 'x\u200by'])
      expect(hasControlOrSeparator(text)).toBe(false);
  });
});
