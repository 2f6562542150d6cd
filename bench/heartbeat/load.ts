import autocannon, { type Instance, type Result } from 'autocannon';
import { Random } from '@svc/client/engine';
import { interrupted } from '../lib/cleanup.ts';
import { startCpuSample, type CpuTarget } from '../lib/cpu.ts';
import { latencySummary, round, Samples, statusCountsOf } from '../lib/stats.ts';
import { agentIdOf, PATH, VERSION } from './fleet.ts';

// autocannon's `requests` (per-request setup), which bench/lib/autocannon.d.ts does not declare.
declare module 'autocannon' {
  export interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (req: RequestSpec, context: Record<string, unknown>) => RequestSpec;
  }
  export interface Options {
    requests?: RequestSpec[];
  }
}

export interface LoadResult {
  title: string;
  durationS: number;
  requests2xx: number;
  rps: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; p999: number; max: number };
  cpuPercent: Record<string, number | null>;
  /** CPU time per answered heartbeat, microseconds, per process. */
  cpuUsPerRequest: Record<string, number | null>;
}

/**
 * The fleet's agents in a shuffled order (seeded, so every run sends the same sequence): a
 * fleet heartbeats each agent in turn, one heartbeat at a time per agent, in no particular
 * order of id. Drawing agents at random instead sends one agent's heartbeats concurrently,
 * which no daemon does (svcd waits for each answer).
 */
function fleetOrder(agents: number): number[] {
  return new Random(agents).shuffle(Array.from({ length: agents }, (_, i) => i + 1));
}

/** What every heartbeat load of a bench run shares: the key, the fleet and the bench's load flags. */
export function loadSettings(
  key: string,
  opts: { agents: number; connections: number; pipelining: number; maxRequests: number },
) {
  return {
    key,
    agents: opts.agents,
    connections: opts.connections,
    pipelining: opts.pipelining,
    maxRequests: opts.maxRequests,
  };
}

/**
 * One bounded autocannon phase. Requests name the fleet's agents in turn (fleetOrder): an
 * agent's next heartbeat comes `agents` requests after its last, so none has two in flight.
 */
export async function runHeartbeatLoad(opts: {
  title: string;
  url: string;
  key: string;
  agents: number;
  connections: number;
  pipelining: number;
  durationS: number;
  maxRequests: number;
  cpu?: CpuTarget[];
  /** Called with each response's latency, ms (e.g. for a timeline). */
  onResponse?: (latencyMs: number) => void;
}): Promise<LoadResult> {
  interrupted.throwIfAborted();
  const latencies = new Samples();
  const timestamp = new Date().toISOString();
  const order = fleetOrder(opts.agents);
  let next = 0;
  const instance: Instance = autocannon({
    title: opts.title,
    url: opts.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': opts.key },
    connections: opts.connections,
    pipelining: opts.pipelining,
    duration: opts.durationS,
    maxOverallRequests: opts.maxRequests,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: PATH,
        setupRequest: (req) => ({
          ...req,
          body: `{"agent_id":"${agentIdOf(order[next++ % order.length] as number)}","version":"${VERSION}","timestamp":"${timestamp}","status":"running","uptime_seconds":3600}`,
        }),
      },
    ],
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    opts.onResponse?.(responseTime);
  });
  const stop = (): void => instance.stop();
  interrupted.addEventListener('abort', stop, { once: true });
  const watchdog = setTimeout(() => instance.stop(), (opts.durationS + 30) * 1000);
  const cpu = startCpuSample(opts.cpu ?? []);
  let result: Result;
  try {
    result = await instance;
  } finally {
    clearTimeout(watchdog);
    interrupted.removeEventListener('abort', stop);
  }
  const cpuPercent = cpu.stop();
  interrupted.throwIfAborted();
  const sorted = latencies.sorted();
  const statusCodes = statusCountsOf(result.statusCodeStats);
  const requests2xx = result['2xx'];
  const cpuUsPerRequest: Record<string, number | null> = {};
  for (const [name, pct] of Object.entries(cpuPercent)) {
    if (name === 'machine' || name === 'other') continue;
    cpuUsPerRequest[name] =
      pct === null || requests2xx === 0 ? null : round(((pct / 100) * result.duration * 1e6) / requests2xx, 1);
  }
  return {
    title: opts.title,
    durationS: result.duration,
    requests2xx,
    rps: round(result.duration > 0 ? requests2xx / result.duration : 0, 1),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    latencyMs: latencySummary(sorted),
    cpuPercent,
    cpuUsPerRequest,
  };
}
