/**
 * Benchmark: the overview's counts per client and target (GET /api/overview/posture)
 * with 10 clients, 200 targets and 1,000,000 findings of record.
 *
 * One real portal (its own process, embedded PostgreSQL in a temp dir), seeded straight in SQL
 * as bench/records-portfolio.ts does (--clients 10 × --targets 20 × --records 5,000, then VACUUM
 * ANALYZE). Cases, --requests (20) each, one at a time, timed to the last byte:
 * - admin: every client and target;
 * - customer user: a member of one client (100,000 records);
 * - the whole overview (GET /api/overview) as each, whose most frequent open findings group the
 *   records by title.
 * Beside them, the summary of every record (GET /api/findings/summary, a scan of the table) as
 * admin: what one pass over every record costs on the same machine at the same moment.
 *
 *   node bench/overview-posture.ts [--clients=10 --targets=20 --records=5000 --requests=20]
 *
 * Results: bench/results/overview-posture-<timestamp>.json. See bench/README.md.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { onCleanup } from './lib/cleanup.ts';
import { machineInfo } from './lib/machine.ts';
import { benchmarkMain } from './lib/main.ts';
import { controlConnection, databaseUrlOf } from './lib/pg-log.ts';
import { adminToken, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';
import { clientIdOf, seedAnalysed } from './records-portfolio/seed.ts';

interface Options {
  clients: number;
  targets: number;
  records: number;
  requests: number;
}

const USAGE = 'node bench/overview-posture.ts [--clients=10 --targets=20 --records=5000 --requests=20]';

function parseOptions(argv: string[]): Options | 'help' {
  if (argv.includes('--help')) return 'help';
  const o: Options = { clients: 10, targets: 20, records: 5000, requests: 20 };
  for (const a of argv) {
    const m = /^--(clients|targets|records|requests)=(\d+)$/.exec(a);
    if (m === null) throw new Error(`unknown option ${a}`);
    const n = Number(m[2]);
    if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new Error(`--${m[1]} must be 1 to 1,000,000`);
    o[m[1] as keyof Options] = n;
  }
  return o;
}

const log = (message: string) => console.log(message);

async function timed(url: string, token: string): Promise<{ ms: number; bytes: number; body: unknown }> {
  const t = performance.now();
  const res = await fetch(url, { headers: { 'x-identity-token': token, 'accept-encoding': 'gzip, br' } });
  const text = await res.text();
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return { ms, bytes: text.length, body: JSON.parse(text) };
}

/** A member of `clientId` (identity provider), signed in: the customer user. */
async function memberToken(url: string, admin: string, clientId: string): Promise<string> {
  const email = 'member@bench.invalid';
  const password = `Bench-member-${Date.now()}`;
  const created = await fetch(`${url}/identity/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, role: 'member', client_ids: [clientId] }),
  });
  if (created.status !== 201) throw new Error(`create user: HTTP ${created.status} ${await created.text()}`);
  const res = await fetch(`${url}/identity/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: email, password }).toString(),
  });
  if (res.status !== 200) throw new Error(`sign in: HTTP ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function benchmark(o: Options): Promise<void> {
  const started = new Date();
  const total = o.clients * o.targets * o.records;
  log(
    `overview posture benchmark: GET /api/overview/posture over ${total.toLocaleString('en')} records (${o.clients} clients × ${o.targets} targets × ${o.records})`,
  );
  log(
    `machine: ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((v) => round(v, 1))
      .join(' ')}`,
  );
  const portal = await startPortalProcess();
  const control = await controlConnection(databaseUrlOf(portal), 'bench-control');
  onCleanup('close the control connection', () => control.end());
  const records = await seedAnalysed(control, { clients: o.clients, targets: o.targets, records: o.records }, log);
  const admin = await adminToken(portal);
  const member = await memberToken(portal.url, admin, clientIdOf(Math.min(3, o.clients - 1)));

  const cases = [
    { name: 'posture, admin (every client)', path: '/api/overview/posture', token: admin },
    { name: 'posture, customer user (one client)', path: '/api/overview/posture', token: member },
    // The rest of the first page: its most frequent open findings group the records by title.
    { name: 'overview, admin (every client)', path: '/api/overview', token: admin },
    { name: 'overview, customer user (one client)', path: '/api/overview', token: member },
    { name: 'summary of every record, admin (a table scan)', path: '/api/findings/summary', token: admin },
  ];
  const results: Record<string, unknown>[] = [];
  const lines: (string | number)[][] = [['case', 'p50 ms', 'max ms', 'answer bytes']];
  for (const c of cases) {
    const first = await timed(`${portal.url}${c.path}`, c.token); // warm
    const ms: number[] = [];
    for (let i = 0; i < o.requests; i++) ms.push((await timed(`${portal.url}${c.path}`, c.token)).ms);
    const r = {
      case: c.name,
      path: c.path,
      ms: ms.map((x) => round(x, 1)),
      p50_ms: round(median(ms), 1),
      bytes: first.bytes,
    };
    results.push(r);
    lines.push([c.name, r.p50_ms, round(Math.max(...ms), 1), first.bytes]);
  }
  log(table(lines));
  log(
    `load average at the end ${os
      .loadavg()
      .map((v) => round(v, 1))
      .join(' ')}`,
  );
  const file = writeResult(
    'overview-posture',
    { benchmark: 'overview-posture', machine: machineInfo(), options: o, records, cases: results },
    started,
  );
  log(`result written to ${file}`);
}

process.exitCode = await benchmarkMain({
  parse: () => parseOptions(process.argv.slice(2)),
  usage: () => USAGE,
  run: benchmark,
  log,
  cleans: 'stopping the portal and PostgreSQL; removing the temp dir',
});
