import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './index.ts';

const TOKEN = 'a'.repeat(32);

function problem(env: Record<string, string>): string {
  try {
    loadConfig(env, '/srv/portal');
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe('SVC_METRICS_TOKEN and SVC_METRICS_LISTEN', () => {
  it('are off by default, and blank counts as unset', () => {
    expect(loadConfig({}, '/srv/portal').metrics).toEqual({ token: null, listen: null, backupMaxAgeHours: 26 });
    expect(loadConfig({ SVC_METRICS_TOKEN: ' ', SVC_METRICS_LISTEN: '' }, '/srv/portal').metrics).toEqual({
      token: null,
      listen: null,
      backupMaxAgeHours: 26,
    });
  });

  it('reads a token and a listen address (IPv4, IPv6 in brackets, a host name, port 0 for any free one)', () => {
    const read = (env: Record<string, string>) => loadConfig(env, '/srv/portal').metrics;
    expect(read({ SVC_METRICS_TOKEN: ` ${TOKEN} ` })).toEqual({ token: TOKEN, listen: null, backupMaxAgeHours: 26 });
    expect(read({ SVC_METRICS_LISTEN: '10.0.0.5:9464' }).listen).toEqual({ host: '10.0.0.5', port: 9464 });
    expect(read({ SVC_METRICS_LISTEN: '[::1]:9464' }).listen).toEqual({ host: '::1', port: 9464 });
    expect(read({ SVC_METRICS_LISTEN: 'metrics.internal:9464' }).listen).toEqual({
      host: 'metrics.internal',
      port: 9464,
    });
    expect(read({ SVC_METRICS_LISTEN: '127.0.0.1:0' }).listen).toEqual({ host: '127.0.0.1', port: 0 });
  });

  it('refuses a short or spaced token without repeating it', () => {
    for (const token of ['short-token', `${'b'.repeat(20)} ${'c'.repeat(20)}`]) {
      const message = problem({ SVC_METRICS_TOKEN: token });
      expect(message).toBe(
        'Invalid configuration: SVC_METRICS_TOKEN must be at least 32 printable characters without spaces (e.g. openssl rand -hex 32)',
      );
      expect(message).not.toContain(token);
    }
  });

  it('refuses a listen address that is not host:port, and the portal own address', () => {
    for (const bad of [
      '9464',
      '10.0.0.5',
      ':9464',
      '10.0.0.5:99999',
      '::1:9464',
      '[10.0.0.5]:9464',
      'http://a:1',
      'a b:1',
    ])
      expect(problem({ SVC_METRICS_LISTEN: bad }), bad).toBe(
        `Invalid configuration: SVC_METRICS_LISTEN must be host:port, e.g. 10.0.0.5:9464 or [::1]:9464 (got "${bad}")`,
      );
    expect(problem({ SVC_METRICS_LISTEN: '127.0.0.1:8080' })).toBe(
      "Invalid configuration: SVC_METRICS_LISTEN must differ from the portal's own address (HOST:PORT, 127.0.0.1:8080)",
    );
  });
});

describe('SVC_BACKUP_MAX_AGE_HOURS', () => {
  it('is 26 hours by default, 0 turns the backup gauges off, and a bad value is refused by name', () => {
    expect(loadConfig({ SVC_BACKUP_MAX_AGE_HOURS: '0' }, '/srv/portal').metrics.backupMaxAgeHours).toBe(0);
    expect(loadConfig({ SVC_BACKUP_MAX_AGE_HOURS: '170' }, '/srv/portal').metrics.backupMaxAgeHours).toBe(170);
    expect(problem({ SVC_BACKUP_MAX_AGE_HOURS: '1.5' })).toBe(
      'Invalid configuration: SVC_BACKUP_MAX_AGE_HOURS must be a whole number between 0 and 87600 (got "1.5")',
    );
  });
});
