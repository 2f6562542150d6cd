import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { SessionFile } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertSettingsFrom } from '../src/alerts/settings.ts';
import { orcSettingsFrom } from '../src/pipeline/orc964.ts';
import type { ScanFinding } from '../src/pipeline/types.ts';
import { defaultBranding } from '../src/report/branding.ts';
import { listSessionIds } from '../src/kit/session-dir/history.ts';
import { historyOf, trendPointOf } from '../src/session-dir/target-history.ts';
import { isScannerSessionId, scannerSessionId } from '@svc/protocol';
import { execSummaryFileName, reportFileName, reportNameOf, slugName } from '../src/session-dir/names.ts';
import { produceSession, type ProduceInput } from '../src/session-dir/produce.ts';
import {
  defaultSessionsRoot,
  SessionDirError,
  sessionPath,
  sessionsRootOf,
  within,
} from '../src/kit/session-dir/root.ts';
import { cleanStale, writeSessionDir } from '../src/session-dir/write.ts';

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-session-dir-'));
});
afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});
let n = 0;
const freshRoot = () => path.join(work, `root-${++n}`);
const errorCode = (run: () => unknown): string | null => {
  try {
    run();
    return null;
  } catch (err) {
    return err instanceof SessionDirError ? err.code : `not a SessionDirError: ${(err as Error).message}`;
  }
};

describe('session ids', () => {
  it('are the UTC second of the start, YYYYMMDD_HHMMSS', () => {
    expect(scannerSessionId(new Date('2025-01-06T02:00:00.999Z'))).toBe('20250106_020000');
    expect(scannerSessionId(Date.UTC(2024, 11, 31, 23, 59, 59))).toBe('20241231_235959');
    expect(() => scannerSessionId(new Date('nope'))).toThrow(RangeError);
    expect(() => scannerSessionId(Date.UTC(10000, 0, 1))).toThrow(/four-digit year/);
  });

  it('only the exact pattern is an id', () => {
    expect(isScannerSessionId('20250106_020000')).toBe(true);
    for (const bad of ['2025016_020000', '20250106-020000', '../20250106_020000', '20250106_020000/..', '', 7])
      expect(isScannerSessionId(bad), String(bad)).toBe(false);
  });
});

describe('report names', () => {
  it('slug a name to [a-z0-9_-], at most 64 characters, never empty', () => {
    expect(slugName('10.20.0.0/24')).toBe('10_20_0_0_24');
    expect(slugName('Acme Corp.')).toBe('acme_corp');
    expect(slugName('../../etc/passwd')).toBe('etc_passwd');
    expect(slugName('Café Zürich')).toBe('cafe_zurich');
    expect(slugName('...')).toBe('session');
    expect(slugName('a\u0000b\nc')).toBe('a_b_c');
    expect(slugName('x'.repeat(100))).toHaveLength(64);
    expect(slugName(`${'y'.repeat(63)}.z`)).toBe('y'.repeat(63));
  });

  it('name the files after the client when there is one, else the target', () => {
    expect(reportNameOf({ client: 'Acme Corp', target: '10.0.0.0/24' })).toBe('acme_corp');
    expect(reportNameOf({ client: '  ', target: '10.0.0.0/24' })).toBe('10_0_0_0_24');
    expect(reportNameOf(undefined)).toBe('session');
    expect(reportFileName('x/../y')).toBe('report_x_y.html');
    expect(execSummaryFileName('Acme')).toBe('exec_summary_acme.html');
  });
});

describe('the sessions root', () => {
  const settings = (values: Record<string, string>) => ({ get: (k: string) => values[k] });

  it('is --sessions-dir, else SVC_SESSIONS_DIR, else ~/.svc/sessions, resolved from the working directory', () => {
    const base = { home: '/home/u', cwd: '/work' };
    expect(sessionsRootOf({ ...base, flag: 'flagged', settings: settings({ SVC_SESSIONS_DIR: '/set' }) })).toBe(
      '/work/flagged',
    );
    expect(sessionsRootOf({ ...base, flag: ' ', settings: settings({ SVC_SESSIONS_DIR: 'rel' }) })).toBe('/work/rel');
    expect(sessionsRootOf({ ...base, settings: settings({}) })).toBe('/home/u/.svc/sessions');
    expect(defaultSessionsRoot('/h')).toBe('/h/.svc/sessions');
  });

  it('no id or name can leave it', () => {
    const root = '/data/sessions';
    expect(sessionPath(root, '20250106_020000')).toBe('/data/sessions/20250106_020000');
    expect(errorCode(() => sessionPath(root, '../20250106_020000'))).toBe('session.bad_id');
    expect(errorCode(() => sessionPath(root, '/etc'))).toBe('session.bad_id');
    for (const name of ['..', '.', '', '../x', 'a/b', '/abs', 'a/../../b'])
      expect(
        errorCode(() => within(root, name)),
        name,
      ).toBe('session.outside_root');
    expect(within(root, 'report_x.html')).toBe('/data/sessions/report_x.html');
  });
});

describe('writeSessionDir', () => {
  const files = [
    { name: 'session_results.json', content: '{}\n' },
    { name: 'pipeline.log', content: 'log\n' },
  ];

  it('writes every file into <root>/<id> and leaves no temp directory', () => {
    const root = freshRoot();
    const steps: string[] = [];
    const dir = writeSessionDir(root, '20250106_020000', files, { onStep: (s) => steps.push(s) });
    expect(dir).toBe(path.join(root, '20250106_020000'));
    expect(fs.readdirSync(root)).toStrictEqual(['20250106_020000']);
    expect(fs.readdirSync(dir).sort()).toStrictEqual(['pipeline.log', 'session_results.json']);
    expect(fs.readFileSync(path.join(dir, 'pipeline.log'), 'utf8')).toBe('log\n');
    // The mode a plain mkdir gives (the umask decides), not a temp directory's private 0700.
    fs.mkdirSync(path.join(root, 'plain'));
    expect(fs.statSync(dir).mode & 0o777).toBe(fs.statSync(path.join(root, 'plain')).mode & 0o777);
    expect(steps).toStrictEqual([
      'temp-created',
      'file-written:session_results.json',
      'file-written:pipeline.log',
      'files-synced',
      'renamed',
      'root-synced',
    ]);
  });

  it('refuses a second session of the same id (a run started in the same second) and keeps the first', () => {
    const root = freshRoot();
    writeSessionDir(root, '20250106_020000', files);
    expect(
      errorCode(() => writeSessionDir(root, '20250106_020000', [{ name: 'pipeline.log', content: 'other' }])),
    ).toBe('session.exists');
    expect(fs.readFileSync(path.join(root, '20250106_020000', 'pipeline.log'), 'utf8')).toBe('log\n');
    expect(fs.readdirSync(root)).toStrictEqual(['20250106_020000']);
  });

  it('replaces an existing session whole when asked to', () => {
    const root = freshRoot();
    writeSessionDir(root, '20250106_020000', files);
    writeSessionDir(root, '20250106_020000', [{ name: 'session_results.json', content: '[]' }], { replace: true });
    expect(fs.readdirSync(path.join(root, '20250106_020000'))).toStrictEqual(['session_results.json']);
    expect(fs.readdirSync(root)).toStrictEqual(['20250106_020000']);
  });

  it('rejects file names that are not plain names, before writing anything', () => {
    const root = freshRoot();
    for (const name of ['../x', 'a/b', '.hidden', '', '..'])
      expect(
        errorCode(() => writeSessionDir(root, '20250106_020000', [{ name, content: '' }])),
        name,
      ).toBe('session.bad_name');
    expect(errorCode(() => writeSessionDir(root, '../x', files))).toBe('session.bad_id');
    expect(fs.existsSync(root)).toBe(false);
  });

  it('removes temp directories of dead writers, keeps a live writer’s, and listings ignore both', () => {
    const root = freshRoot();
    writeSessionDir(root, '20250106_020000', files);
    const dead = path.join(root, '.tmp-20250107_020000-999999999-abc');
    const live = path.join(root, `.tmp-20250107_020000-${process.pid}-def`);
    const old = path.join(root, '.old-20250107_020000-999999999-ghi');
    for (const d of [dead, live, old]) {
      fs.mkdirSync(d);
      fs.writeFileSync(path.join(d, 'session_results.json'), '{}');
    }
    expect(listSessionIds(root)).toStrictEqual(['20250106_020000']);
    expect(cleanStale(root).sort()).toStrictEqual([path.basename(old), path.basename(dead)].sort());
    expect(fs.readdirSync(root).sort()).toStrictEqual([
      '.tmp-20250107_020000-' + process.pid + '-def',
      '20250106_020000',
    ]);
  });
});

const ALERTS = alertSettingsFrom({ get: () => undefined });
const finding = (over: Partial<ScanFinding>): ScanFinding => ({
  rule_id: 'telnet-open',
  title: 'Telnet enabled',
  severity: 'high',
  host: '10.0.0.6',
  port: 23,
  protocol: 'tcp',
  ...over,
});

function run(root: string, id: string, over: Partial<ProduceInput> = {}): ProduceInput {
  const start = Date.UTC(+id.slice(0, 4), +id.slice(4, 6) - 1, +id.slice(6, 8), +id.slice(9, 11), +id.slice(11, 13));
  return {
    root,
    findings: [
      finding({}),
      finding({
        rule_id: 'default-credentials',
        title: 'Default <b>admin</b> password',
        severity: 'critical',
        port: 80,
      }),
    ],
    hosts: [{ ip: '10.0.0.6', hostname: 'gw01' }],
    exceptions: [],
    license: { tier: 'msp', state: null },
    now: new Date(start + 600_000),
    settings: {
      sessionId: id,
      target: '10.0.0.0/24',
      client: 'Acme Corp',
      toolVersion: '4.2.3',
      scanProfile: 'standard',
      startedAt: new Date(start),
      schedule: null,
      orc: orcSettingsFrom({}),
    },
    alerts: ALERTS,
    branding: defaultBranding(),
    ...over,
  };
}

describe('produceSession', () => {
  it('writes the four files, a valid session file and a pipeline.log of every stage', async () => {
    const root = freshRoot();
    const base = run(root, '20250301_140000');
    const criticals = ['outdated-software:22', 'smbv1-enabled:445', 'rdp-exposed:3389', 'database-exposed:5432'].map(
      (r) => finding({ rule_id: r.split(':')[0]!, title: r, severity: 'critical', port: Number(r.split(':')[1]) }),
    );
    const out = await produceSession({ ...base, findings: [...base.findings, ...criticals], clock: () => 0 });
    expect(out.path).toBe(path.join(root, '20250301_140000'));
    expect(out.files).toStrictEqual([
      'session_results.json',
      'pipeline.log',
      'report_acme_corp.html',
      'exec_summary_acme_corp.html',
    ]);
    expect(fs.readdirSync(out.path).sort()).toStrictEqual([...out.files].sort());
    const doc = JSON.parse(fs.readFileSync(path.join(out.path, 'session_results.json'), 'utf8'));
    expect(doc).toStrictEqual(out.doc);
    expect(Value.Check(SessionFile, doc)).toBe(true);
    expect(doc.metadata).toMatchObject({ session_id: '20250301_140000', target: '10.0.0.0/24', client: 'Acme Corp' });
    // The alert defaults: risk 60 or more and new critical/high trigger; scan_complete does not.
    expect(doc.alerts_summary.alerts_triggered.map((a: { type: string }) => a.type)).toStrictEqual([
      'risk_threshold',
      'new_critical',
    ]);
    expect(fs.readFileSync(path.join(out.path, 'pipeline.log'), 'utf8')).toBe(
      [
        '2025-03-01T14:00:00Z start session 20250301_140000 target "10.0.0.0/24" svc 4.2.3 profile standard',
        '2025-03-01T14:10:00Z stage history 0 ms',
        '2025-03-01T14:10:00Z stage prior none, 0 earlier',
        '2025-03-01T14:10:00Z stage findings 0 ms',
        '2025-03-01T14:10:00Z stage remediation 0 ms',
        '2025-03-01T14:10:00Z stage exceptions 0 ms',
        '2025-03-01T14:10:00Z stage scoring 0 ms',
        '2025-03-01T14:10:00Z stage compliance 0 ms',
        '2025-03-01T14:10:00Z stage orc_964 0 ms',
        '2025-03-01T14:10:00Z stage topology 0 ms',
        '2025-03-01T14:10:00Z stage scheduling 0 ms',
        '2025-03-01T14:10:00Z stage license 0 ms',
        '2025-03-01T14:10:00Z stage summaries 0 ms',
        '2025-03-01T14:10:00Z stage alerts 0 ms',
        '2025-03-01T14:10:00Z stage report 0 ms',
        '2025-03-01T14:10:00Z stage exec_summary 0 ms',
        `2025-03-01T14:10:00Z end session 20250301_140000: 6 findings on 1 host, risk ${doc.summary.risk_score} (${doc.summary.risk_grade}), operational ${doc.summary.risk_score_operational} (${doc.summary.risk_grade_operational}), 2 alerts; 0 ms`,
        '',
      ].join('\n'),
    );
  });

  it('measures each stage with the clock and logs warnings after the stage that raised them', async () => {
    const root = freshRoot();
    let t = 0;
    const out = await produceSession({
      ...run(root, '20250301_140000'),
      license: { tier: '', state: null },
      clock: () => (t += 3),
    });
    const log = fs.readFileSync(path.join(out.path, 'pipeline.log'), 'utf8').split('\n');
    expect(log.filter((l) => / stage findings /.test(l))).toStrictEqual(['2025-03-01T14:10:00Z stage findings 3 ms']);
    // Community: remediation and compliance are skipped, each with one warning.
    expect(out.warnings).toHaveLength(2);
    expect(log.filter((l) => / warning /.test(l))).toStrictEqual(
      out.warnings.map((w) => `2025-03-01T14:10:00Z warning ${w}`),
    );
    expect(log.some((l) => / stage remediation /.test(l))).toBe(false);
  });

  it('takes the prior session and the trend of the same target from the root, and refuses a clash', async () => {
    const root = freshRoot();
    const first = await produceSession(run(root, '20250301_140000'));
    await produceSession({
      ...run(root, '20250302_140000'),
      settings: { ...run(root, '20250302_140000').settings, target: 'other.example' },
    });
    // A run interrupted before (its temp directory) and a broken session are not sessions.
    fs.mkdirSync(path.join(root, '.tmp-20250303_000000-999999999-x'));
    fs.mkdirSync(path.join(root, '20250303_000000'));
    fs.writeFileSync(path.join(root, '20250303_000000', 'session_results.json'), '{not json');
    const second = await produceSession({
      ...run(root, '20250308_140000'),
      findings: [finding({})],
    });
    const doc = second.doc;
    expect(doc.remediation!.map((r) => [r.title, r.status, r.first_seen])).toStrictEqual([
      ['Telnet enabled', 'persistent', '20250301_140000'],
    ]);
    expect(doc.remediation_resolved!.map((r) => r.title)).toStrictEqual(['Default <b>admin</b> password']);
    const history = historyOf(root, '10.0.0.0/24', '20250309_000000');
    expect(history.prior?.metadata?.session_id).toBe('20250308_140000');
    expect(history.trend.map((p) => p.session_id)).toStrictEqual(['20250301_140000', '20250308_140000']);
    expect(history.trend[0]).toStrictEqual(trendPointOf(first.doc));
    expect(fs.existsSync(path.join(root, '.tmp-20250303_000000-999999999-x'))).toBe(false);

    await expect(produceSession(run(root, '20250308_140000'))).rejects.toMatchObject({ code: 'session.exists' });
    await expect(produceSession(run(root, '../../x'))).rejects.toMatchObject({ code: 'session.bad_id' });
  });
});
