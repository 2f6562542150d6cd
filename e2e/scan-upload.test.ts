import fs from 'node:fs/promises';
import type net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as request, withToken } from '@svc/test-support/http';
import { type CliResult, runCli, SVC, tempHome } from '@svc/test-support/cli';
import { expectSharedReport } from './helpers/shared-report.ts';
import { usePortalWithKey } from './helpers/portal-with-key.ts';
import { listenOldSshBanner } from './helpers/ssh-banner.ts';

/**
 * `svc scan --upload` as a real process: nmap scans one port the test opens on
 * 127.0.0.1 (announcing an old OpenSSH, so there is something to find), the session goes to a real
 * portal on 127.0.0.1, and the portal serves it with its report. Loopback is the only target.
 */

interface ScanJson {
  path: string;
  session_id: string;
  summary: { total_findings: number; total_hosts: number; risk_score: number };
  upload: { session_id: string; share_url: string };
}

const fixture = usePortalWithKey({ tier: 'business' });
let server: net.Server;
let port: number;
let work: string;
let r: CliResult;
let out: ScanJson;

beforeAll(async () => {
  ({ server, port } = await listenOldSshBanner());
  work = await tempHome();
  r = await runCli(
    SVC,
    ['scan', '--targets', '127.0.0.1', '--ports', `T:${port}`, '--sessions-dir', path.join(work, 'sessions')].concat([
      '--upload',
      '--json',
    ]),
    {
      env: {
        CONSULTATION_API_URL: fixture.uploadUrl,
        SVC_API_KEY: fixture.key,
        CLIENT_NAME: 'Acme Water District',
        CLIENT_ID: 'not-the-key-client',
      },
      timeoutMs: 3 * 60_000,
    },
  );
  out = JSON.parse(r.stdout || '{}') as ScanJson;
}, 4 * 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  if (work) await fs.rm(work, { recursive: true, force: true });
});

const readDoc = async () =>
  JSON.parse(await fs.readFile(path.join(out.path, 'session_results.json'), 'utf8')) as {
    metadata: { session_id: string; target: string; client?: string; client_id?: string };
    summary: { risk_score: number; risk_grade: string; total_findings: number; total_hosts: number };
    findings: { host: string; port: number; service: string; rule_id: string }[];
  };

describe('svc scan --upload to a portal on 127.0.0.1', () => {
  it("names the client: CLIENT_NAME as metadata.client; the license's client_id wins over CLIENT_ID", async () => {
    const doc = await readDoc();
    expect(doc.metadata.client).toBe('Acme Water District');
    expect(doc.metadata.client_id).toBe(fixture.clientId);
  });

  it('exits 0 and prints the session and the upload as JSON', () => {
    expect(r.code, r.stderr).toBe(0);
    expect(out.path).toBe(path.join(work, 'sessions', out.session_id));
    expect(out.session_id).toMatch(/^\d{8}_\d{6}$/);
    expect(out.upload.session_id).toBe(out.session_id);
    expect(out.upload.share_url).toMatch(/^http:\/\/portal\.test\/share\/\?token=[0-9a-f]{64}$/);
    expect(out.summary.total_hosts).toBe(1);
  });

  it('found the outdated SSH server on the port the test opened, and nothing else', async () => {
    const doc = await readDoc();
    expect(doc.metadata.target).toBe('127.0.0.1');
    expect(doc.findings.some((f) => f.rule_id.startsWith('outdated-software:openssh-'))).toBe(true);
    expect(new Set(doc.findings.map((f) => `${f.host} ${f.port} ${f.service}`))).toStrictEqual(
      new Set([`127.0.0.1 ${port} ssh`]),
    );
    expect(out.summary.total_findings).toBe(doc.findings.length);
  });

  it('the portal holds the session with the numbers of the file', async () => {
    const doc = await readDoc();
    const token = await fixture.portal.adminToken();
    const res = await request(fixture.portal.url, 'GET', `/api/sessions?session=${out.session_id}`, {
      headers: withToken(token),
    });
    expect(res.status).toBe(200);
    const m = res.body.session;
    expect(m.target).toBe('127.0.0.1');
    expect(m.client_id).toBe(fixture.clientId);
    expect(m.total_findings).toBe(doc.findings.length);
    expect(m.total_hosts).toBe(1);
    expect(m.risk_score).toBe(doc.summary.risk_score);
    expect(m.risk_grade).toBe(doc.summary.risk_grade);
  });

  it('the share URL of the upload serves the report', async () => {
    const shareToken = new URL(out.upload.share_url).searchParams.get('token');
    const reportName = (await fs.readdir(out.path)).find((n) => n.startsWith('report_'));
    const report = await fs.readFile(path.join(out.path, reportName ?? 'missing'), 'utf8');
    await expectSharedReport(fixture.portal.url, shareToken as string, report);
  });
});
