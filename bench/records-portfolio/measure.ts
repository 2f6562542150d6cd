/**
 * How bench/records-portfolio.ts measures: one GET timed to its last byte on a keep-alive agent,
 * nearest-rank percentiles, and EXPLAIN (ANALYZE, BUFFERS) of a statement summed up on one line.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import zlib from 'node:zlib';
import type pg from 'pg';
import { interrupted } from '../lib/cleanup.ts';
import { round } from '../lib/stats.ts';

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  ms: number;
}

/** One GET on a keep-alive agent, timed to the answer's last byte (no decompression, no parsing). */
export function getRaw(agent: http.Agent, url: string, headers: Record<string, string>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(
      url,
      { agent, headers, signal: AbortSignal.any([interrupted, AbortSignal.timeout(60_000)]) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
            ms: performance.now() - t0,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

export function decoded(a: RawAnswer): Buffer {
  switch (a.headers['content-encoding']) {
    case 'br':
      return zlib.brotliDecompressSync(a.body);
    case 'gzip':
      return zlib.gunzipSync(a.body);
    case 'zstd':
      return zlib.zstdDecompressSync(a.body);
    default:
      return a.body;
  }
}

export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function stats(ms: number[]): Stats {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? Number.NaN;
  return {
    n: s.length,
    p50: round(at(50), 2),
    p90: round(at(90), 2),
    p99: round(at(99), 2),
    max: round(s.at(-1) ?? Number.NaN, 2),
  };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** "Limit ← Index Scan finding_records_order_idx (rows 101, 480,000 removed by filter)", top-down. */
function planLine(node: PlanNode): string {
  const parts: string[] = [];
  const walk = (n: PlanNode) => {
    const removed = (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0);
    const rows = (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1);
    parts.push(
      `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''} (rows ${rows.toLocaleString('en')}${removed > 0 ? `, ${removed.toLocaleString('en')} removed by filter` : ''})`,
    );
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(node);
  return parts.join(' ← ');
}

export async function explain(db: pg.Client, text: string, params: (string | null)[]) {
  const { rows } = await db.query<{
    'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number; 'Planning Time': number }];
  }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
  const top = rows[0]?.['QUERY PLAN'][0];
  if (top === undefined) throw new Error('EXPLAIN answered nothing');
  return {
    executionMs: round(top['Execution Time'], 2),
    planningMs: round(top['Planning Time'], 2),
    sharedHit: top.Plan['Shared Hit Blocks'] ?? 0,
    sharedRead: top.Plan['Shared Read Blocks'] ?? 0,
    line: planLine(top.Plan),
    plan: top.Plan,
  };
}
