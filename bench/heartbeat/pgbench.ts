/**
 * The heartbeat benchmark's pgbench figures (informational): the portal's heartbeat statement
 * straight from pgbench, no HTTP and no Node, the database's own ceiling here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_COMMANDS_PER_HEARTBEAT } from '@svc/protocol';
import { HEARTBEAT_PARAMETERS, HEARTBEAT_SQL, type HeartbeatParameter } from '@svc/portal/agents/claim-sql';
import { runTool } from '../lib/children.ts';
import { onCleanup } from '../lib/cleanup.ts';
import { type CpuTarget, startCpuSample } from '../lib/cpu.ts';
import { percentileSorted, round, Samples } from '../lib/stats.ts';

/** The seeded fleet's constant heartbeat values. */
interface Fleet {
  version: string;
  clientId: string;
}

export const normalizeSql = (s: string): string =>
  s
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

export interface PgbenchResult {
  variant: string;
  clients: number;
  durationS: number;
  transactions: number;
  tps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** Over the whole pgbench process (connect, run, disconnect) plus 0.5 s: compare the µs/tx, not this. */
  postgresCpuPercent: number | null;
  postgresCpuUsPerTransaction: number | null;
}

/** The heartbeat statement with the baseline's parameter values, for pgbench (-M extended binds :n). */
function pgbenchScript(agents: number, fleet: Fleet): string {
  const literal: Record<HeartbeatParameter, string> = {
    version: `'${fleet.version}'`,
    sent_at: 'now()',
    status: `'running'`,
    uptime_seconds: '3600',
    schedules: 'NULL',
    system_info: 'NULL',
    now: 'now()',
    client_id: `'${fleet.clientId}'`,
    agent_id: `'svcd_' || lpad(to_hex(:n::int), 8, '0')`,
    can_receive: 'true',
    limit: String(MAX_COMMANDS_PER_HEARTBEAT),
  };
  const sql = normalizeSql(HEARTBEAT_SQL.license).replace(/\$(\d+)/g, (_, n: string) => {
    const name = HEARTBEAT_PARAMETERS[Number(n) - 1];
    if (name === undefined) throw new Error(`the heartbeat statement has no parameter $${n}`);
    return `(${literal[name]})`;
  });
  if (/\$\d/.test(sql)) throw new Error(`pgbench script still has a parameter: ${sql}`);
  return `\\set n random(1, ${agents})\n${sql};\n`;
}

interface PgbenchVariant {
  name: string;
  /** pgbench -M: `extended` is what node-postgres does (unnamed statement: parse, plan, execute every time). */
  mode: 'extended' | 'prepared';
  /** PGOPTIONS for the sessions, e.g. '-c synchronous_commit=off'. */
  pgOptions: string;
}

export const PGBENCH_VARIANTS: PgbenchVariant[] = [
  { name: 'pgbench -M extended (as pg sends it)', mode: 'extended', pgOptions: '' },
  { name: 'what-if: pgbench -M prepared', mode: 'prepared', pgOptions: '' },
  {
    name: 'what-if: pgbench -M prepared, synchronous_commit=off',
    mode: 'prepared',
    pgOptions: '-c synchronous_commit=off',
  },
];

export async function runPgbench(
  databaseUrl: string,
  opts: { agents: number; pool: number; durationS: number },
  fleet: Fleet,
  postgres: CpuTarget,
  variant: PgbenchVariant,
): Promise<PgbenchResult> {
  // A fresh directory per run: pgbench's per-transaction logs land here.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-pgbench-'));
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  const script = path.join(dir, 'heartbeat.sql');
  fs.writeFileSync(script, pgbenchScript(opts.agents, fleet));
  const url = new URL(databaseUrl);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '',
    PGPASSWORD: decodeURIComponent(url.password),
    PGOPTIONS: variant.pgOptions,
    LC_ALL: 'C',
  };
  const clients = opts.pool;
  const args = [
    '-h',
    url.hostname,
    '-p',
    url.port,
    '-U',
    'postgres',
    '-n',
    '-M',
    variant.mode,
    '-c',
    String(clients),
    '-j',
    '2',
    '-T',
    String(Math.round(opts.durationS)),
    '-f',
    script,
    '-l',
    `--log-prefix=${path.join(dir, 'tx')}`,
    'svc',
  ];
  const cpu = startCpuSample([postgres]);
  const t0 = process.hrtime.bigint();
  const { code, out } = await runTool('pgbench', args, { env, cwd: dir });
  // Let the backends of the closed sessions exit and be reaped, so their CPU time is counted.
  await sleep(500);
  const cpuPercent = cpu.stop();
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  if (code !== 0) throw new Error(`pgbench exited with ${code}:\n${out}`);
  const latencies = new Samples();
  for (const f of fs.readdirSync(dir).filter((f) => f.startsWith('tx'))) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const us = Number(line.split(' ')[2]);
      if (line !== '' && Number.isFinite(us)) latencies.push(us / 1000);
    }
  }
  const sorted = latencies.sorted();
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1] ?? Number.NaN);
  const transactions = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1] ?? sorted.length);
  const pgCpu = cpuPercent['postgres'] ?? null;
  return {
    variant: variant.name,
    clients,
    durationS: opts.durationS,
    transactions,
    tps: round(tps, 1),
    latencyMs: {
      p50: round(percentileSorted(sorted, 50), 3),
      p90: round(percentileSorted(sorted, 90), 3),
      p99: round(percentileSorted(sorted, 99), 3),
      max: round(sorted[sorted.length - 1] ?? Number.NaN, 3),
    },
    postgresCpuPercent: pgCpu,
    postgresCpuUsPerTransaction:
      pgCpu === null || transactions === 0 ? null : round(((pgCpu / 100) * wallS * 1e6) / transactions, 1),
  };
}
