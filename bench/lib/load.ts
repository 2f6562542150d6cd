import autocannon, { type Instance, type Result } from 'autocannon';
import { startCpuSample, type CpuTarget } from './cpu.ts';
import { latencySummary, round, Samples, statusCountsOf } from './stats.ts';

export interface LoadOptions {
  title: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  connections: number;
  /** Upper bound on the phase's length, seconds. */
  durationS: number;
  /** Upper bound on the phase's request count (the phase ends at whichever comes first). */
  maxRequests: number;
  pipelining?: number;
  /** Per-request timeout, seconds. */
  timeoutS?: number;
  /** Processes whose CPU use to report for the phase (this process is always reported as `loadgen`). */
  cpu?: CpuTarget[];
  signal?: AbortSignal;
  /** Called with each response's latency, ms (e.g. for a timeline). */
  onResponse?: (latencyMs: number) => void;
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface LoadSummary {
  title: string;
  url: string;
  connections: number;
  pipelining: number;
  /** Seconds the phase really lasted (as autocannon measured it). */
  durationS: number;
  /** 2xx responses completed in the phase. */
  requests2xx: number;
  /** 2xx responses per second over the phase. */
  rps: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  resets: number;
  statusCodes: Record<string, number>;
  /** Milliseconds, from every response's own timing (0.01 ms resolution, unlike autocannon's 1 ms histogram). */
  latencyMs: LatencySummary;
  /** autocannon's own figures, for reference. */
  autocannon: { requestsPerSecAverage: number; latencyP50Ms: number; latencyP99Ms: number; bytesPerSecAverage: number };
  /** % of one core per process over the phase; `loadgen` is the benchmark process itself. */
  cpuPercent: Record<string, number | null>;
  /**
   * CPU time per 2xx answer, microseconds, per process (same keys as cpuPercent). Less
   * sensitive than req/s to other work on the machine: a process that waits for a core
   * does not burn CPU meanwhile.
   */
  cpuUsPerRequest: Record<string, number | null>;
}

/**
 * One bounded load phase: `connections` keep-alive connections hammer `url` until
 * `durationS` has passed or `maxRequests` responses came back. Runs in this process;
 * the server under test must live in another one.
 */
export async function runLoad(opts: LoadOptions): Promise<LoadSummary> {
  opts.signal?.throwIfAborted();
  const latencies = new Samples();
  const pipelining = opts.pipelining ?? 1;
  const instance: Instance = autocannon({
    title: opts.title,
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    ...(opts.body !== undefined ? { body: opts.body } : {}),
    connections: opts.connections,
    pipelining,
    duration: opts.durationS,
    maxOverallRequests: opts.maxRequests,
    timeout: opts.timeoutS ?? 10,
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    opts.onResponse?.(responseTime);
  });

  const stop = (): void => instance.stop();
  opts.signal?.addEventListener('abort', stop, { once: true });
  // autocannon stops itself; this only guards against a phase that never ends.
  const watchdog = setTimeout(
    () => {
      console.error(`${opts.title}: still running ${opts.durationS + 30} s after start; stopping it`);
      instance.stop();
    },
    (opts.durationS + 30) * 1000,
  );
  const cpuStarted = process.hrtime.bigint();
  const cpu = startCpuSample(opts.cpu ?? []);
  let result: Result;
  try {
    result = await instance;
  } finally {
    clearTimeout(watchdog);
    opts.signal?.removeEventListener('abort', stop);
  }
  const cpuPercent = cpu.stop();
  const cpuWallS = Number(process.hrtime.bigint() - cpuStarted) / 1e9;
  const cpuUsPerRequest: Record<string, number | null> = {};
  for (const [name, pct] of Object.entries(cpuPercent)) {
    cpuUsPerRequest[name] =
      pct === null || result['2xx'] === 0 ? null : round(((pct / 100) * cpuWallS * 1e6) / result['2xx'], 1);
  }
  opts.signal?.throwIfAborted();

  const sorted = latencies.sorted();
  const statusCodes = statusCountsOf(result.statusCodeStats);

  return {
    title: opts.title,
    url: opts.url,
    connections: opts.connections,
    pipelining,
    durationS: result.duration,
    requests2xx: result['2xx'],
    rps: round(result.duration > 0 ? result['2xx'] / result.duration : 0, 1),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    resets: result.resets,
    statusCodes,
    latencyMs: latencySummary(sorted),
    autocannon: {
      requestsPerSecAverage: result.requests.average,
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      bytesPerSecAverage: result.throughput.average,
    },
    cpuPercent,
    cpuUsPerRequest,
  };
}

/** Why a phase's figures cannot be trusted (any error, timeout or non-2xx answer), or null. */
export function problemsOf(
  s: Pick<LoadSummary, 'title' | 'errors' | 'timeouts' | 'non2xx' | 'statusCodes' | 'requests2xx'>,
): string | null {
  const problems: string[] = [];
  if (s.errors > 0) problems.push(`${s.errors} connection errors (${s.timeouts} timeouts)`);
  if (s.non2xx > 0) problems.push(`${s.non2xx} non-2xx answers (${JSON.stringify(s.statusCodes)})`);
  if (s.requests2xx === 0) problems.push('no successful answers');
  return problems.length > 0 ? `${s.title}: ${problems.join(', ')}` : null;
}
