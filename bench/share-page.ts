/**
 * Benchmark: memory of GET /share/frame?token=&file=report.html (what a share link frames) with N concurrent views of a ~24 MB report.html,
 * on the real portal (its own process: Fastify, the file blob store, embedded PostgreSQL,
 * the bridge inserted while streaming) against a bare node:http server that streams the
 * same file with fs.createReadStream (bench/share-page/file-server.ts, its own process).
 * Rounds alternate baseline, portal; per side the server's RSS growth during the views
 * (peak minus before, from /proc: VmRSS samples and VmHWM), per view, and the ratio
 * portal/baseline are printed and written to bench/results/share-page-<timestamp>.json.
 *
 *   node bench/share-page.ts [--views=16 --rounds=3 --report-mb=24 --timeout=300]
 *
 * Every view reads the whole answer and checks its length, so the views overlap for as
 * long as the server takes to send them. See bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, waitForHttp, type NodeChild } from './lib/children.ts';
import { cleanupAll, installSignalHandlers, interrupted, onCleanup } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { startPortalProcess } from './lib/portal.ts';
import { freePort } from '@svc/test-support/ports';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { startRssSampler, type RssWindow } from './upload/rss.ts';

type Side = 'baseline' | 'portal';

interface Options {
  views: number;
  rounds: number;
  reportMb: number;
  timeoutS: number;
}

function parseOptions(argv: string[]): Options {
  const opts: Options = { views: 16, rounds: 3, reportMb: 24, timeoutS: 300 };
  const limits: Record<keyof Options, [string, number, number]> = {
    views: ['--views', 1, 256],
    rounds: ['--rounds', 1, 20],
    reportMb: ['--report-mb', 1, 24],
    timeoutS: ['--timeout', 10, 3600],
  };
  for (const arg of argv) {
    if (arg === '--help') {
      console.log(
        'node bench/share-page.ts [--views=16] [--rounds=3] [--report-mb=24 (at most 24: the upload limit is 25 MB)] [--timeout=300]',
      );
      process.exit(0);
    }
    const entry = Object.entries(limits).find(([, [flag]]) => arg.startsWith(`${flag}=`));
    if (entry === undefined) throw new Error(`unknown option ${arg} (see --help)`);
    const [key, [flag, min, max]] = entry as [keyof Options, [string, number, number]];
    const n = Number(arg.slice(flag.length + 1));
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`${flag} must be a whole number between ${min} and ${max}`);
    opts[key] = n;
  }
  return opts;
}

/** A plausible report: repeated finding rows, a script string holding `</body>`, the real closing tag at the end. */
function reportBytes(bytes: number): Buffer {
  const head =
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Bench report</title></head><body>\n<section id="consultation-section" class="consultation-section"><button id="scheduleBtn">Schedule</button></section>\n';
  const tail =
    '<script>function printView() { return "<html><body>" + document.body.innerHTML + "</body></html>"; }</script>\n</body>\n</html>\n';
  const row =
    '<tr><td>192.168.1.10</td><td>22/tcp</td><td class="high">SSH allows password authentication</td><td>Disable PasswordAuthentication.</td></tr>\n';
  const out = Buffer.alloc(bytes, ' ');
  out.write(head, 0, 'utf8');
  let off = head.length;
  while (off + row.length < bytes - tail.length) off += out.write(row, off, 'utf8');
  out.write(tail, bytes - tail.length, 'utf8');
  return out;
}

/** N concurrent GETs of `url`, each read to the end; returns the byte counts. */
async function views(url: string, n: number, expectedBytes: number, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), interrupted]);
  const one = async (): Promise<void> => {
    const res = await fetch(url, { signal });
    if (res.status !== 200 || res.body === null) throw new Error(`GET ${url}: HTTP ${res.status}`);
    let got = 0;
    for await (const chunk of res.body) got += (chunk as Uint8Array).length;
    if (got !== expectedBytes || res.headers.get('content-length') !== String(expectedBytes)) {
      throw new Error(
        `GET ${url}: ${got} bytes, content-length ${res.headers.get('content-length')}, expected ${expectedBytes}`,
      );
    }
  };
  await Promise.all(Array.from({ length: n }, one));
}

async function main(): Promise<void> {
  installSignalHandlers();
  const opts = parseOptions(process.argv.slice(2));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-share-'));
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  const report = reportBytes(opts.reportMb * 1e6);
  const reportFile = path.join(dir, 'report.html');
  fs.writeFileSync(reportFile, report);

  const legacyKey = randomBytes(24).toString('hex');
  const portal = await startPortalProcess({ env: { SVC_UPLOAD_API_KEY: legacyKey } });
  const sessionId = `bench-share-${randomBytes(8).toString('hex')}`;
  const form = new FormData();
  const doc = {
    metadata: { session_id: sessionId, client: 'Benchmark Client', target: '192.168.1.0/24' },
    summary: { risk_score: 42, risk_grade: 'C', total_findings: 3, total_hosts: 2 },
  };
  form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
  form.append('report_html', new Blob([report], { type: 'text/html' }), 'report.html');
  const up = await fetch(`${portal.url}/api/upload`, {
    method: 'POST',
    headers: { 'x-api-key': legacyKey },
    body: form,
    signal: AbortSignal.timeout(120_000),
  });
  const upBody = (await up.json()) as { share_token?: string };
  if (up.status !== 200 || typeof upBody.share_token !== 'string')
    throw new Error(`upload: HTTP ${up.status} ${JSON.stringify(upBody).slice(0, 300)}`);
  // The share page frames the report; the frame is what streams the stored file with the bridge.
  const shareUrl = `${portal.url}/share/frame?token=${upBody.share_token}&file=report.html`;
  const first = await fetch(shareUrl);
  const portalBytes = (await first.arrayBuffer()).byteLength;
  if (first.status !== 200 || portalBytes <= report.length)
    throw new Error(`share page: HTTP ${first.status}, ${portalBytes} bytes`);

  const basePort = await freePort();
  const baseline: NodeChild = spawnNode(fileURLToPath(new URL('./share-page/file-server.ts', import.meta.url)), {
    name: 'baseline',
    env: { ...process.env, BENCH_SHARE_FILE: reportFile, BENCH_SHARE_PORT: String(basePort) },
  });
  await waitForHttp(`http://127.0.0.1:${basePort}/health`, { timeoutMs: 30_000, child: baseline, signal: interrupted });
  const baseUrl = `http://127.0.0.1:${basePort}/report.html`;
  // One warm-up view each, so neither side pays for first-time allocation in a measured round.
  await views(baseUrl, 1, report.length, opts.timeoutS * 1000);

  const windows: Record<Side, RssWindow[]> = { baseline: [], portal: [] };
  for (let r = 0; r < opts.rounds; r++) {
    for (const side of ['baseline', 'portal'] as const) {
      const pid = side === 'portal' ? portal.child.pid : baseline.pid;
      const sampler = startRssSampler(pid, 20);
      await views(
        side === 'portal' ? shareUrl : baseUrl,
        opts.views,
        side === 'portal' ? portalBytes : report.length,
        opts.timeoutS * 1000,
      );
      const w = sampler.stop();
      windows[side].push(w);
      console.error(
        `round ${r + 1} ${side}: RSS ${Math.round(w.beforeKiB / 1024)} -> peak ${Math.round(w.peakKiB / 1024)} MiB (+${Math.round(w.growthKiB / 1024)} MiB)`,
      );
    }
  }

  const growthMiB = (side: Side) => median(windows[side].map((w) => w.growthKiB)) / 1024;
  const perView = (side: Side) => growthMiB(side) / opts.views;
  const ratio = growthMiB('baseline') > 0 ? growthMiB('portal') / growthMiB('baseline') : Number.POSITIVE_INFINITY;
  console.log(
    table([
      ['side', 'views', 'report MB', 'RSS before MiB', 'RSS growth MiB (median)', 'per view MiB'],
      ...(['baseline', 'portal'] as const).map((side) => [
        side,
        opts.views,
        opts.reportMb,
        round(median(windows[side].map((w) => w.beforeKiB)) / 1024, 1),
        round(growthMiB(side), 1),
        round(perView(side), 2),
      ]),
    ]),
  );
  console.log(`ratio portal/baseline (RSS growth): ${round(ratio, 2)}`);
  const file = writeResult('share-page', {
    options: opts,
    machine: machineInfo(),
    reportBytes: report.length,
    portalBytes,
    windows,
    growthMiB: { baseline: growthMiB('baseline'), portal: growthMiB('portal') },
    ratio,
  });
  console.log(`written to ${file}`);
  await baseline.stop(10_000);
  await portal.stop();
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
