/**
 * The heartbeat benches' baseline: a bare node:http server (its own process) that parses the
 * heartbeat body, runs the portal's heartbeat statement (packages/portal/src/agents/claim-sql.ts)
 * through `pg` and answers the same JSON. This module is that process when BENCH_HEARTBEAT_BASELINE
 * holds its configuration, and starts it otherwise.
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { type HeartbeatBody, MAX_COMMANDS_PER_HEARTBEAT } from '@svc/protocol';
import { type ClaimedRow, HEARTBEAT_SQL, heartbeatValues } from '@svc/portal/agents/claim-sql';
import { spawnNode, waitForHttp, type NodeChild } from '../lib/children.ts';
import { interrupted } from '../lib/cleanup.ts';
import { freePort } from '@svc/test-support/ports';
import { PATH } from './fleet.ts';

const BASELINE_ENV = 'BENCH_HEARTBEAT_BASELINE';

export interface BaselineConfig {
  host: string;
  port: number;
  databaseUrl: string;
  poolMax: number;
  tier: string;
  clientId: string;
  /** What-if only: run the statement as a named prepared statement (parsed and planned once per connection). */
  prepared: boolean;
}

async function serveBaseline(config: BaselineConfig): Promise<void> {
  const pool = new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.poolMax,
    application_name: 'bench-baseline',
  });
  pool.on('error', () => undefined);
  const answer = (res: http.ServerResponse, status: number, body: string): void => {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/ready') return answer(res, 200, '{"ok":true}');
    if (req.method !== 'POST' || req.url !== PATH) return answer(res, 404, '{"error":"Not found"}');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        try {
          const hb = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeartbeatBody;
          const now = new Date();
          // The parameters recordHeartbeat binds for a license key with agent:commands.
          const values = heartbeatValues({
            version: hb.version,
            sent_at: new Date(hb.timestamp),
            status: hb.status,
            uptime_seconds: hb.uptime_seconds,
            schedules: null,
            system_info: null,
            now,
            client_id: config.clientId,
            agent_id: hb.agent_id,
            can_receive: true,
            limit: MAX_COMMANDS_PER_HEARTBEAT,
          });
          const text = HEARTBEAT_SQL.license;
          const result = await pool.query<ClaimedRow & { updated: number }>(
            config.prepared ? { name: 'heartbeat', text, values } : { text, values },
          );
          if (result.rows[0]?.updated !== 1) return answer(res, 404, '{"error":"unknown agent"}');
          const commands = result.rows
            .filter((r) => r.id !== null)
            .map((r) => ({
              id: Number(r.id),
              command_type: r.command_type,
              payload: r.payload,
              priority: r.priority,
              created_by: r.created_by,
              created_at: r.created_at.toISOString(),
            }));
          answer(res, 200, JSON.stringify({ success: true, received_at: now.toISOString(), commands }));
        } catch (err) {
          answer(res, 500, JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
        }
      })();
    });
  });
  server.keepAliveTimeout = 72_000; // Fastify's default
  server.listen(config.port, config.host);
  const shutdown = (): void => {
    server.close(() => void pool.end().finally(() => process.exit(0)));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2_000).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

export async function startBaselineServer(
  config: Omit<BaselineConfig, 'port' | 'host'>,
  echo: boolean,
): Promise<{ url: string; child: NodeChild }> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const full: BaselineConfig = { ...config, host, port };
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', [BASELINE_ENV]: JSON.stringify(full) };
  const child = spawnNode(fileURLToPath(import.meta.url), { name: 'baseline', env, echo });
  const url = `http://${host}:${port}`;
  await waitForHttp(`${url}/ready`, { timeoutMs: 15_000, child, signal: interrupted });
  return { url, child };
}

const config = process.env[BASELINE_ENV];
if (config !== undefined) await serveBaseline(JSON.parse(config) as BaselineConfig);
