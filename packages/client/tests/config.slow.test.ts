import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sessionDoc } from '@svc/test-support/upload';
import { ConfigError, readConfigFile, Settings } from '../src/kit/config/settings.ts';
import { runCli, SVC, useTempHome } from '@svc/test-support/cli';
import { startFakePortal, type FakePortal } from '@svc/test-support/license-fake-portal';

/**
 * Client config files (`-c`, KEY=VALUE, dotenv's parser, never sourced) and the precedence
 * flag > config file (later -c wins) > environment > default: in process on Settings, and as
 * a real `svc upload -c` process whose requests land on servers the test controls.
 */

const home = useTempHome();
const file = home.file;

describe('config file syntax (readConfigFile)', () => {
  it('quotes, export, comments, blank lines, = in values, repeated keys', async () => {
    const p = await file(
      'syntax.conf',
      [
        '# a full-line comment',
        '   # an indented comment',
        '',
        '   ',
        'PLAIN=value',
        'export EXPORTED=yes',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the conf file's literal text, not a template
        "SINGLE='literal \\n $HOME ${USER} `id`'",
        'DOUBLE="line1\\nline2"',
        'DOUBLE_HASH="not # a comment"',
        "SINGLE_HASH='also # not a comment'",
        'TRAILING=kept # a trailing comment',
        'EQUALS=a=b==c',
        'URL=https://portal.example/api/upload?x=1&y=2',
        'SPACED =  padded value  ',
        'EMPTY=',
        'REPEATED=first',
        'REPEATED=second',
        'DOLLAR=$HOME/not/expanded',
        '',
      ].join('\n'),
    );
    expect(readConfigFile(p)).toEqual({
      PLAIN: 'value',
      EXPORTED: 'yes',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: single quotes keep the text literal
      SINGLE: 'literal \\n $HOME ${USER} `id`',
      DOUBLE: 'line1\nline2',
      DOUBLE_HASH: 'not # a comment',
      SINGLE_HASH: 'also # not a comment',
      TRAILING: 'kept',
      EQUALS: 'a=b==c',
      URL: 'https://portal.example/api/upload?x=1&y=2',
      SPACED: 'padded value',
      EMPTY: '',
      REPEATED: 'second',
      DOLLAR: '$HOME/not/expanded',
    });
  });

  it('CRLF line endings are the same as LF', async () => {
    const p = await file(
      'crlf.conf',
      '# windows\r\nA=1\r\n\r\nexport B="two"\r\nC=\'three\' # c\r\nD=four # d\r\nE=x=y\r\n',
    );
    expect(readConfigFile(p)).toEqual({ A: '1', B: 'two', C: 'three', D: 'four', E: 'x=y' });
  });

  it('an unquoted # starts a comment even without a space before it (dotenv): quote such values', async () => {
    const p = await file('hash.conf', 'PASS=p#ss\nQUOTED="p#ss"\n');
    expect(readConfigFile(p)).toEqual({ PASS: 'p', QUOTED: 'p#ss' });
  });

  it('nothing is executed: command substitutions stay text', async () => {
    const marker = path.join(home.dir(), 'executed');
    const p = await file('inject.conf', `A=$(touch ${marker})\nB=\`touch ${marker}\`\n`);
    const values = readConfigFile(p);
    expect(values['A']).toBe(`$(touch ${marker})`);
    await expect(fs.stat(marker)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a missing file: ConfigError "Config file not found: <path>"; a directory: its own message', async () => {
    const missing = path.join(home.dir(), 'nope.conf');
    expect(() => readConfigFile(missing)).toThrow(ConfigError);
    expect(() => readConfigFile(missing)).toThrow(`Config file not found: ${missing}`);
    expect(() => new Settings({ configFiles: [missing] })).toThrow(`Config file not found: ${missing}`);
    expect(() => readConfigFile(home.dir())).toThrow(`Config file is a directory: ${home.dir()}`);
  });
});

describe('precedence on Settings: flag > config (later -c wins) > environment > default', () => {
  it('each layer and where the value came from', async () => {
    const a = await file('a.conf', 'K=from-a\nONLY_A=a\nBLANK=\n');
    const b = await file('b.conf', 'K=from-b\nONLY_B=b\n');
    const s = new Settings({
      configFiles: [a, b],
      env: { K: 'from-env', ONLY_ENV: 'e', ONLY_A: 'env-a', BLANK: 'env-blank' },
      flags: { K: 'from-flag', UNSET_FLAG: undefined },
    });
    expect(s.lookup('K')).toEqual({ value: 'from-flag', source: 'flag' });
    expect(s.lookup('ONLY_B')).toEqual({ value: 'b', source: `config:${b}` });
    expect(s.lookup('ONLY_A')).toEqual({ value: 'a', source: `config:${a}` });
    expect(s.lookup('ONLY_ENV')).toEqual({ value: 'e', source: 'env' });
    expect(s.lookup('BLANK')).toEqual({ value: 'env-blank', source: 'env' }); // a blank config value is unset
    expect(s.lookup('UNSET_FLAG')).toBeUndefined();
    expect(s.lookup('NOWHERE')).toBeUndefined();

    const noFlag = new Settings({ configFiles: [a, b], env: { K: 'from-env' } });
    expect(noFlag.lookup('K')).toEqual({ value: 'from-b', source: `config:${b}` });
    const reversed = new Settings({ configFiles: [b, a], env: { K: 'from-env' } });
    expect(reversed.lookup('K')).toEqual({ value: 'from-a', source: `config:${a}` });
    const envOnly = new Settings({ env: { K: 'from-env' } });
    expect(envOnly.lookup('K')).toEqual({ value: 'from-env', source: 'env' });
    expect(envOnly.fromConfig('K')).toBeUndefined();
    expect(noFlag.fromEnv('K')).toBe('from-env');
    expect(noFlag.fromConfig('K')).toEqual({ value: 'from-b', source: `config:${b}` });
  });

  it('seconds(): the default when unset, the value when whole and in range, else a ConfigError', async () => {
    const c = await file('secs.conf', 'T=60\n');
    expect(new Settings({}).seconds('T', 86_400)).toBe(86_400);
    expect(new Settings({ configFiles: [c], env: { T: '5' } }).seconds('T', 86_400)).toBe(60);
    expect(new Settings({ env: { T: ' 7 ' } }).seconds('T', 1)).toBe(7);
    expect(new Settings({ env: { T: '0' } }).seconds('T', 1, 0)).toBe(0);
    for (const bad of ['1.5', '-1', '1d', 'soon'])
      expect(() => new Settings({ env: { T: bad } }).seconds('T', 1, 0)).toThrow(ConfigError);
    expect(() => new Settings({ env: { T: '0' } }).seconds('T', 1)).toThrow(
      'T must be a whole number of seconds between 1 and',
    );
  });
});

describe('precedence through a real `svc upload -c` process', () => {
  let servers: FakePortal[];
  let session: string;
  const KEY_ENV = `svc_pro_${'e'.repeat(64)}`;
  const KEY_A = `svc_pro_${'a'.repeat(64)}`;
  const KEY_B = `svc_biz_${'b'.repeat(64)}`;
  const KEY_FLAG = `svc_msp_${'f'.repeat(64)}`;

  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2, 3].map(() => startFakePortal(null, 'upload-ok')));
    session = await file('session_results.json', JSON.stringify(sessionDoc('session-minimal.json')));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  beforeEach(() => {
    for (const s of servers) s.requests = [];
  });

  /** Which server got the upload, and with which key. */
  const hits = () => servers.map((s) => s.requests.map((r) => `${r.method} ${r.path} ${r.apiKey}`));

  it('config beats environment; -u/-k beat config; a later -c beats an earlier one', async () => {
    const [envSrv, aSrv, bSrv, flagSrv] = servers as [FakePortal, FakePortal, FakePortal, FakePortal];
    const a = await file('proc-a.conf', `CONSULTATION_API_URL=${aSrv.uploadUrl}\nSVC_API_KEY=${KEY_A}\n`);
    const b = await file('proc-b.conf', `CONSULTATION_API_URL=${bSrv.uploadUrl}\nSVC_API_KEY=${KEY_B}\n`);
    const env = { CONSULTATION_API_URL: envSrv.uploadUrl, SVC_API_KEY: KEY_ENV };
    const up = (args: string[]) => runCli(SVC, ['upload', session, '--json', ...args], { env });

    let r = await up([]);
    expect(r.code).toBe(0);
    expect(hits()).toEqual([[`POST /api/upload ${KEY_ENV}`], [], [], []]);

    for (const s of servers) s.requests = [];
    r = await up(['-c', a]);
    expect(r.code).toBe(0);
    expect(hits()).toEqual([[], [`POST /api/upload ${KEY_A}`], [], []]);

    for (const s of servers) s.requests = [];
    r = await up(['-c', a, '-c', b]);
    expect(r.code).toBe(0);
    expect(hits()).toEqual([[], [], [`POST /api/upload ${KEY_B}`], []]);

    for (const s of servers) s.requests = [];
    r = await up(['-c', b, '-c', a]);
    expect(r.code).toBe(0);
    expect(hits()).toEqual([[], [`POST /api/upload ${KEY_A}`], [], []]);

    for (const s of servers) s.requests = [];
    r = await up(['-c', a, '-u', flagSrv.uploadUrl, '-k', KEY_FLAG]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: true, message: 'fake upload' });
    expect(hits()).toEqual([[], [], [], [`POST /api/upload ${KEY_FLAG}`]]);
    // The keys never reach the output.
    for (const k of [KEY_ENV, KEY_A, KEY_B, KEY_FLAG]) expect(r.stdout + r.stderr).not.toContain(k);
  });

  it('a config file with CRLF, export, quotes and comments gives the exact URL and key', async () => {
    const srv = servers[1] as FakePortal;
    const c = await file(
      'proc-syntax.conf',
      `# portal\r\n\r\nexport CONSULTATION_API_URL="${srv.uploadUrl}"   # the lab portal\r\nSVC_API_KEY='${KEY_B}'\r\nSVC_API_KEY=${KEY_A} # repeated: this one wins\r\n`,
    );
    const r = await runCli(SVC, ['upload', session, '-c', c], { env: {} });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Uploaded session fake\nShare URL: http://fake/share/?token=${'f'.repeat(64)}\n`);
    expect(hits()).toEqual([[], [`POST /api/upload ${KEY_A}`], [], []]);
  });

  it('SVC_LICENSE_KEY in the environment beats SVC_API_KEY of a config file', async () => {
    const srv = servers[2] as FakePortal;
    const c = await file(
      'proc-lk.conf',
      `CONSULTATION_API_URL=${srv.uploadUrl}\nSVC_API_KEY=${KEY_A}\nSVC_LICENSE_KEY=${KEY_B}\n`,
    );
    const r = await runCli(SVC, ['upload', session, '-c', c], { env: { SVC_LICENSE_KEY: KEY_FLAG } });
    expect(r.code).toBe(0);
    expect(hits()).toEqual([[], [], [`POST /api/upload ${KEY_FLAG}`], []]);
    // ...and a config file's SVC_LICENSE_KEY is never used.
    for (const s of servers) s.requests = [];
    const r2 = await runCli(SVC, ['upload', session, '-c', c], { env: {} });
    expect(r2.code).toBe(0);
    expect(hits()).toEqual([[], [], [`POST /api/upload ${KEY_A}`], []]);
  });

  it('a missing config file: exit 2, "Config file not found", nothing sent', async () => {
    const missing = path.join(home.dir(), 'missing.conf');
    const r = await runCli(SVC, ['upload', session, '-c', missing], {
      env: { CONSULTATION_API_URL: (servers[0] as FakePortal).uploadUrl, SVC_API_KEY: KEY_ENV },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: Config file not found: ${missing}\n`);
    expect(r.stdout).toBe('');
    expect(hits()).toEqual([[], [], [], []]);
  });
});
