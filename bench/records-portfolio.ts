/**
 * Benchmark: the portfolio (GET /api/findings, target: a page under 100 ms at 1,000,000
 * findings of record), one page at a time.
 *
 * One real portal (its own process, embedded PostgreSQL in a temp dir, log level warn). Its
 * database is seeded straight in SQL (bench/records-portfolio/seed.ts): --clients (200) ×
 * --targets (10) × --records (500) records with field-like spreads of severity, status, KEV,
 * exceptions, false positives, due dates and hosts, then VACUUM ANALYZE (what autovacuum does
 * after a bulk load).
 *
 * Cases: the first page as an admin, a page deep in the cursor (row --deep, 500,000), and the
 * filters (severity=critical,high; status=open; overdue=true; kev=true; exception=accepted and
 * expired; disposition; host_prefix, host and target without a client; one client; three
 * clients; a client with host_prefix; a client with status and severity), and the first page of
 * each other order (sort=…, alone and within one or three clients). Per case, sides in
 * turn, one request at a time, --requests (100) each (bounded by --case-seconds):
 * - portal: GET /api/findings?<filter>&limit=--limit as the admin (identity token), with a
 *   browser's Accept-Encoding; timed to the last byte of the (compressed) answer;
 * - raw SQL: the portal's own statement for that request (text and parameters read from
 *   PostgreSQL's statement log while the portal served it once) run through pg on a connection
 *   of the bench's own: the database's share, no HTTP;
 * - bare node:http: a server in its own process answering the very bytes the portal answered for
 *   the case (bench/lib/baseline-server.ts), through the same client: the HTTP floor of a page of
 *   that size.
 * Each case's statement is also run once under EXPLAIN (ANALYZE, BUFFERS), summed up on one line;
 * the statement of a case over budget is printed, and every plan is kept in the JSON.
 *
 *   node bench/records-portfolio.ts [--clients=200 --targets=10 --records=500 --limit=100 --requests=100
 *                                    --case-seconds=40 --deep=500000 --quiet-wait=10]
 *
 * Results: bench/results/records-portfolio-<timestamp>.json. See bench/README.md.
 */
import http from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { routeFromAnswer, startBaseline } from './lib/baseline.ts';
import { interrupted, onCleanup } from './lib/cleanup.ts';
import { waitForQuietMachine } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { controlConnection, databaseUrlOf, oneLine, withStatementLog } from './lib/pg-log.ts';
import { adminToken, startPortalProcess } from './lib/portal.ts';
import { table, writeResult } from './lib/report.ts';
import { round } from './lib/stats.ts';
import { decoded, explain, getRaw, type RawAnswer, type Stats, stats } from './records-portfolio/measure.ts';
import {
  ACCEPT_ENCODING,
  BUDGET_MS,
  type Case,
  casesOf,
  type Options,
  parseOptions,
  USAGE,
} from './records-portfolio/plan.ts';
import { portfolioFacts, seedPortfolio } from './records-portfolio/seed.ts';
import { benchmarkMain } from './lib/main.ts';

function log(message: string): void {
  console.log(message);
}

interface Measured {
  name: string;
  query: string;
  sql: { text: string; params: (string | null)[] };
  answer: { findings: number; bytes: number; encodedBytes: number; encoding: string | null };
  portal: Stats;
  rawSql: Stats;
  bareHttp: Stats;
  plan: Awaited<ReturnType<typeof explain>>;
}

async function benchmark(o: Options): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  const total = o.clients * o.targets * o.records;
  log(
    `portfolio benchmark: GET /api/findings over ${total.toLocaleString('en')} records (${o.clients} clients × ${o.targets} targets × ${o.records}), pages of ${o.limit}`,
  );
  log(`machine: ${machine.cpus} CPUs, Node ${machine.node}, load average ${loadAtStart.join(' ')}`);
  const portal = await startPortalProcess({ echo: o.verbose });
  log(`portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort})`);
  const token = await adminToken(portal);
  const databaseUrl = databaseUrlOf(portal);
  const control = await controlConnection(databaseUrl, 'bench-control');
  const rawDb = await controlConnection(databaseUrl, 'bench-raw-sql');

  let t0 = performance.now();
  const { records: seeded, indexesBuiltAfter } = await seedPortfolio(control, {
    clients: o.clients,
    targets: o.targets,
    records: o.records,
    seed: 0.33,
  });
  const seedMs = performance.now() - t0;
  t0 = performance.now();
  await control.query('VACUUM (ANALYZE) finding_records, finding_targets');
  const vacuumMs = performance.now() - t0;
  const today = new Date().toISOString().slice(0, 10);
  const facts = await portfolioFacts(control, today);
  log(
    `seeded ${seeded.toLocaleString('en')} records in ${(seedMs / 1000).toFixed(1)} s, VACUUM ANALYZE ${(vacuumMs / 1000).toFixed(1)} s; table and indexes ${(facts['table_bytes']! / 2 ** 20).toFixed(0)} MiB`,
  );
  log(`  secondary indexes dropped for the load and built after it: ${indexesBuiltAfter.join(', ')}`);
  log(
    `  ${Object.entries(facts)
      .filter(([k]) => k !== 'table_bytes')
      .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
      .join(', ')}`,
  );

  // The deep cursor: the position of row --deep in the portfolio's order, as next_cursor encodes it.
  const deepRow = (
    await control.query<{ severity_key: number; first_seen_at: Date; id: string }>(
      'SELECT severity_key, first_seen_at, id FROM finding_records ORDER BY severity_key DESC, first_seen_at, id OFFSET $1 LIMIT 1',
      [o.deep - 1],
    )
  ).rows[0];
  if (deepRow === undefined) throw new Error('no deep row');
  const deepCursor = Buffer.from(
    JSON.stringify([deepRow.severity_key, deepRow.first_seen_at.toISOString(), deepRow.id]),
  ).toString('base64url');
  const cases = casesOf(o, deepCursor);
  const pathOf = (c: Case) => `/api/findings?${c.query === '' ? '' : `${c.query}&`}limit=${o.limit}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  onCleanup('close the HTTP agent', () => agent.destroy());
  const portalHeaders = { 'x-identity-token': token, 'accept-encoding': ACCEPT_ENCODING };

  // One request per case with the statement log on: the portal's statement and parameters, and its answer.
  const logged = await withStatementLog(control, portal, async () => {
    const answers: RawAnswer[] = [];
    for (const c of cases) answers.push(await getRaw(agent, `${portal.url}${pathOf(c)}`, portalHeaders));
    return answers;
  });
  if (logged === null) throw new Error("cannot read PostgreSQL's log: the raw SQL side needs the portal's statements");
  // A page is `SELECT * FROM finding_records …`, or after a cursor `SELECT * FROM ((SELECT * FROM finding_records …) UNION ALL …)`.
  const pages = logged.statements.filter(
    (s) => s.phase === 'execute' && /^SELECT \* FROM (\(\s*\(SELECT \* FROM )?finding_records\b/.test(s.sql),
  );
  if (pages.length !== cases.length)
    throw new Error(`expected ${cases.length} page statements in PostgreSQL's log, found ${pages.length}`);
  const routes = logged.result.map((a, i) => {
    if (a.status !== 200)
      throw new Error(`${cases[i]?.name}: HTTP ${a.status} ${decoded(a).toString('utf8').slice(0, 300)}`);
    const headers = new Headers();
    for (const [k, v] of Object.entries(a.headers)) if (typeof v === 'string') headers.set(k, v);
    return routeFromAnswer('GET', `/page/${i}`, { status: a.status, headers, body: a.body });
  });
  const baseline = await startBaseline(routes, { echo: o.verbose });

  const measure = async (c: Case, i: number, sqlText: string, params: (string | null)[]) => {
    const sides = ['portal', 'sql', 'http'] as const;
    const ms: Record<'portal' | 'sql' | 'http', number[]> = { portal: [], sql: [], http: [] };
    const one = async (side: 'portal' | 'sql' | 'http'): Promise<number> => {
      if (side === 'sql') {
        const t = performance.now();
        await rawDb.query(sqlText, params);
        return performance.now() - t;
      }
      const a =
        side === 'portal'
          ? await getRaw(agent, `${portal.url}${pathOf(c)}`, portalHeaders)
          : await getRaw(agent, `${baseline.url}/page/${i}`, portalHeaders);
      if (a.status !== 200) throw new Error(`${c.name} (${side}): HTTP ${a.status}`);
      return a.ms;
    };
    for (let w = 0; w < 3; w++) for (const side of sides) await one(side);
    const until = performance.now() + o.caseSeconds * 1000;
    for (let j = 0; j < o.requests && performance.now() < until; j++) {
      interrupted.throwIfAborted();
      // Rotate which side goes first, so none always follows another's warm caches.
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(j + k) % sides.length]!;
        ms[side].push(await one(side));
      }
    }
    return ms;
  };

  const results: Measured[] = [];
  for (const [i, c] of cases.entries()) {
    if (o.quietWaitS > 0)
      await waitForQuietMachine({ maxBusyPercent: 25, timeoutMs: o.quietWaitS * 1000, signal: interrupted });
    const st = pages[i]!;
    const params = st.params ?? [];
    const answer = logged.result[i]!;
    const page = JSON.parse(decoded(answer).toString('utf8')) as { findings: unknown[] };
    const ms = await measure(c, i, st.sql, params);
    const plan = await explain(control, st.sql, params);
    const r: Measured = {
      name: c.name,
      query: pathOf(c),
      sql: { text: st.sql, params },
      answer: {
        findings: page.findings.length,
        bytes: decoded(answer).length,
        encodedBytes: answer.body.length,
        encoding: (answer.headers['content-encoding'] as string | undefined) ?? null,
      },
      portal: stats(ms.portal),
      rawSql: stats(ms.sql),
      bareHttp: stats(ms.http),
      plan,
    };
    results.push(r);
    log(
      `  ${c.name.padEnd(46)} portal p50 ${String(r.portal.p50).padStart(8)} ms p99 ${String(r.portal.p99).padStart(8)} | SQL p50 ${String(r.rawSql.p50).padStart(8)} | http p50 ${String(r.bareHttp.p50).padStart(6)} | ${r.answer.findings} rows, ${r.answer.encodedBytes} B ${r.answer.encoding ?? ''}`,
    );
  }

  log('');
  log(
    table([
      [
        'case',
        'n',
        'portal p50',
        'p99',
        'raw SQL p50',
        'p99',
        'bare http p50',
        'p99',
        'portal / SQL',
        'portal / http',
        `< ${BUDGET_MS} ms p50`,
        'p99',
      ],
      ...results.map((r) => [
        r.name,
        r.portal.n,
        r.portal.p50,
        r.portal.p99,
        r.rawSql.p50,
        r.rawSql.p99,
        r.bareHttp.p50,
        r.bareHttp.p99,
        round(r.portal.p50 / r.rawSql.p50, 1),
        round(r.portal.p50 / r.bareHttp.p50, 1),
        r.portal.p50 < BUDGET_MS ? 'met' : 'NOT met',
        r.portal.p99 < BUDGET_MS ? 'met' : 'NOT met',
      ]),
    ]),
  );
  log('\nplans (EXPLAIN ANALYZE of the portal statement):');
  for (const r of results) log(`  ${r.name}: ${r.plan.executionMs} ms; ${r.plan.line}`);
  const slow = results.filter((r) => r.portal.p50 >= BUDGET_MS || r.portal.p99 >= BUDGET_MS);
  for (const r of slow)
    log(`\nover budget: ${r.name}\n  ${oneLine(r.sql.text, 600)}\n  params ${JSON.stringify(r.sql.params)}`);

  const file = writeResult(
    'records-portfolio',
    {
      benchmark: 'records-portfolio',
      description: `GET /api/findings pages of ${o.limit} over ${total} findings of record, per filter, vs the portal's statement run through pg and a bare node:http answer of the same bytes`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      postgres: (await control.query<{ version: string }>('SELECT version()')).rows[0]?.version ?? null,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: o,
      seed: {
        records: seeded,
        seedMs: round(seedMs, 0),
        vacuumAnalyzeMs: round(vacuumMs, 0),
        indexesBuiltAfter,
        facts,
      },
      budgetMs: BUDGET_MS,
      cases: results,
    },
    started,
  );
  log(`result written to ${file}`);
}

const main = () =>
  benchmarkMain({
    parse: () => parseOptions(process.argv.slice(2)),
    usage: () => USAGE,
    run: benchmark,
    log,
    cleans: 'stopping the portal and PostgreSQL; removing the temp dir',
  });

process.exitCode = await main();
