/**
 * Benchmark: findings a page at a time (GET /api/sessions/{id}/findings) on a session of
 * 100,000 findings, and the console's session view of a 10,000-finding session in Chromium,
 * throttled and not.
 *
 * One run, one real portal (startPortal in this process, its own embedded PostgreSQL in a temp
 * dir, serving the built console), requests one at a time (latency, not throughput):
 *
 * 1. API. A session of --findings (100,000) findings is indexed (the index is built directly:
 *    no upload can carry a file that large, 25 MB is the limit). Timed over HTTP with the
 *    legacy key: the first page of every sort both ways, 20 pages deep by cursor, and
 *    filtered pages (severity, status, exception, host, CVE, text). Baselines in the same run:
 *    GET /api/license (the HTTP and key floor) and what the console did before, GET
 *    /api/download of a 10,000-finding session file (≈ 12 MB) read and parsed whole.
 * 2. Browser (skipped with --no-browser): the session view of the 10,000-finding session,
 *    from navigation to the first findings row, on localhost and with
 *    Network.emulateNetworkConditions at 20 Mbit/s and 40 ms; the baseline is downloading
 *    the session file in the same page under the same conditions.
 *
 *   node bench/findings.ts [--findings=100000 --requests=30 --views=5 --no-browser]
 *
 * Results: bench/results/findings-<timestamp>.json. Needs `npm run build:web` for part 2.
 */

import { NO_CLIENT } from '@svc/protocol';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@svc/portal/config';
import { startPortal, type Portal } from '@svc/portal/server';
import { mergeIntoRecords, recordTarget } from '@svc/portal/sessions/records-merge';
import { largeSessionDoc, uploadDoc } from '@svc/test-support/large-session';
import { launchChromium } from '@svc/test-support/chromium';
import { machineInfo } from './lib/machine.ts';
import { freePort } from '@svc/test-support/ports';
import { REPO_ROOT } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';

function option(name: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  const n = arg === undefined ? fallback : Number(arg.split('=')[1]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

const FINDINGS = option('findings', 100_000);
const REQUESTS = option('requests', 30);
const VIEWS = option('views', 5);
const BROWSER = !process.argv.includes('--no-browser');
const LEGACY_KEY = `bench-legacy-${randomBytes(16).toString('hex')}`;
const WEB_DIST = path.join(REPO_ROOT, 'packages', 'web', 'dist');
/** 20 Mbit/s both ways, 40 ms round trip (Chrome's throughput is in bytes per second). */
const THROTTLED = { offline: false, latency: 40, downloadThroughput: 20e6 / 8, uploadThroughput: 20e6 / 8 };

interface Summary {
  n: number;
  p50_ms: number;
  p90_ms: number;
  max_ms: number;
}

function summarise(ms: number[]): Summary {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
  return { n: s.length, p50_ms: round(at(50), 2), p90_ms: round(at(90), 2), max_ms: round(s.at(-1)!, 2) };
}

async function get(url: string): Promise<{ text: string; ms: number }> {
  const t = performance.now();
  const res = await fetch(url, { headers: { 'x-api-key': LEGACY_KEY }, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${text.slice(0, 200)}`);
  return { text, ms };
}

async function apiPart(portal: Portal, bigId: string, fileId: string) {
  const base = `${portal.url}/api/sessions/${bigId}/findings`;
  const times = async (query: string) => {
    await get(`${base}?${query}`); // warm
    const out: number[] = [];
    for (let i = 0; i < REQUESTS; i++) out.push((await get(`${base}?${query}`)).ms);
    return out;
  };
  const rows: Record<string, Summary> = {};
  const all: number[] = [];
  for (const sort of ['severity', 'host', 'port', 'cve', 'cvss', 'status', 'first_seen'])
    for (const order of ['asc', 'desc']) {
      const ms = await times(`sort=${sort}&order=${order}&limit=50`);
      rows[`first page, sort=${sort} ${order}`] = summarise(ms);
      all.push(...ms);
    }
  for (const filter of [
    'severity=critical',
    'status=new&sort=host',
    'exception=none&sort=cvss',
    'host=10.0.7&sort=port',
    'cve=CVE-2017-0144',
    'q=host-0500',
    'q=telnet&sort=first_seen',
  ]) {
    const ms = await times(`${filter}&limit=50`);
    rows[`filtered: ${filter}`] = summarise(ms);
    all.push(...ms);
  }
  // 20 pages deep, following next_cursor.
  const deep: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const r = await get(`${base}?limit=50${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    deep.push(r.ms);
    cursor = (JSON.parse(r.text) as { next_cursor: string | null }).next_cursor;
  }
  rows['pages 1-20 by cursor'] = summarise(deep);
  all.push(...deep);

  const license: number[] = [];
  for (let i = 0; i < REQUESTS * 4; i++) license.push((await get(`${portal.url}/api/license`)).ms);
  const download: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const r = await get(`${portal.url}/api/download?session=${fileId}`);
    JSON.parse(r.text);
    download.push(performance.now() - t);
    bytes = Buffer.byteLength(r.text);
  }
  return {
    rows,
    all: summarise(all),
    license: summarise(license),
    download: summarise(download),
    downloadBytes: bytes,
  };
}

async function browserPart(portal: Portal, fileId: string, admin: { email: string; password: string }) {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await page.goto(`${portal.url}/console/`);
    await page.getByLabel('E-mail').fill(admin.email);
    await page.getByLabel('Password').fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor({ timeout: 30_000 });
    const viewUrl = `${portal.url}/collect/?session=${fileId}&client_id=`;
    const view = async () => {
      const t = performance.now();
      await page.goto(viewUrl);
      await page
        .locator('section[aria-labelledby="findings-h"] tbody tr[data-finding]')
        .first()
        .waitFor({ timeout: 120_000 });
      return performance.now() - t;
    };
    const download = () =>
      page.evaluate(
        async ([url, key]) => {
          const t = performance.now();
          const res = await fetch(url, { headers: { 'x-api-key': key } });
          JSON.parse(await res.text());
          return performance.now() - t;
        },
        [`${portal.url}/api/download?session=${fileId}`, LEGACY_KEY] as const,
      );
    const out: Record<string, { view_ms: number[]; download_ms: number[] }> = {};
    for (const [name, conditions] of [
      ['localhost', null],
      ['20 Mbit/s, 40 ms', THROTTLED],
    ] as const) {
      await cdp.send(
        'Network.emulateNetworkConditions',
        conditions ?? { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 },
      );
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: false });
      await view(); // warm the console's assets into the cache, as a returning user has them
      const views: number[] = [];
      const downloads: number[] = [];
      for (let i = 0; i < VIEWS; i++) {
        views.push(await view());
        downloads.push(await download());
      }
      out[name] = { view_ms: views, download_ms: downloads };
    }
    return out;
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  if (BROWSER && !existsSync(path.join(WEB_DIST, 'index.html')))
    throw new Error('The console is not built: run `npm run build:web` first (or pass --no-browser).');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'svc-bench-findings-'));
  await fs.chmod(dataDir, 0o755);
  const admin = { email: 'bench@bench.local', password: randomBytes(16).toString('hex') };
  let portal: Portal | null = null;
  try {
    const port = await freePort();
    portal = await startPortal(
      loadConfig({
        SVC_DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        SVC_BASE_URL: `http://127.0.0.1:${port}`,
        SVC_WEB_DIR: WEB_DIST,
        SVC_EMBEDDED_PG_PORT: String(await freePort()),
        SVC_LOG_LEVEL: 'warn',
        SVC_UPLOAD_API_KEY: LEGACY_KEY,
        SVC_ADMIN_EMAIL: admin.email,
        SVC_ADMIN_PASSWORD: admin.password,
      }),
    );

    // The 10,000-finding session, uploaded as a scanner would (its index built at upload).
    let t = performance.now();
    const fileId = await uploadDoc(portal.url, LEGACY_KEY, largeSessionDoc('bench_10k', '', 10_000));
    const uploadMs = performance.now() - t;

    // The big one: a small upload, then its index built from a generated file of FINDINGS findings.
    const bigId = await uploadDoc(portal.url, LEGACY_KEY, largeSessionDoc('bench_big', '', 1));
    const ref = { clientId: NO_CLIENT, sessionId: bigId };
    const { rows: sessionRows } = await portal.ctx.pool.query<{ key: string }>(
      `SELECT files->'session_results.json'->>'key' AS key FROM sessions WHERE client_id = $1 AND session_id = $2`,
      [ref.clientId, ref.sessionId],
    );
    const doc = largeSessionDoc(bigId, '', FINDINGS);
    t = performance.now();
    // What an upload does with the file: merged into the findings of record, indexed, counted.
    const at = new Date();
    await portal.ctx.db.transaction().execute((trx) =>
      mergeIntoRecords(trx, {
        ref,
        // The file's own target: its records hang on that target's row, made by its small upload.
        target: recordTarget(doc.metadata.target),
        file: Promise.resolve({ key: sessionRows[0]!.key }),
        doc,
        uploader: { actor: 'bench', mayDecide: true },
        scannedAt: at,
        now: at,
        // Re-indexes a stored session: in its own transaction, as an upload of it would.
        beside: null,
      }),
    );
    const indexMs = performance.now() - t;
    // What autovacuum does soon after a bulk insert; index-only counts need the visibility map.
    await portal.ctx.pool.query('VACUUM ANALYZE session_findings, finding_records');
    console.log(
      `uploaded 10,000 findings in ${round(uploadMs / 1000, 1)} s; indexed ${FINDINGS} findings in ${round(indexMs / 1000, 1)} s`,
    );

    const api = await apiPart(portal, bigId, fileId);
    console.log(
      table([
        ['request', 'n', 'p50 ms', 'p90 ms', 'max ms'],
        ...Object.entries(api.rows).map(([k, s]) => [k, s.n, s.p50_ms, s.p90_ms, s.max_ms]),
        ['all findings requests', api.all.n, api.all.p50_ms, api.all.p90_ms, api.all.max_ms],
        ['baseline GET /api/license', api.license.n, api.license.p50_ms, api.license.p90_ms, api.license.max_ms],
        [
          `baseline GET /api/download + parse (${round(api.downloadBytes / 1e6, 1)} MB, 10,000 findings)`,
          api.download.n,
          api.download.p50_ms,
          api.download.p90_ms,
          api.download.max_ms,
        ],
      ]),
    );
    const ratios = {
      findings_p50_over_license_p50: round(api.all.p50_ms / api.license.p50_ms, 2),
      findings_p50_over_whole_file_p50: round(api.all.p50_ms / api.download.p50_ms, 4),
    };
    console.log(
      `findings page p50 ${api.all.p50_ms} ms, max ${api.all.max_ms} ms (budget 100 ms): ${ratios.findings_p50_over_license_p50}× GET /api/license, ${ratios.findings_p50_over_whole_file_p50}× the whole-file download of 10,000 findings`,
    );

    let browser: Record<string, unknown> | null = null;
    if (BROWSER) {
      const b = await browserPart(portal, fileId, admin);
      browser = {};
      const lines: (string | number)[][] = [
        ['network', 'first findings row p50 ms', 'max ms', 'whole file p50 ms', 'ratio'],
      ];
      for (const [name, r] of Object.entries(b)) {
        const v = median(r.view_ms);
        const d = median(r.download_ms);
        browser[name] = { ...r, view_p50_ms: round(v, 1), download_p50_ms: round(d, 1), ratio: round(v / d, 3) };
        lines.push([name, round(v, 1), round(Math.max(...r.view_ms), 1), round(d, 1), round(v / d, 3)]);
      }
      console.log(table(lines));
      console.log('budgets: first findings row under 300 ms on localhost, under 1,000 ms at 20 Mbit/s and 40 ms');
    }
    const file = writeResult('findings', {
      machine: machineInfo(),
      findings: FINDINGS,
      requests: REQUESTS,
      upload_10k_ms: round(uploadMs, 1),
      index_ms: round(indexMs, 1),
      api,
      ratios,
      browser,
    });
    console.log(`results: ${file}`);
  } finally {
    await portal?.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
