import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import { startTestPortal, type TestPortal } from '@svc/test-support/portal';
import {
  defaultBranding,
  type GenerateOptions,
  orcSettingsFrom,
  parseMix,
  planCollection,
  produceSession,
  stagesInputOf,
  SYNTHETIC_ALERTS,
} from '@svc/client/engine';
import { runCli, SVC } from '@svc/test-support/cli';

/**
 * A 5-session chain of one target through every stage (ORC 9.64 on,
 * exceptions, remediation decisions) into session directories, each uploaded with `svc upload`
 * to a real portal; the portal's derived metadata and benchmark must say what the files say.
 */

let portal: TestPortal;
let key: string;
let root: string;
const produced: { id: string; dir: string }[] = [];

const options: GenerateOptions = {
  target: '10.77.0.0/24',
  sessions: 5,
  findings: 40,
  mix: parseMix('critical:10,high:20,medium:40,low:20,info:10'),
  intervalMs: 86_400_000,
  trend: 'improving',
  exceptions: 3,
  seed: 13,
  seeded: true,
  clientId: 'chain-co',
  now: new Date('2025-03-01T00:00:00Z'),
};

beforeAll(async () => {
  portal = await startTestPortal();
  key = (await createLicense(portal, { tier: 'business', client_id: 'chain-co' })).key;
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-chain-'));
  const orc = orcSettingsFrom({ ORC_964_ENABLED: 'true', ORC_ATTEST_TRAINING: 'true' });
  let prior: SessionFile | null = null;
  for (const session of planCollection(options).sessions) {
    const input = stagesInputOf(options, session, prior);
    const out = await produceSession({
      ...input,
      settings: { ...input.settings, orc },
      root,
      alerts: SYNTHETIC_ALERTS,
      branding: defaultBranding(),
    });
    produced.push({ id: out.id, dir: out.path });
    prior = out.doc;
  }
});
afterAll(async () => {
  await portal?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const readDoc = async (dir: string) =>
  JSON.parse(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8')) as SessionFile;

describe('a 5-session chain through the pipeline, uploaded to a real portal', () => {
  it('the session directories are whole and chained', async () => {
    expect(produced.map((p) => p.id)).toStrictEqual([...produced.map((p) => p.id)].sort());
    expect(new Set(produced.map((p) => p.id)).size).toBe(5);
    for (const p of produced) {
      const names = (await fs.readdir(p.dir)).sort();
      expect(names).toStrictEqual([
        'exec_summary_10_77_0_0_24.html',
        'pipeline.log',
        'report_10_77_0_0_24.html',
        'session_results.json',
      ]);
    }
    const docs = await Promise.all(produced.map((p) => readDoc(p.dir)));
    // The first session's findings are all new; later ones carry persistent items from the one before.
    expect(docs[0]!.remediation!.every((r) => r.status === 'new')).toBe(true);
    expect(
      docs[4]!.remediation!.some((r) => r.first_seen !== undefined && r.first_seen < docs[4]!.metadata!.session_id!),
    ).toBe(true);
    expect(docs.every((d) => d.orc_964 !== undefined)).toBe(true);
  });

  it("the portal's metadata, summaries and benchmark match the files", async () => {
    const token = await portal.adminToken();
    for (const p of produced) {
      const r = await runCli(SVC, ['upload', p.dir, '--json'], {
        env: { CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).session_id).toBe(p.id);

      const doc = await readDoc(p.dir);
      const detail = await http(portal.url, 'GET', `/api/sessions?session=${p.id}`, { headers: withToken(token) });
      expect(detail.status).toBe(200);
      const m = detail.body.session;
      expect(m.target).toBe(options.target);
      expect([m.client_id, doc.metadata!.client_id]).toStrictEqual(['chain-co', 'chain-co']);
      expect(m.risk_score).toBe(doc.summary!.risk_score);
      expect(m.risk_grade).toBe(doc.summary!.risk_grade);
      expect(m.total_findings).toBe(doc.findings!.length);
      expect(m.total_hosts).toBe(doc.summary!.total_hosts);
      expect(m.severity_summary).toStrictEqual(doc.summary!.severity_counts);
      expect(m.remediation_summary).toStrictEqual(doc.metadata!.remediation_summary);
      // An exception's state is read for the day the portal answers (docs/findings-of-record.md#one-set-of-numbers):
      // the chain's exceptions, accepted when its scans ran (March 2025), have all expired by today,
      // so none holds and the operational score is the actual one.
      const today = new Date().toISOString().slice(0, 10);
      const excepted = doc.remediation!.filter((r) => r.exception_status === 'accepted');
      expect(excepted.length).toBe(doc.metadata!.exception_summary!.total_exceptions);
      expect(excepted.every((r) => typeof r.exception_expiry === 'string' && r.exception_expiry < today)).toBe(true);
      expect(m.exception_summary).toStrictEqual({
        total_exceptions: excepted.length,
        by_status: { accepted: 0, expired: excepted.length },
        score_delta: 0,
        risk_score_operational: doc.summary!.risk_score,
        risk_grade_operational: doc.summary!.risk_grade,
      });
      expect(m.compliance_summary).toStrictEqual(doc.metadata!.compliance_summary);
      const orc = doc.orc_964 as { attestations: { state: unknown }[]; coverage: Record<string, unknown> };
      expect(m.orc964_summary).toStrictEqual({
        enabled: true,
        technical_covered: orc.coverage['technical_divisions_covered'],
        technical_total: 5,
        attest_pending: orc.attestations.filter((a) => a.state !== 'true' && a.state !== true).length,
      });
      expect(m.has_exec_summary).toBe(true);

      // svc upload wrote the portal's benchmark into the file and refreshed both reports.
      const bench = await http(portal.url, 'GET', `/api/benchmark?session=${p.id}`, { headers: { 'x-api-key': key } });
      expect(bench.status).toBe(200);
      expect(doc.benchmark?.sample_size).toBe(bench.body.sample_size);
      expect(doc.benchmark?.metrics?.risk_score?.percentile).toBe(bench.body.metrics.risk_score.percentile);
      const report = await http(portal.url, 'GET', `/api/download?session=${p.id}&file=report.html`, {
        headers: withToken(token),
      });
      expect(report.text).toBe(await fs.readFile(path.join(p.dir, 'report_10_77_0_0_24.html'), 'utf8'));
      expect(report.text).toContain('Compared with');
    }
  });
});
