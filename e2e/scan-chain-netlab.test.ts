import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { riskGrade, riskScore, type SessionFile, severityCounts } from '@svc/protocol';
import { findingFingerprint } from '@svc/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, withToken } from '@svc/test-support/http';
import { type HttpReceiver, httpReceiver } from '@svc/test-support/alerts-receivers';
import { type Netlab, startNetlab } from '@svc/test-support/netlab';
import { assertInTestNetwork } from '@svc/test-support/netlab/scanner-tools';
import { bannerServer } from '@svc/test-support/netlab/services';
import { findNmap, licenseState, NMAP_MISSING, resolveTarget, Settings } from '@svc/client/kit';
import { parseExceptionsFile, runScan } from '@svc/client/engine';
import { expectSharedReport } from './helpers/shared-report.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/**
 * The whole chain for real: `svc scan`'s orchestration runs in this process with
 * nmap inside the test network's scanner namespace, while the license check, the alerts (to a
 * local receiver) and the upload (to a real portal) go to 127.0.0.1. Two scans of the same target
 * into one sessions root; between them the anonymous FTP server is stopped (fixed) and an old
 * OpenSSH banner is planted on the legacy host (new). An exception file accepts the data host's
 * exposed Redis. Needs root; nothing outside the harness subnet and loopback is contacted.
 */

const PORTS = 'T:21,2222,6379';
const fixture = usePortalWithKey({ tier: 'business' });
let lab: Netlab;
let receiver: HttpReceiver;
let work: string;
let targets: string;
let legacy: string;
let data: string;

interface Scanned {
  path: string;
  doc: SessionFile;
  upload: { session_id: string; share_url: string | null };
  /** The alerts the receiver got during this scan. */
  alerts: Record<string, unknown>[];
}
const scans: Scanned[] = [];
const warnings: string[] = [];

async function scanOnce(): Promise<Scanned> {
  const before = receiver.bodies.length;
  const settings = new Settings({
    env: {
      CONSULTATION_API_URL: fixture.uploadUrl,
      SVC_API_KEY: fixture.key,
      ALERT_WEBHOOK_URL: receiver.url,
      ALERT_ON_SCAN_COMPLETE: 'true',
      ALERT_ON_NEW_CRITICAL: 'true',
      // Out of reach, so the alerts of each scan are exactly new_critical and scan_complete.
      ALERT_RISK_THRESHOLD: '100',
    },
  });
  const warn = (m: string) => warnings.push(m);
  const now = () => new Date();
  const nmapPath = findNmap(process.env);
  if (nmapPath === undefined) throw new Error(NMAP_MISSING);
  const exceptions = parseExceptionsFile(await fs.readFile(path.join(work, 'exceptions.json'), 'utf8'));
  const result = await runScan(
    {
      targets,
      profile: 'quick_recon',
      ports: PORTS,
      privileged: true,
      nmapPath,
      wrapper: lab.wrapper,
      root: path.join(work, 'sessions'),
      exceptions: exceptions.rules,
      settings,
      license: await licenseState({ settings, home: work, now, warn, timeoutS: 30 }),
      upload: resolveTarget(settings, {}, { home: work, warn }),
    },
    { now, info: () => {}, warn },
  );
  if (result.upload === undefined) throw new Error('the scan did not upload');
  const doc = JSON.parse(await fs.readFile(path.join(result.path, 'session_results.json'), 'utf8')) as SessionFile;
  return { path: result.path, doc, upload: result.upload, alerts: receiver.bodies.slice(before) as never };
}

beforeAll(async () => {
  [lab, receiver] = await Promise.all([startNetlab({ smb: false }), httpReceiver()]);
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-scan-chain-'));
  legacy = lab.hosts.legacy.ip;
  data = lab.hosts.data.ip;
  targets = `${legacy},${data}`;
  assertInTestNetwork([legacy, data]);
  await fs.writeFile(
    path.join(work, 'exceptions.json'),
    JSON.stringify({
      exceptions: [
        {
          fingerprint: findingFingerprint({ rule_id: 'database-exposed', host: data, port: 6379, protocol: 'tcp' }),
          reason: 'Isolated lab VLAN',
          approver: 'IT lead',
          approved_at: '2026-01-10T09:00:00Z',
          expiry: null,
        },
      ],
    }),
  );
  scans.push(await scanOnce());
  // Fix one weakness, plant another: the next scan must tell them apart.
  await lab.stopService('legacy', 'vsftpd');
  await lab.startService('legacy', { ...bannerServer(legacy, 2222, 'SSH-2.0-OpenSSH_7.4'), name: 'banner-old-ssh' });
  scans.push(await scanOnce());
}, 8 * 60_000);

afterAll(async () => {
  lab?.stop();
  await receiver?.close();
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const fp = (rule_id: string, host: string, port: number) =>
  findingFingerprint({ rule_id, host, port, protocol: 'tcp' });
const keyOf = (f: { rule_id?: unknown; host?: unknown; port?: unknown }) => `${f.rule_id} ${f.host}:${f.port}`;

describe('two scans of the test network, uploaded to a real portal', () => {
  it('runs licensed for business: no gate closed, only the narrow port list warned about', () => {
    // A TCP-only port list skips the profile's UDP scan; any license or gate warning would show here too.
    const udp = 'nmap: WARNING: UDP scan was requested, but no udp ports were specified.  Skipping this scan type.';
    expect(warnings).toStrictEqual([udp, udp]);
  });

  it('writes both sessions into the same sessions root, the second chained to the first', async () => {
    const [first, second] = scans as [Scanned, Scanned];
    const ids = scans.map((s) => s.doc.metadata?.session_id);
    expect(scans.map((s) => s.path)).toStrictEqual(ids.map((id) => path.join(work, 'sessions', String(id))));
    expect(scans.map((s) => s.doc.metadata?.target)).toStrictEqual([targets, targets]);
    expect(String(ids[1]) > String(ids[0])).toBe(true);
    const logs = await Promise.all(scans.map((s) => fs.readFile(path.join(s.path, 'pipeline.log'), 'utf8')));
    expect(logs[0]).toMatch(/ stage prior none, 0 earlier\n/);
    expect(logs[1]).toContain(` stage prior ${first.doc.metadata?.session_id}, 1 earlier\n`);
    expect(second.doc.findings!.length).toBeGreaterThan(0);
  });

  it('the first scan finds the planted weaknesses, all new', () => {
    const doc = scans[0]!.doc;
    const found = new Set(doc.findings!.map(keyOf));
    for (const k of [
      `ftp-anonymous ${legacy}:21`,
      `ftp-cleartext ${legacy}:21`,
      `database-exposed ${data}:6379`,
      `redis-unauthenticated ${data}:6379`,
    ])
      expect(found).toContain(k);
    expect(doc.findings!.some((f) => f.port === 2222)).toBe(false);
    expect(doc.remediation!.map((r) => r.status)).toStrictEqual(doc.findings!.map(() => 'new'));
    expect(doc.remediation_resolved).toStrictEqual([]);
  });

  it('the stopped FTP server moves to remediation_resolved; the planted old OpenSSH is new', () => {
    const [first, second] = scans as [Scanned, Scanned];
    const ftp = [fp('ftp-anonymous', legacy, 21), fp('ftp-cleartext', legacy, 21)];
    expect(second.doc.findings!.some((f) => f.port === 21)).toBe(false);
    const resolved = second.doc.remediation_resolved!;
    expect(resolved.map((r) => r.fingerprint).sort()).toStrictEqual([...ftp].sort());
    for (const r of resolved) {
      expect(r.status).toBe('resolved');
      expect(r.host).toBe(legacy);
      expect(r.prior_status).toBe('new');
      expect(r.first_seen).toBe(first.doc.metadata?.session_id);
    }
    const byFp = new Map(second.doc.remediation!.map((r) => [r.fingerprint, r]));
    const banner = second.doc.findings!.filter((f) => f.host === legacy && f.port === 2222);
    expect(banner.length).toBeGreaterThan(0);
    expect(banner.every((f) => f.service === 'ssh' && String(f.rule_id).startsWith('outdated-software:openssh-'))).toBe(
      true,
    );
    for (const f of second.doc.findings!) {
      const r = byFp.get(f.fingerprint);
      expect(r?.status, keyOf(f)).toBe(f.port === 2222 ? 'new' : 'persistent');
      expect(r?.first_seen, keyOf(f)).toBe(
        f.port === 2222 ? second.doc.metadata?.session_id : first.doc.metadata?.session_id,
      );
    }
  });

  it('the exception is honoured: the operational score leaves out the accepted finding', () => {
    const excepted = fp('database-exposed', data, 6379);
    for (const { doc } of scans) {
      const item = doc.remediation!.find((r) => r.fingerprint === excepted);
      expect(item?.exception_status).toBe('accepted');
      const counts = severityCounts(doc.findings!);
      const operational = { ...counts, medium: counts.medium - 1 };
      const s = doc.summary!;
      expect(s.risk_score).toBe(riskScore(counts));
      expect(s.risk_grade).toBe(riskGrade(riskScore(counts)));
      expect(s.risk_score_operational).toBe(riskScore(operational));
      expect(s.risk_grade_operational).toBe(riskGrade(riskScore(operational)));
      expect(s.risk_score_operational).toBeLessThan(s.risk_score!);
      expect(s.exception_impact).toStrictEqual({
        excepted_count: 1,
        score_delta: riskScore(counts) - riskScore(operational),
        excepted_findings: { critical: 0, high: 0, medium: 1, low: 0, info: 0 },
      });
    }
  });

  it('the local receiver got new_critical and scan_complete for each scan, with its session and target', () => {
    for (const { doc, alerts } of scans) {
      const id = doc.metadata?.session_id;
      const prior = scans[0]!.doc === doc ? [] : scans[0]!.doc.findings!.map((f) => f.fingerprint);
      const fresh = doc.findings!.filter(
        (f) => (f.severity === 'critical' || f.severity === 'high') && !prior.includes(f.fingerprint),
      );
      expect(fresh.length).toBeGreaterThan(0);
      expect(alerts.map((a) => a['alert_type'])).toStrictEqual(['new_critical', 'scan_complete']);
      for (const a of alerts) {
        expect(a).toMatchObject({
          event: 'svc_alert',
          session_id: id,
          target: targets,
          risk_score: doc.summary?.risk_score,
          total_findings: doc.findings!.length,
          new_critical_high: fresh.length,
        });
      }
      expect(doc.alerts_summary?.alerts_triggered?.map((a) => [a.type, a.channels_notified])).toStrictEqual([
        ['new_critical', ['webhook']],
        ['scan_complete', ['webhook']],
      ]);
    }
  });

  it('the portal serves both sessions with their triage as it stands today', async () => {
    const token = await fixture.portal.adminToken();
    const [first, second] = scans as [Scanned, Scanned];
    // Today's status of each finding of the target: what the latest scan made of it.
    const today = new Map<string, string>([
      ...second.doc.remediation!.map((r) => [r.fingerprint!, r.status!] as const),
      ...second.doc.remediation_resolved!.map((r) => [r.fingerprint!, 'resolved'] as const),
    ]);
    const byStatus = (entries: { fingerprint?: string }[]) => {
      const out = { new: 0, persistent: 0, in_progress: 0, resolved: 0, deferred: 0 };
      for (const e of entries) out[today.get(e.fingerprint!) as keyof typeof out]++;
      return out;
    };
    for (const { doc, upload } of scans) {
      const id = doc.metadata?.session_id;
      expect(upload.session_id).toBe(id);
      const res = await http(fixture.portal.url, 'GET', `/api/sessions?session=${id}`, { headers: withToken(token) });
      expect(res.status).toBe(200);
      const m = res.body.session;
      expect(m.target).toBe(targets);
      expect(m.client_id).toBe(fixture.clientId);
      expect(m.total_findings).toBe(doc.findings!.length);
      // Statuses never move a score; the exception holds in both (docs/findings-of-record.md#one-set-of-numbers).
      expect(m.risk_score).toBe(doc.summary?.risk_score);
      expect(m.exception_summary).toStrictEqual({
        ...doc.metadata?.exception_summary,
        risk_score_operational: doc.metadata?.risk_score_operational,
        risk_grade_operational: doc.metadata?.risk_grade_operational,
      });
      // The status counts are those of the findings of record today: the latest session's are its
      // file's; the first session's findings are now persistent, or resolved (the FTP server).
      const entries = [...doc.remediation!, ...doc.remediation_resolved!];
      const counts = byStatus(entries);
      expect(m.remediation_summary).toStrictEqual({
        ...doc.metadata?.remediation_summary,
        by_status: counts,
        resolved_count: counts.resolved,
      });
      if (doc === second.doc) expect(m.remediation_summary).toStrictEqual(doc.metadata?.remediation_summary);
    }
    expect(byStatus(first.doc.remediation!)).toMatchObject({ new: 0, resolved: 2 });
  });

  it("the second upload's share URL serves its report", async () => {
    const { path: dir, upload } = scans[1]!;
    const token = new URL(upload.share_url as string).searchParams.get('token');
    const name = (await fs.readdir(dir)).find((n) => n.startsWith('report_'));
    const report = await fs.readFile(path.join(dir, name ?? 'missing'), 'utf8');
    await expectSharedReport(fixture.portal.url, token as string, report);
  });
});
