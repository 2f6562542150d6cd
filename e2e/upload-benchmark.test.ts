import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SessionFile } from '@svc/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLicense } from '@svc/test-support/factories';
import { sessionDoc } from '@svc/test-support/upload';
import { createPortalClient, type PortalClient } from '@svc/client/kit';
import { attachBenchmark } from '@svc/client/engine';
import { usePortalWithKey } from './helpers/portal-with-key.ts';

/** After an upload: the benchmark block goes into the session file and the display files are refreshed. */
const fixture = usePortalWithKey({ tier: 'business' });
let work: string;
let n = 0;

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'upload-benchmark-'));
});
afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

/** The fixture's business key, or a new key of another tier on the same portal. */
async function clientFor(tier: 'business' | 'professional'): Promise<PortalClient> {
  const key = tier === 'business' ? fixture.key : (await createLicense(fixture.portal, { tier })).key;
  return createPortalClient({ target: { uploadUrl: fixture.uploadUrl, apiKey: key, jwt: null, timeoutS: 30 } });
}

/** A session directory as the scanner writes it, uploaded; returns its path and the portal's id. */
async function uploadedDir(client: PortalClient): Promise<{ dir: string; id: string }> {
  const doc = sessionDoc('session-minimal.json');
  const id = `20250101_0000${String(++n).padStart(2, '0')}`;
  doc['metadata']['session_id'] = id;
  const dir = path.join(work, id);
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, 'session_results.json'), JSON.stringify(doc));
  await fs.writeFile(path.join(dir, 'report_acme.html'), '<html><body>first report</body></html>');
  await fs.writeFile(path.join(dir, 'exec_summary_acme.html'), '<html><body>first summary</body></html>');
  const up = await client.upload({
    session: path.join(dir, 'session_results.json'),
    report: path.join(dir, 'report_acme.html'),
    exec: path.join(dir, 'exec_summary_acme.html'),
  });
  return { dir, id: up.session_id };
}

const render = (doc: SessionFile) => ({
  report: `<html><body>report sample=${doc.benchmark?.sample_size}</body></html>`,
  execSummary: `<html><body>summary at ${doc.benchmark?.fetched_at}</body></html>`,
});

describe('attachBenchmark', () => {
  it('writes the portal benchmark into the session file, re-renders and refreshes both files', async () => {
    const client = await clientFor('business');
    const { dir, id } = await uploadedDir(client);
    const warnings: string[] = [];
    const result = await attachBenchmark({
      client,
      sessionDir: dir,
      sessionId: id,
      tier: 'business',
      render,
      warn: (m) => warnings.push(m),
    });
    expect(result).toEqual({ attached: true, refreshed: ['report.html', 'exec_summary.html'] });
    expect(warnings).toEqual([]);

    const answer = await client.benchmark(id);
    const doc = JSON.parse(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8')) as SessionFile;
    expect(doc.benchmark?.sample_size).toBe(answer.sample_size);
    expect(doc.benchmark?.metrics?.risk_score?.percentile).toBe(answer.metrics.risk_score.percentile);
    expect(doc.benchmark?.metrics?.risk_score?.label).toBe(answer.metrics.risk_score.label);
    expect(doc.metadata?.session_id).toBe(id);

    const expected = render(doc);
    expect(await fs.readFile(path.join(dir, 'report_acme.html'), 'utf8')).toBe(expected.report);
    expect(await fs.readFile(path.join(dir, 'exec_summary_acme.html'), 'utf8')).toBe(expected.execSummary);
    expect((await client.download(id, 'report.html')).toString('utf8')).toBe(expected.report);
    expect((await client.download(id, 'exec_summary.html')).toString('utf8')).toBe(expected.execSummary);
    // Nothing but the three files: no temp file left behind.
    expect((await fs.readdir(dir)).sort()).toEqual([
      'exec_summary_acme.html',
      'report_acme.html',
      'session_results.json',
    ]);
  });

  it('below business the gate is closed: a warning, no request, nothing changed', async () => {
    const client = await clientFor('business');
    const { dir, id } = await uploadedDir(client);
    const before = await fs.readFile(path.join(dir, 'session_results.json'), 'utf8');
    const warnings: string[] = [];
    const calls: string[] = [];
    const spy: Pick<PortalClient, 'benchmark' | 'refresh'> = {
      benchmark: (s) => {
        calls.push(`benchmark ${s}`);
        return client.benchmark(s);
      },
      refresh: (s, f, i) => {
        calls.push(`refresh ${f}`);
        return client.refresh(s, f, i);
      },
    };
    const result = await attachBenchmark({
      client: spy,
      sessionDir: dir,
      sessionId: id,
      tier: 'professional',
      render,
      warn: (m) => warnings.push(m),
    });
    expect(result).toEqual({ attached: false, refreshed: [] });
    expect(calls).toEqual([]);
    expect(warnings).toEqual(['Skipping benchmark: it needs the business tier (this host: professional)']);
    expect(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8')).toBe(before);
  });

  it("a refused benchmark call warns with the portal's answer and leaves the directory as it was", async () => {
    const client = await clientFor('professional');
    const business = await clientFor('business');
    const { dir, id } = await uploadedDir(business);
    const before = await fs.readFile(path.join(dir, 'session_results.json'), 'utf8');
    const warnings: string[] = [];
    // A professional key is refused by the portal's benchmark permission, whatever the client believes.
    const result = await attachBenchmark({
      client,
      sessionDir: dir,
      sessionId: id,
      tier: 'business',
      render,
      warn: (m) => warnings.push(m),
    });
    expect(result).toEqual({ attached: false, refreshed: [] });
    expect(warnings).toEqual(['Benchmark not fetched: HTTP 403 Insufficient permissions for benchmark']);
    expect(await fs.readFile(path.join(dir, 'session_results.json'), 'utf8')).toBe(before);
    expect(await fs.readFile(path.join(dir, 'report_acme.html'), 'utf8')).toBe(
      '<html><body>first report</body></html>',
    );
  });
});
