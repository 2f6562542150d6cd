import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { scannerSessionId } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  apportion,
  CATALOG,
  CATEGORIES,
  DEFAULT_MIX,
  parseMix,
  planCounts,
  riskGrade,
  riskScore,
  SEEDED_END,
} from '@svc/client/engine';
import { runCli, SVC, tool } from '@svc/test-support/cli';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * tools/synthetic_collection.sh (svc synthetic-collection, docs/cli.md):
 * the real tool as a process; the generated sessions go through the real client upload into
 * a real portal, whose derived metadata must agree with what the generator wrote.
 */

const TOOL = tool('synthetic_collection.sh');
const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
type Counts = Record<(typeof SEVERITIES)[number], number>;

let work: string;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-synthetic-'));
});
afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

/** A fresh directory under the test's work dir. */
let n = 0;
const freshDir = async () => {
  const dir = path.join(work, `run-${++n}`);
  await fs.mkdir(dir);
  return dir;
};

/** Runs the tool with `--json` in a fresh cwd; returns the created directories. */
async function generate(args: string[]): Promise<{ dirs: string[]; cwd: string; stderr: string }> {
  const cwd = await freshDir();
  const res = await runCli(TOOL, [...args, '--json'], { cwd });
  expect(res.code, res.stderr).toBe(0);
  return { dirs: JSON.parse(res.stdout) as string[], cwd, stderr: res.stderr };
}

const readDoc = async (dir: string) => JSON.parse(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8'));
const idTime = (id: string) => {
  const m = /^(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})$/.exec(id);
  if (!m) throw new Error(`not a session id: ${id}`);
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
};
const countSeverities = (findings: { severity: string }[]): Counts => {
  const out: Counts = { critical: 0, high: 0, medium: 0, low: 0, info: 0 };
  for (const f of findings) out[f.severity as keyof Counts]++;
  return out;
};

describe('severity split and scoring (the rules docs/cli/synthetic_collection.md states)', () => {
  it('splits by largest remainder, ties to the more severe; 15 of the default mix is 2/3/6/3/1', () => {
    const mix = parseMix(DEFAULT_MIX);
    expect(apportion(15, mix)).toStrictEqual({ critical: 2, high: 3, medium: 6, low: 3, info: 1 });
    expect(apportion(10, mix)).toStrictEqual({ critical: 1, high: 2, medium: 4, low: 2, info: 1 });
    expect(apportion(1, mix)).toStrictEqual({ critical: 0, high: 0, medium: 1, low: 0, info: 0 });
    expect(apportion(0, mix)).toStrictEqual({ critical: 0, high: 0, medium: 0, low: 0, info: 0 });
    expect(apportion(7, parseMix('high:50, LOW:50'))).toStrictEqual({
      critical: 0,
      high: 4,
      medium: 0,
      low: 3,
      info: 0,
    });
    for (let total = 0; total <= 60; total++)
      expect(Object.values(apportion(total, mix)).reduce((a, b) => a + b)).toBe(total);
  });

  it('scores 100 − (100 − floor) × e^(−weighted/50) with grades A/B/C/D/F at 20/40/60/80', () => {
    expect(riskScore({ critical: 2, high: 3, medium: 6, low: 3, info: 1 })).toBe(85);
    expect(riskScore({ critical: 0, high: 0, medium: 0, low: 0, info: 9 })).toBe(0);
    expect(['A', 'B', 'C', 'D', 'F'].map((_, i) => riskGrade([19, 20, 59, 60, 80][i]!))).toStrictEqual([
      'A',
      'B',
      'C',
      'D',
      'F',
    ]);
    expect(riskGrade(0)).toBe('A');
  });

  it('a trend is strictly monotone in risk even where rounding would flatten it', () => {
    const mix = parseMix(DEFAULT_MIX);
    for (const findings of [3, 15, 40]) {
      const down = planCounts(findings, mix, 4, 'improving').counts.map(riskScore);
      for (let i = 1; i < down.length; i++) if (down[i - 1]! > 0) expect(down[i]!).toBeLessThan(down[i - 1]!);
      const worsening = planCounts(findings, mix, 6, 'worsening');
      const up = worsening.counts.map(riskScore);
      // Strictly up until 100, where it saturates (40 findings of the default mix get there) and a warning says so.
      for (let i = 1; i < up.length; i++) if (up[i - 1]! < 100) expect(up[i]!).toBeGreaterThan(up[i - 1]!);
      if (up.slice(0, -1).includes(100)) expect(worsening.warnings[0]).toMatch(/cannot rise further/);
    }
    expect(planCounts(40, mix, 6, 'worsening').warnings[0]).toMatch(/risk score is 100 from session \d of 6 on/);
    expect(planCounts(2, mix, 6, 'improving').warnings[0]).toMatch(/cannot fall further/);
  });

  it('every catalog entry has its own rule id and, unless informational, a class of the one compliance table', () => {
    const entries = Object.entries(CATALOG).flatMap(([severity, list]) => list.map((e) => ({ severity, ...e })));
    expect(new Set(entries.map((e) => e.rule_id)).size).toBe(entries.length);
    for (const e of entries) {
      if (e.severity === 'info') expect(e.category, e.title).toBeUndefined();
      else expect(CATEGORIES, e.title).toContain(e.category);
    }
  });
});

describe('synthetic_collection.sh', () => {
  it('defaults: one session of 15 findings in ./synthetic_sessions, started an hour ago, with the default mix', async () => {
    const cwd = await freshDir();
    const before = Date.now();
    const res = await runCli(TOOL, ['--target', '10.20.0.0/24'], { cwd });
    const after = Date.now();
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const dir = lines[0]!;
    expect(path.dirname(dir)).toBe(path.join(cwd, 'synthetic_sessions'));
    const id = path.basename(dir);
    const started = idTime(id);
    expect(started).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 3_600_000);
    expect(started).toBeLessThanOrEqual(after - 3_600_000);
    expect(res.stderr).toMatch(
      /^Created 1 synthetic session for 10\.20\.0\.0\/24 in .*\(seed \d+, random; trend stable; findings 15; risk 85\)\n$/,
    );
    expect((await fs.readdir(dir)).sort()).toStrictEqual([
      'exec_summary_10_20_0_0_24.html',
      'pipeline.log',
      'report_10_20_0_0_24.html',
      'session_results.json',
    ]);

    const doc = await readDoc(dir);
    expect(doc.metadata).toMatchObject({
      session_id: id,
      target: '10.20.0.0/24',
      tool_version: '4.2.3',
      started_at: new Date(started).toISOString(),
    });
    expect(doc.metadata.client_id).toBeUndefined();
    const counts = { critical: 2, high: 3, medium: 6, low: 3, info: 1 };
    expect(doc.summary).toMatchObject({
      risk_score: 85,
      risk_grade: 'F',
      total_findings: 15,
      severity_counts: counts,
      risk_score_operational: 85,
    });
    expect(doc.summary.exception_impact).toStrictEqual({
      excepted_count: 0,
      score_delta: 0,
      excepted_findings: { critical: 0, high: 0, medium: 0, low: 0, info: 0 },
    });
    expect(doc.findings).toHaveLength(15);
    expect(countSeverities(doc.findings)).toStrictEqual(counts);
    expect(new Set(doc.findings.map((f: { id: string }) => f.id)).size).toBe(15);
    for (const f of doc.findings) expect(f.host).toMatch(/^10\.20\.0\.\d+$/);
    // Remediation: every finding is new in the first session, each its own weakness (fingerprint).
    expect(doc.remediation).toHaveLength(15);
    expect(new Set(doc.remediation.map((r: { fingerprint: string }) => r.fingerprint)).size).toBe(15);
    for (const r of doc.remediation) {
      expect(r).toMatchObject({
        status: 'new',
        first_seen: id,
        prior_status: null,
        exception_status: null,
        exception_expired: false,
      });
      expect(Object.keys(r)).toEqual(
        expect.arrayContaining([
          'status_changed',
          'note',
          'exception_reason',
          'exception_approver',
          'exception_approved_at',
          'exception_expiry',
        ]),
      );
    }
    expect(doc.remediation_resolved).toStrictEqual([]);
    expect(doc.topology.nodes.length).toBe(doc.summary.total_hosts);
    const log = await fs.readFile(path.join(dir, 'pipeline.log'), 'utf8');
    expect(log).toContain(`start session ${id} target "10.20.0.0/24" svc 4.2.3 profile synthetic`);
    expect(log).toMatch(new RegExp(`end session ${id}: 15 findings on \\d+ hosts, risk 85 \\(F\\)`));
    for (const stage of [
      'findings',
      'remediation',
      'exceptions',
      'scoring',
      'compliance',
      'topology',
      'alerts',
      'report',
    ])
      expect(log).toMatch(new RegExp(`stage ${stage} \\d+ ms`));
    // The alert defaults: 85 is over the threshold of 60, every critical and high is new, no scan_complete.
    expect(doc.alerts_summary.alerts_triggered.map((a: { type: string }) => a.type)).toStrictEqual([
      'risk_threshold',
      'new_critical',
    ]);
    expect(doc.alerts_summary.config).toMatchObject({
      risk_threshold: 60,
      on_new_critical: true,
      on_scan_complete: false,
    });
    const report = await fs.readFile(path.join(dir, 'report_10_20_0_0_24.html'), 'utf8');
    expect(report).toContain('id="consultation-section"');
    expect(report).toContain('10.20.0.0/24');
  });

  it('--sessions 3 --interval 1d: three directories one day apart; stable keeps the counts while findings come and go', async () => {
    const { dirs } = await generate([
      '--target',
      'acme.example',
      '--sessions',
      '3',
      '--interval',
      '1d',
      '--findings',
      '30',
    ]);
    expect(dirs).toHaveLength(3);
    const ids = dirs.map((d) => path.basename(d));
    expect(idTime(ids[1]!) - idTime(ids[0]!)).toBe(86_400_000);
    expect(idTime(ids[2]!) - idTime(ids[1]!)).toBe(86_400_000);
    const docs = await Promise.all(dirs.map(readDoc));
    for (const d of docs) {
      expect(d.summary.severity_counts).toStrictEqual(docs[0].summary.severity_counts);
      expect(d.summary.risk_score).toBe(docs[0].summary.risk_score);
      expect(d.findings).toHaveLength(30);
      // A non-IP target gets hosts in TEST-NET-1 named under the domain.
      for (const f of d.findings) {
        expect(f.host).toMatch(/^192\.0\.2\.\d+$/);
        expect(f.hostname).toMatch(/\.acme\.example$/);
      }
    }
    // Later sessions carry findings over (persistent / in_progress, first seen earlier) and list resolved ones.
    const later = docs[2].remediation as { status: string; first_seen: string; prior_status: string | null }[];
    expect(
      later.some(
        (r) => r.first_seen === ids[0] && ['persistent', 'in_progress'].includes(r.status) && r.prior_status !== null,
      ),
    ).toBe(true);
    for (const d of docs.slice(1)) {
      const newOnes = d.remediation.filter((r: { status: string }) => r.status === 'new').length;
      expect(d.remediation_resolved.length).toBe(newOnes);
      for (const r of d.remediation_resolved) expect(r.status).toBe('resolved');
    }
  });

  it('--interval accepts 30m, 12h and 2w', async () => {
    for (const [interval, ms] of [
      ['30m', 1_800_000],
      ['12h', 43_200_000],
      ['2w', 1_209_600_000],
    ] as const) {
      const { dirs } = await generate([
        '--target',
        't',
        '--sessions',
        '2',
        '--interval',
        interval,
        '--findings',
        '2',
        '--seed',
        '1',
      ]);
      expect(idTime(path.basename(dirs[1]!)) - idTime(path.basename(dirs[0]!))).toBe(ms);
    }
  });

  it('--trend improving / worsening: risk and findings strictly fall / rise over the sessions', async () => {
    for (const trend of ['improving', 'worsening'] as const) {
      const { dirs } = await generate(['--target', '10.1.2.3', '--sessions', '5', '--trend', trend]);
      const docs = await Promise.all(dirs.map(readDoc));
      const risks = docs.map((d) => d.summary.risk_score as number);
      const totals = docs.map((d) => d.summary.total_findings as number);
      for (let i = 1; i < docs.length; i++) {
        if (trend === 'improving') {
          expect(risks[i]!, `${risks}`).toBeLessThan(risks[i - 1]!);
          expect(totals[i]!, `${totals}`).toBeLessThan(totals[i - 1]!);
        } else {
          expect(risks[i]!, `${risks}`).toBeGreaterThan(risks[i - 1]!);
          expect(totals[i]!, `${totals}`).toBeGreaterThan(totals[i - 1]!);
        }
      }
      // The score always follows from the counts, and a single address is the only host.
      for (const d of docs) {
        expect(d.summary.risk_score).toBe(riskScore(d.summary.severity_counts));
        expect(countSeverities(d.findings)).toStrictEqual(d.summary.severity_counts);
        expect(d.topology.nodes.map((x: { ip: string }) => x.ip)).toStrictEqual(['10.1.2.3']);
      }
    }
  });

  it('--with-exceptions 2: two accepted, deferred findings per session and the dual score', async () => {
    const { dirs } = await generate([
      '--target',
      '10.9.0.0/24',
      '--sessions',
      '3',
      '--with-exceptions',
      '2',
      '--mix',
      'critical:40,high:60',
      '--findings',
      '10',
    ]);
    let previous: Set<string> = new Set();
    for (const dir of dirs) {
      const doc = await readDoc(dir);
      const excepted = doc.remediation.filter(
        (r: { exception_status: string | null }) => r.exception_status === 'accepted',
      );
      expect(excepted).toHaveLength(2);
      for (const r of excepted) {
        // Accepted in an earlier session: the consultant deferred it; accepted in this one: not yet.
        expect(r.status).toBe(
          previous.has(r.fingerprint) ? 'deferred' : r.prior_status === null ? 'new' : 'persistent',
        );
        expect(r.exception_reason).toBeTypeOf('string');
        expect(r.exception_approver).toMatch(/@/);
        expect(r.exception_approved_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(r.exception_expiry).toMatch(/^\d{4}-\d\d-\d\d$/);
        expect(r.exception_expired).toBe(false);
      }
      previous = new Set(excepted.map((r: { fingerprint: string }) => r.fingerprint));
      expect(
        doc.remediation.filter(
          (r: { exception_status: string | null }) => r.exception_status !== 'accepted' && r.exception_status !== null,
        ),
      ).toStrictEqual([]);
      const s = doc.summary;
      expect(s.exception_impact.excepted_count).toBe(2);
      expect(Object.values(s.exception_impact.excepted_findings as Counts).reduce((a, b) => a + b)).toBe(2);
      expect(s.risk_score_operational).toBeLessThan(s.risk_score);
      expect(s.exception_impact.score_delta).toBe(s.risk_score - s.risk_score_operational);
      // The one rule of docs/findings-of-record.md#one-set-of-numbers: exception_summary carries the
      // operational score and grade, as the portal's does.
      expect(doc.metadata.exception_summary).toStrictEqual({
        total_exceptions: 2,
        by_status: { accepted: 2, expired: 0 },
        score_delta: s.exception_impact.score_delta,
        risk_score_operational: s.risk_score_operational,
        risk_grade_operational: s.risk_grade_operational,
      });
    }
  });

  it('--seed: the same seed gives byte-identical files from a fixed base time; another seed differs', async () => {
    const args = [
      '--target',
      '10.20.0.0/24',
      '--sessions',
      '3',
      '--trend',
      'worsening',
      '--with-exceptions',
      '1',
      '--client-id',
      'acme',
    ];
    const a = await generate([...args, '--seed', '42']);
    const b = await generate([...args, '--seed', '42']);
    const c = await generate([...args, '--seed', '43']);
    const ids = a.dirs.map((d) => path.basename(d));
    expect(ids).toStrictEqual(b.dirs.map((d) => path.basename(d)));
    expect(ids).toStrictEqual(c.dirs.map((d) => path.basename(d)));
    expect(ids[2]).toBe(scannerSessionId(SEEDED_END));
    expect(ids).toStrictEqual(['20241223_020000', '20241230_020000', '20250106_020000']);
    for (let i = 0; i < 3; i++) {
      const files = (await fs.readdir(a.dirs[i]!)).sort();
      expect(files).toStrictEqual([
        'exec_summary_10_20_0_0_24.html',
        'pipeline.log',
        'report_10_20_0_0_24.html',
        'session_results.json',
      ]);
      expect((await fs.readdir(b.dirs[i]!)).sort()).toStrictEqual(files);
      for (const file of files) {
        const x = await fs.readFile(path.join(a.dirs[i]!, file));
        expect(x.equals(await fs.readFile(path.join(b.dirs[i]!, file))), `${ids[i]}/${file}`).toBe(true);
      }
    }
    const json = async (r: { dirs: string[] }) =>
      Promise.all(r.dirs.map((d) => fs.readFile(path.join(d, 'session_results.json'), 'utf8')));
    expect(await json(c)).not.toStrictEqual(await json(a));
    const doc = await readDoc(a.dirs[0]!);
    expect(doc.metadata.client_id).toBe('acme');
    expect(doc.metadata.synthetic).toStrictEqual({
      generator: 'svc synthetic-collection',
      seed: 42,
      trend: 'worsening',
      sequence: 1,
      sessions: 3,
    });
  });

  it('--json prints exactly the JSON array of the created directories (-o relative to the working directory)', async () => {
    const cwd = await freshDir();
    const res = await runCli(TOOL, ['--target', 'x', '--sessions', '2', '--seed', '5', '-o', 'out/sub', '--json'], {
      cwd,
    });
    expect(res.code, res.stderr).toBe(0);
    const expected = ['20241230_020000', '20250106_020000'].map((id) => path.join(cwd, 'out/sub', id));
    expect(res.stdout).toBe(`${JSON.stringify(expected, null, 2)}\n`);
    expect(res.stderr).toBe('');
    for (const dir of expected) expect((await fs.stat(path.join(dir, 'session_results.json'))).isFile()).toBe(true);
    // Without --json: one directory per line on stdout, the summary on stderr.
    const plain = await runCli(TOOL, ['--target', 'x', '--sessions', '2', '--seed', '5', '-o', 'out/sub'], { cwd });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(expected.map((d) => `${d}\n`).join(''));
    expect(plain.stderr).toMatch(
      /^Created 2 synthetic sessions for x in .*\(seed 5; trend stable; findings 15 → 15; risk \d+ → \d+\)\n$/,
    );
  });

  it('every bad input is a usage error: exit 2, one line on stderr, nothing written', async () => {
    const cases: [string[], RegExp][] = [
      [['--mix', 'critical:10,high:20,medium:40,low:20,info:5'], /--mix percentages add up to 95, not 100/],
      [['--mix', 'critical:50,severe:50'], /--mix: unknown severity "severe"/],
      [['--mix', 'critical:50,critical:50'], /--mix names critical twice/],
      [['--mix', 'critical:-10,high:110'], /--mix: the percentage of critical must be a whole number/],
      [['--mix', 'critical=100'], /--mix entry "critical=100" is not severity:percent/],
      [['--mix', ''], /--mix is empty/],
      [['--sessions', '-1'], /--sessions must be a whole number from 1 to 1000, got "-1"/],
      [['--sessions', 'three'], /--sessions must be a whole number/],
      [['--findings', '1.5'], /--findings must be a whole number from 0 to 10000/],
      [['--with-exceptions', '-1'], /--with-exceptions must be a whole number/],
      [['--with-exceptions', '16'], /--with-exceptions \(16\) cannot exceed --findings \(15\)/],
      [['--seed', 'abc'], /--seed must be a whole number from 0 to 4294967295/],
      [['--interval', '7'], /--interval must be a positive whole number with a unit/],
      [['--interval', '7y'], /--interval must be a positive whole number with a unit/],
      [['--interval', '0d'], /--interval must be a positive whole number/],
      [['--trend', 'sideways'], /--trend must be one of improving, worsening, stable, got "sideways"/],
      [
        ['--sessions', '1000', '--trend', 'worsening', '--findings', '10000'],
        /would need \d+ findings in one session; the limit is 10000/,
      ],
      [['--sessions', '1000', '--interval', '52w', '--seed', '1'], /would start before 1970/],
    ];
    const cwd = await freshDir();
    const runs = await Promise.all([
      ...cases.map(([args]) => runCli(TOOL, ['--target', '10.0.0.0/24', ...args], { cwd })),
      runCli(TOOL, ['--sessions', '2'], { cwd }),
      runCli(TOOL, ['--target', '   '], { cwd }),
    ]);
    const expectations = [...cases.map(([, re]) => re), /--target is required/, /--target must not be empty/];
    runs.forEach((res, i) => {
      expect(res.code, `${i}: ${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr, `${i}`).toMatch(/^error: [^\n]+\n$/);
      expect(res.stderr).toMatch(expectations[i]!);
    });
    expect(await fs.readdir(cwd)).toStrictEqual([]);
    // Twenty processes at once: on a loaded two-core machine they need more than the default minute.
  }, 180_000);

  it('a directory that cannot be written is exit 1 with the reason', async () => {
    const cwd = await freshDir();
    await fs.writeFile(path.join(cwd, 'file'), 'x');
    const res = await runCli(TOOL, ['--target', 't', '-o', 'file/sessions'], { cwd });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^error: cannot write session .*file\/sessions\/\d{8}_\d{6}: ENOTDIR[^\n]*\n$/);
  });
});

describe('generated sessions in a real portal', () => {
  const fixture = usePortalWithKey({ tier: 'business' });

  it('svc upload accepts every generated session and the portal derives the numbers the generator wrote', async () => {
    const { portal, key, clientId } = fixture;
    const { dirs } = await generate([
      '--target',
      '10.44.0.0/22',
      '--sessions',
      '3',
      '--interval',
      '12h',
      '--trend',
      'worsening',
      '--with-exceptions',
      '2',
      '--client-id',
      'from-the-file',
    ]);
    const token = await portal.adminToken();
    for (const dir of dirs) {
      const up = await runCli(SVC, ['upload', dir, '-u', `${portal.url}/api/upload`, '-k', key, '--json']);
      expect(up.code, up.stderr).toBe(0);
      const answer = JSON.parse(up.stdout);
      const id = path.basename(dir);
      expect(answer).toMatchObject({ success: true, session_id: id });

      const res = await fetch(`${portal.url}/api/sessions?session=${id}`, { headers: { 'X-Identity-Token': token } });
      expect(res.status).toBe(200);
      const s = ((await res.json()) as { session: any }).session;
      const doc = await readDoc(dir);
      const m = doc.metadata;
      expect(s).toMatchObject({
        session_id: id,
        client_id: clientId,
        target: '10.44.0.0/22',
        tool_version: '4.2.3',
        risk_score: doc.summary.risk_score,
        risk_grade: doc.summary.risk_grade,
        total_findings: doc.findings.length,
        total_hosts: doc.topology.nodes.length,
        severity_summary: countSeverities(doc.findings),
        has_topology: true,
        // The executive summary goes up with the session (svc upload sends every file of the directory).
        has_exec_summary: true,
      });
      expect(s.severity_summary).toStrictEqual(doc.summary.severity_counts);
      expect(s.remediation_summary).toStrictEqual(m.remediation_summary);
      expect(s.exception_summary).toStrictEqual({
        ...m.exception_summary,
        risk_score_operational: m.risk_score_operational,
        risk_grade_operational: m.risk_grade_operational,
      });
      expect(s.exception_summary.by_status.accepted).toBe(2);
      expect(s.compliance_summary).toStrictEqual(m.compliance_summary);
      expect(s.alerts_summary.total_triggered).toBe(doc.alerts_summary.alerts_triggered.length);
      expect(s.files.map((f: { name: string }) => f.name).sort()).toStrictEqual([
        'exec_summary.html',
        'pipeline.log',
        'report.html',
        'session_results.json',
      ]);
    }
  });
});
