import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BaselineConfig, BaselineRoute } from './baseline-server.ts';
import { spawnNode, waitForHttp, type NodeChild } from './children.ts';
import { interrupted, tempDir } from './cleanup.ts';
import { freePort } from '@svc/test-support/ports';

export type { BaselineRoute } from './baseline-server.ts';

export interface Baseline {
  url: string;
  port: number;
  child: NodeChild;
  stop(): Promise<void>;
}

export interface CapturedAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** Headers that node:http sets itself or that describe the connection, not the answer. */
const NOT_COPIED = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** A baseline route that answers exactly what the real server answered (status, body, content headers). */
export function routeFromAnswer(method: string, path: string, answer: CapturedAnswer): BaselineRoute {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!NOT_COPIED.has(name.toLowerCase())) headers[name] = value;
  });
  return { method, path, status: answer.status, headers, body: answer.body.toString('base64') };
}

/** Start the bare node:http baseline as a separate process on a free port and wait until it answers. */
export async function startBaseline(
  routes: BaselineRoute[],
  opts: { echo?: boolean; host?: string } = {},
): Promise<Baseline> {
  const host = opts.host ?? '127.0.0.1';
  const first = routes[0];
  if (!first) throw new Error('the baseline needs at least one route');
  if (first.method !== 'GET')
    throw new Error('the first baseline route is used as the readiness probe and must be a GET');
  const port = await freePort(host);
  const config: BaselineConfig = { host, port, routes };
  const json = JSON.stringify(config);
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '' };
  // One environment string may not exceed 128 KiB (Linux): a larger table goes through a file.
  if (json.length <= 64 * 1024) env['BENCH_BASELINE_CONFIG'] = json;
  else {
    const file = path.join(tempDir('svc-bench-baseline-'), 'routes.json');
    fs.writeFileSync(file, json);
    env['BENCH_BASELINE_CONFIG_FILE'] = file;
  }
  if (process.env['NODE_OPTIONS'] !== undefined) env['NODE_OPTIONS'] = process.env['NODE_OPTIONS'];
  const script = fileURLToPath(new URL('./baseline-server.ts', import.meta.url));
  const child = spawnNode(script, { name: 'baseline', env, echo: opts.echo ?? false });
  const url = `http://${host}:${port}`;
  await waitForHttp(`${url}${first.path}`, { timeoutMs: 15_000, child, signal: interrupted });
  return { url, port, child, stop: () => child.stop(5_000) };
}
