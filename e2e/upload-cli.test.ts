import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense, licenseAction } from '@svc/test-support/factories';
import { http, withToken } from '@svc/test-support/http';
import type { TestPortal } from '@svc/test-support/portal';
import { sessionDoc, type Doc } from '@svc/test-support/upload';
import { runCli, SVC, tempHome } from '@svc/test-support/cli';
import { closedPortUrl } from '@svc/test-support/license-fake-portal';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/** `svc upload` as a real process against the real portal (docs/api.md#sessions). */

let portal: TestPortal;
let key: string;
let clientId: string;
let work: string;

const fixture = usePortalWithKey({ tier: 'business' });

beforeAll(async () => {
  ({ portal, key, clientId } = fixture);
  work = await tempHome();
});
afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

const env = () => ({ CONSULTATION_API_URL: `${portal.url}/api/upload`, SVC_API_KEY: key });

interface SessionDir {
  dir: string;
  doc: Doc;
  id: string;
  log: string;
  report: string;
  exec: string;
}

/** A session directory as the scanner leaves it. */
async function sessionDir(opts: { log?: boolean; report?: boolean; exec?: boolean } = {}): Promise<SessionDir> {
  const doc = sessionDoc('session-minimal.json');
  const id = doc['metadata']['session_id'] as string;
  const dir = path.join(work, id);
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, 'session_results.json'), JSON.stringify(doc, null, 2));
  const log = `[${id}] pipeline started\n[${id}] nmap done\n`;
  const report = `<!doctype html><html><body><h1>Report ${id}</h1></body></html>\n`;
  const exec = `<!doctype html><html><body><h1>Executive summary ${id}</h1></body></html>\n`;
  if (opts.log !== false) await fs.writeFile(path.join(dir, 'pipeline.log'), log);
  if (opts.report !== false) await fs.writeFile(path.join(dir, `report_${id}.html`), report);
  if (opts.exec !== false) await fs.writeFile(path.join(dir, `exec_summary_${id}.html`), exec);
  return { dir, doc, id, log, report, exec };
}

/** A stored file of a session, as the admin downloads it. */
async function stored(id: string, file: string) {
  return http(portal.url, 'GET', `/api/download?session=${encodeURIComponent(id)}&file=${file}`, {
    headers: withToken(await portal.adminToken()),
  });
}

describe('svc upload: uploaded', () => {
  it('a session directory: all four parts stored; --json prints the portal answer', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir, '--json', '--no-benchmark'], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body).toEqual({
      success: true,
      session_id: s.id,
      share_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      share_url: `http://portal.test/share/?token=${body.share_token}`,
      message: expect.any(String),
      // What the upload did to the target's findings of record (docs/findings-of-record.md#merge):
      // the file's first session of its target, so its three findings are new.
      findings: { new: 3, persistent: 0, reopened: 0, resolved: 0, not_checked: 0 },
    });

    const json = await stored(s.id, 'session_results.json');
    expect(json.status).toBe(200);
    expect(json.body.metadata.session_id).toBe(s.id);
    expect(json.body.findings).toEqual(s.doc['findings']);
    const log = await stored(s.id, 'pipeline.log');
    expect([log.status, log.text]).toEqual([200, s.log]);
    const report = await stored(s.id, 'report.html');
    expect([report.status, report.text]).toEqual([200, s.report]);
    const exec = await stored(s.id, 'exec_summary.html');
    expect([exec.status, exec.text]).toEqual([200, s.exec]);

    // Tagged with the key's client.
    const listed = await http(portal.url, 'GET', `/api/sessions?client_id=${encodeURIComponent(clientId)}`, {
      headers: withToken(await portal.adminToken()),
    });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain(s.id);
  });

  it('text output: the session id and share URL; what the portal did on stderr', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir, '--no-benchmark'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^Uploaded session ${s.id}\\nShare URL: http://portal\\.test/share/\\?token=[0-9a-f]{64}\\n$`),
    );
    // The same target's three findings, seen again (docs/cli/upload.md: the line, then the portal's message).
    expect(r.stderr).toMatch(/^Findings of record: 3 still open\nPortal: Session uploaded[^\n]*\n$/);
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it('a re-upload of a session whose share link was revoked says the link stays revoked', async () => {
    const s = await sessionDir();
    expect((await runCli(SVC, ['upload', s.dir, '--no-benchmark'], { env: env() })).code).toBe(0);
    const revoked = await http(
      portal.url,
      'DELETE',
      `/api/sessions/share?session=${s.id}&client_id=${encodeURIComponent(clientId)}`,
      { headers: withToken(await portal.adminToken()) },
    );
    expect(revoked.status).toBe(200);
    const r = await runCli(SVC, ['upload', s.dir, '--no-benchmark'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    // A re-upload is merged like any upload; the portal's message says the link stays revoked.
    expect(r.stderr).toMatch(
      /^Findings of record: 3 still open\nPortal: Session replaced; its share link stays revoked until an admin or member makes a new one[^\n]*\n$/,
    );
    expect(r.stdout).toBe(
      `Uploaded session ${s.id}\nShare link revoked (an admin or member can make a new one in the portal)\n`,
    );
  });

  it("a session directory at business tier: the portal's benchmark goes into the session, both reports are refreshed", async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /^Benchmark written into the session; refreshed on the portal: report\.html, exec_summary\.html\nFindings of record: 3 still open\nPortal: Session uploaded[^\n]*\n$/,
    );
    const doc = JSON.parse(await fs.readFile(path.join(s.dir, 'session_results.json'), 'utf8'));
    const answer = await http(portal.url, 'GET', `/api/benchmark?session=${s.id}`, { headers: { 'x-api-key': key } });
    expect(answer.status).toBe(200);
    expect(doc.benchmark.sample_size).toBe(answer.body.sample_size);
    expect(doc.benchmark.metrics.risk_score.label).toBe(answer.body.metrics.risk_score.label);
    expect(doc.findings).toEqual(s.doc['findings']);
    // The local files are the real report rendered again with its benchmark section, and the portal has them.
    const local = await fs.readFile(path.join(s.dir, `report_${s.id}.html`), 'utf8');
    expect(local).not.toBe(s.report);
    expect(local).toContain(`Compared with ${answer.body.sample_size} sessions`);
    expect((await stored(s.id, 'report.html')).text).toBe(local);
    const exec = await fs.readFile(path.join(s.dir, `exec_summary_${s.id}.html`), 'utf8');
    expect((await stored(s.id, 'exec_summary.html')).text).toBe(exec);
    // The stored session file is the one uploaded: refresh replaces display files only.
    expect((await stored(s.id, 'session_results.json')).body.benchmark).toBeUndefined();
  });

  it('below business the benchmark step warns and leaves the directory and the portal as uploaded', async () => {
    const pro = await createLicense(portal, { tier: 'professional' });
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { ...env(), SVC_API_KEY: pro.key } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Skipping benchmark: it needs the business tier (this host: professional)');
    expect(JSON.parse(await fs.readFile(path.join(s.dir, 'session_results.json'), 'utf8'))).toEqual(s.doc);
    expect(await fs.readFile(path.join(s.dir, `report_${s.id}.html`), 'utf8')).toBe(s.report);
    expect((await stored(s.id, 'report.html')).text).toBe(s.report);
  });

  it('session_results.json with explicit -l, -r and -e (any file names)', async () => {
    const s = await sessionDir({ log: false, report: false, exec: false });
    const log = path.join(work, `${s.id}-scan.log`);
    const report = path.join(work, `${s.id}-custom.html`);
    const exec = path.join(work, `${s.id}-summary.html`);
    await fs.writeFile(log, 'explicit log\n');
    await fs.writeFile(report, '<html>explicit report</html>');
    await fs.writeFile(exec, '<html>explicit summary</html>');
    const r = await runCli(
      SVC,
      ['upload', path.join(s.dir, 'session_results.json'), '-l', log, '-r', report, '-e', exec],
      { env: env() },
    );
    expect(r.code).toBe(0);
    expect((await stored(s.id, 'pipeline.log')).text).toBe('explicit log\n');
    expect((await stored(s.id, 'report.html')).text).toBe('<html>explicit report</html>');
    expect((await stored(s.id, 'exec_summary.html')).text).toBe('<html>explicit summary</html>');
  });

  it('a directory plus -r: the explicit report replaces the directory one, the rest comes from the directory', async () => {
    const s = await sessionDir();
    const report = path.join(work, `${s.id}-override.html`);
    await fs.writeFile(report, '<html>override</html>');
    const r = await runCli(SVC, ['upload', s.dir, '--report', report, '--no-benchmark'], { env: env() });
    expect(r.code).toBe(0);
    expect((await stored(s.id, 'report.html')).text).toBe('<html>override</html>');
    expect((await stored(s.id, 'pipeline.log')).text).toBe(s.log);
    expect((await stored(s.id, 'exec_summary.html')).text).toBe(s.exec);
  });

  it('session_results.json alone: only the session file is stored', async () => {
    const s = await sessionDir({ log: false, report: false, exec: false });
    const r = await runCli(SVC, ['upload', path.join(s.dir, 'session_results.json')], { env: env() });
    expect(r.code).toBe(0);
    expect((await stored(s.id, 'session_results.json')).status).toBe(200);
    expect((await stored(s.id, 'pipeline.log')).status).toBe(404);
    expect((await stored(s.id, 'report.html')).status).toBe(404);
  });

  it('the key may come from -k and the URL from -u (the bare origin works too)', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir, '-u', portal.url, '-k', key, '--json'], { env: {} });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).session_id).toBe(s.id);
  });
});

describe('svc upload: refused or failed (exit 1)', () => {
  it("a revoked key: exit 1 with the portal's message", async () => {
    const lic = await createLicense(portal, { tier: 'professional' });
    await licenseAction(portal, lic.record.id, 'revoke');
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { ...env(), SVC_API_KEY: lic.key } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: Upload refused: HTTP 403 License key has been revoked\n');
    expect((await stored(s.id, 'session_results.json')).status).toBe(404);
  });

  it("an unknown key: exit 1 with the portal's message", async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { ...env(), SVC_API_KEY: `svc_pro_${'0'.repeat(64)}` } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: Upload refused: HTTP 403 Invalid API key\n');
  });

  it('a session file that is not JSON: refused on the host before any request, exit 2', async () => {
    const bad = path.join(work, 'not-json.json');
    await fs.writeFile(bad, '{ not json');
    const r = await runCli(SVC, ['upload', bad], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^error: \S+not-json\.json is neither a session file nor a file svc imports: it is not JSON \(.+\)\. Expected a session directory, .*; nothing was sent\n$/,
    );
  });

  it('the portal cannot be reached: exit 1', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { ...env(), CONSULTATION_API_URL: await closedPortUrl() } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n$/);
  });
});

describe('svc upload: usage errors (exit 2, nothing sent)', () => {
  it('a missing session file or directory', async () => {
    const missing = path.join(work, 'no-such-session');
    const r = await runCli(SVC, ['upload', missing], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: No such file or directory: ${missing}\n`);
  });

  it('a missing -l/-r/-e file', async () => {
    const s = await sessionDir();
    const missing = path.join(work, 'no-such.log');
    const r = await runCli(SVC, ['upload', s.dir, '-l', missing], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: No such file: ${missing}\n`);
    expect((await stored(s.id, 'session_results.json')).status).toBe(404);
  });

  it('a -l/-r/-e path that is a directory, not a file', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir, '-e', work], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: Not a file: ${work}\n`);
    expect((await stored(s.id, 'session_results.json')).status).toBe(404);
  });

  it('a directory without session_results.json', async () => {
    const empty = await fs.mkdtemp(path.join(work, 'empty-'));
    const r = await runCli(SVC, ['upload', empty], { env: env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: ${empty} has no session_results.json\n`);
  });

  it('no portal URL', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { SVC_API_KEY: key } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: No portal URL: pass -u <url> or set CONSULTATION_API_URL (in the environment or a -c config file)\n',
    );
  });

  it('no key', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], { env: { CONSULTATION_API_URL: `${portal.url}/api/upload` } });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: No API key: pass -k <key> or set SVC_API_KEY (or SVC_LICENSE_KEY, CONSULTATION_API_KEY, ~/.svc/license.key)\n',
    );
    expect((await stored(s.id, 'session_results.json')).status).toBe(404);
  });

  it('a URL that is not an upload URL', async () => {
    const s = await sessionDir();
    const r = await runCli(SVC, ['upload', s.dir], {
      env: { ...env(), CONSULTATION_API_URL: `${portal.url}/api/uploads` },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: CONSULTATION_API_URL must end with /upload\n');
  });
});
