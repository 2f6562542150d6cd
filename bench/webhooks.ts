/**
 * Benchmark: outgoing webhooks. One `status_changed` event (PATCH /api/sessions as an
 * admin) fanned out by the real portal to 50 local HTTPS receivers, against a bare undici
 * loop posting the same signed payloads to the same receivers at the same concurrency
 * (50 in parallel per event); then the portal again with one receiver black-holed.
 *
 *   node bench/webhooks.ts [--rounds=5] [--duration=30] [--warmup=3] [--receivers=50] ...
 *
 * The defaults (5 rounds of 30 s phases, ~12 minutes) are what a verdict needs on a small
 * shared machine; `--rounds=3 --duration=10` (~4.5 minutes) is a quick look, noisier.
 *
 * Processes: the portal (embedded PostgreSQL), the receivers (bench/webhooks/receivers.ts:
 * one node HTTPS server per port, all in one child), the baseline sender
 * (bench/webhooks/baseline-sender.ts), and this process, which drives the PATCH loop.
 * Each round runs: baseline, portal, portal with the black hole (then waits until the
 * portal gave up on every black-holed delivery: 5 s + 0.5 s + 5 s each); the two portal
 * phases swap places every other round.
 * Results: a table, and JSON in bench/results/webhooks-<timestamp>.json. See bench/README.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { spawnNode, waitForHttp, type NodeChild } from './lib/children.ts';
import { cleanupAll, installSignalHandlers, interrupted, onCleanup } from './lib/cleanup.ts';
import { startCpuSample, waitForQuietMachine, type CpuTarget } from './lib/cpu.ts';
import { machineInfo } from './lib/machine.ts';
import { adminToken, startPortalProcess, type PortalProcess } from './lib/portal.ts';
import { freePort } from '@svc/test-support/ports';
import { RESULTS_DIR, stampOf, table, writeResult } from './lib/report.ts';
import { median, percentileSorted, round, Samples } from './lib/stats.ts';
import { createBenchCa, type BenchCa } from './webhooks/certs.ts';
import { openPgStats, perEvent, type PgCounters } from './webhooks/pg-stats.ts';
import {
  DONE_PREFIX,
  wallMs,
  type BaselineConfig,
  type BaselineRunRequest,
  type BaselineRunResult,
  type BlackHoleMode,
  type PhaseConfig,
  type ReceiversConfig,
  type ReceiversResult,
  type RequestSample,
} from './webhooks/shared.ts';

const HOST = '127.0.0.1';
const EVENT_TYPE = 'status_changed';
/** Each black-holed delivery: a 5 s attempt, 0.5 s pause, a 5 s retry. */
const BLACK_HOLE_GIVE_UP_MS = 10_500;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  rounds: number;
  durationS: number;
  warmupS: number;
  /** Warm-up with the black hole in place: at least one full give-up cycle, so failures are in steady state. */
  blackHoleWarmupS: number;
  maxEvents: number;
  receivers: number;
  inFlight: number;
  blackHoleMode: BlackHoleMode;
  timeoutS: number;
  quietWaitS: number;
  quietBusyPercent: number;
  verbose: boolean;
  profile: boolean;
}

const NUMERIC_FLAGS = {
  rounds: {
    env: 'BENCH_ROUNDS',
    fallback: 5,
    min: 1,
    max: 20,
    int: true,
    help: 'rounds of (baseline, portal, portal with black hole); medians are reported',
  },
  duration: {
    env: 'BENCH_DURATION',
    fallback: 30,
    min: 1,
    max: 600,
    int: false,
    help: 'measured seconds per phase (a phase ends at this or at --events)',
  },
  warmup: {
    env: 'BENCH_WARMUP',
    fallback: 3,
    min: 0,
    max: 120,
    int: false,
    help: 'warm-up seconds before each phase (not reported)',
  },
  'black-hole-warmup': {
    env: 'BENCH_BLACK_HOLE_WARMUP',
    fallback: 12,
    min: 0,
    max: 120,
    int: false,
    help: 'warm-up seconds of the black-hole phase (>= 10.5 s reaches steady state)',
  },
  events: { env: 'BENCH_EVENTS', fallback: 20_000, min: 1, max: 1_000_000, int: true, help: 'cap on events per phase' },
  receivers: {
    env: 'BENCH_RECEIVERS',
    fallback: 50,
    min: 2,
    max: 500,
    int: true,
    help: 'receivers (= subscriptions = deliveries per event)',
  },
  'in-flight': {
    env: 'BENCH_IN_FLIGHT',
    fallback: 1,
    min: 1,
    max: 64,
    int: true,
    help: 'events in flight at once (closed loop per slot)',
  },
  timeout: {
    env: 'BENCH_TIMEOUT',
    fallback: 1800,
    min: 30,
    max: 86_400,
    int: false,
    help: 'hard limit on the whole run, seconds',
  },
  'quiet-wait': {
    env: 'BENCH_QUIET_WAIT',
    fallback: 30,
    min: 0,
    max: 3600,
    int: false,
    help: 'wait up to N s for an idle machine before each phase (0 = off)',
  },
  'quiet-busy': {
    env: 'BENCH_QUIET_BUSY',
    fallback: 25,
    min: 1,
    max: 10_000,
    int: false,
    help: 'idle = machine busy <= this % of one core',
  },
} as const;

type NumericFlag = keyof typeof NUMERIC_FLAGS;

function usage(): string {
  const lines = Object.entries(NUMERIC_FLAGS).map(
    ([flag, s]) => `  --${flag}=N`.padEnd(26) + s.env.padEnd(26) + `${s.help} (default ${s.fallback})`,
  );
  return [
    'usage: node bench/webhooks.ts [flags]',
    '',
    '  flag'.padEnd(26) + 'env'.padEnd(26) + 'meaning',
    ...lines,
    '  --black-hole=http|tcp'.padEnd(26) +
      'BENCH_BLACK_HOLE'.padEnd(26) +
      'http: TLS + request accepted, never answered; tcp: TCP accepted, nothing sent (default http)',
    '  --verbose'.padEnd(26) + 'BENCH_VERBOSE=1'.padEnd(26) + "echo the portal's output",
    '  --profile'.padEnd(26) + 'BENCH_PROFILE=1'.padEnd(26) + 'CPU-profile the portal (slower; analysis only)',
    '  --help',
  ].join('\n');
}

class OptionsError extends Error {}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options | 'help' {
  const numeric = Object.fromEntries(Object.keys(NUMERIC_FLAGS).map((k) => [k, { type: 'string' as const }]));
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...numeric,
      'black-hole': { type: 'string' },
      verbose: { type: 'boolean' },
      profile: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const vals = values as Record<string, string | boolean | undefined>;
  if (vals['help'] === true) return 'help';
  const num = (flag: NumericFlag): number => {
    const s = NUMERIC_FLAGS[flag];
    const v = vals[flag];
    const raw = typeof v === 'string' ? v : env[s.env];
    if (raw === undefined || raw.trim() === '') return s.fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < s.min || n > s.max || (s.int && !Number.isInteger(n)))
      throw new OptionsError(
        `--${flag} / ${s.env} must be a ${s.int ? 'whole ' : ''}number between ${s.min} and ${s.max} (got "${raw}")`,
      );
    return n;
  };
  const bhRaw = vals['black-hole'];
  const blackHole = (typeof bhRaw === 'string' ? bhRaw : env['BENCH_BLACK_HOLE']) ?? 'http';
  if (blackHole !== 'http' && blackHole !== 'tcp')
    throw new OptionsError(`--black-hole must be http or tcp (got "${blackHole}")`);
  const flag = (name: 'verbose' | 'profile', envName: string): boolean => {
    const v = vals[name];
    return typeof v === 'boolean' ? v : ['1', 'true', 'yes'].includes((env[envName] ?? '').toLowerCase());
  };
  return {
    rounds: num('rounds'),
    durationS: num('duration'),
    warmupS: num('warmup'),
    blackHoleWarmupS: num('black-hole-warmup'),
    maxEvents: num('events'),
    receivers: num('receivers'),
    inFlight: num('in-flight'),
    blackHoleMode: blackHole,
    timeoutS: num('timeout'),
    quietWaitS: num('quiet-wait'),
    quietBusyPercent: num('quiet-busy'),
    verbose: flag('verbose', 'BENCH_VERBOSE'),
    profile: flag('profile', 'BENCH_PROFILE'),
  };
}

// ---------------------------------------------------------------------------------------
// Small helpers

function log(message: string): void {
  console.log(message);
}

/** Aborted on SIGINT/SIGTERM (bench/lib/cleanup.ts) or at the hard timeout. */
const hardStop = new AbortController();
const stopSignal = AbortSignal.any([interrupted, hardStop.signal]);

function within(ms: number): AbortSignal {
  return AbortSignal.any([stopSignal, AbortSignal.timeout(ms)]);
}

async function callJson<T>(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<T> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? null : JSON.stringify(init.body),
    signal: within(init.timeoutMs ?? 30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

interface Dist {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function dist(samples: Samples): Dist {
  const s = samples.sorted();
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    mean: round(s.length ? sum / s.length : Number.NaN, 3),
    p50: round(percentileSorted(s, 50), 3),
    p90: round(percentileSorted(s, 90), 3),
    p99: round(percentileSorted(s, 99), 3),
    max: round(s.length ? (s[s.length - 1] as number) : Number.NaN, 3),
  };
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', ...extra };
  if (process.env['NODE_OPTIONS'] !== undefined) env['NODE_OPTIONS'] = process.env['NODE_OPTIONS'];
  return env;
}

const f2 = (n: number | null | undefined): string =>
  n === null || n === undefined || Number.isNaN(n) ? '-' : n.toFixed(2);
const pctCell = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : `${v.toFixed(0)}%`);

// ---------------------------------------------------------------------------------------
// The receivers child

interface Receivers {
  child: NodeChild;
  control: string;
  ports: number[];
  urls: string[];
  setPhase(p: PhaseConfig): Promise<void>;
  result(): Promise<ReceiversResult>;
  /** Resolves when the receivers announce the next completed event of `sessionId`. */
  waitDone(sessionId: string, timeoutMs: number): { done: Promise<{ eventId: string; at: number }>; cancel(): void };
}

async function startReceivers(ca: BenchCa, count: number): Promise<Receivers> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort(HOST));
  const controlPort = await freePort(HOST);
  const config: ReceiversConfig = { host: HOST, ports, controlPort, keyPem: ca.keyPem, certPem: ca.certPem };
  const script = fileURLToPath(new URL('./webhooks/receivers.ts', import.meta.url));
  const child = spawnNode(script, {
    name: 'receivers',
    env: childEnv({ BENCH_RECEIVERS_CONFIG: JSON.stringify(config) }),
    echo: false,
  });
  const control = `http://${HOST}:${controlPort}`;

  const waiters = new Map<string, (d: { eventId: string; at: number }) => void>();
  let partial = '';
  child.process.stdout?.on('data', (chunk: string | Buffer) => {
    const at = wallMs();
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      if (!line.startsWith(DONE_PREFIX)) continue;
      const [eventId = '', sessionId = ''] = line.slice(DONE_PREFIX.length).split(' ');
      const w = waiters.get(sessionId);
      if (w) {
        waiters.delete(sessionId);
        w({ eventId, at });
      }
    }
  });

  await waitForHttp(`${control}/health`, { timeoutMs: 15_000, child, signal: stopSignal });
  return {
    child,
    control,
    ports,
    urls: ports.map((p, i) => `https://${HOST}:${p}/hook/${i}`),
    setPhase: async (p) => {
      await callJson(`${control}/phase`, { body: p });
    },
    result: () => callJson<ReceiversResult>(`${control}/result`, { timeoutMs: 60_000 }),
    waitDone(sessionId, timeoutMs) {
      let cancel = (): void => undefined;
      const done = new Promise<{ eventId: string; at: number }>((resolve, reject) => {
        const fail = (why: Error): void => {
          waiters.delete(sessionId);
          clearTimeout(timer);
          stopSignal.removeEventListener('abort', onAbort);
          reject(why);
        };
        const onAbort = (): void => fail(stopSignal.reason instanceof Error ? stopSignal.reason : new Error('stopped'));
        const timer = setTimeout(
          () =>
            fail(
              new Error(
                `the receivers did not all get the event for session ${sessionId} within ${timeoutMs} ms (receivers: ${child.hasExited() ? 'exited' : 'running'})`,
              ),
            ),
          timeoutMs,
        );
        stopSignal.addEventListener('abort', onAbort, { once: true });
        waiters.set(sessionId, (d) => {
          clearTimeout(timer);
          stopSignal.removeEventListener('abort', onAbort);
          resolve(d);
        });
        cancel = () => {
          waiters.delete(sessionId);
          clearTimeout(timer);
          stopSignal.removeEventListener('abort', onAbort);
          resolve({ eventId: '', at: Number.NaN });
        };
      });
      return { done, cancel: () => cancel() };
    },
  };
}

// ---------------------------------------------------------------------------------------
// The baseline sender child

interface Sender {
  child: NodeChild;
  run(r: BaselineRunRequest): Promise<BaselineRunResult>;
}

async function startSender(ca: BenchCa, urls: string[], secrets: string[]): Promise<Sender> {
  const controlPort = await freePort(HOST);
  const config: BaselineConfig = { host: HOST, controlPort, caPem: ca.caPem, urls, secrets };
  const script = fileURLToPath(new URL('./webhooks/baseline-sender.ts', import.meta.url));
  const child = spawnNode(script, {
    name: 'baseline sender',
    env: childEnv({ BENCH_BASELINE_SENDER_CONFIG: JSON.stringify(config) }),
    echo: false,
  });
  const control = `http://${HOST}:${controlPort}`;
  await waitForHttp(`${control}/health`, { timeoutMs: 15_000, child, signal: stopSignal });
  return {
    child,
    run: (r) => callJson<BaselineRunResult>(`${control}/run`, { body: r, timeoutMs: r.durationMs + 60_000 }),
  };
}

// ---------------------------------------------------------------------------------------
// The portal: sessions, subscriptions, the PATCH loop

interface PortalSide {
  portal: PortalProcess;
  token: string;
  sessions: string[];
  /** Current status per session (the loop alternates in_review / resolved). */
  status: string[];
  subscriptions: { id: string; secret: string }[];
  agent: Agent;
}

async function uploadSession(portal: PortalProcess, key: string, sessionId: string): Promise<void> {
  const doc = {
    metadata: { session_id: sessionId, target: '10.20.0.0/24', client: 'Bench Client' },
    findings: [{ title: 'SSH allows password authentication', severity: 'high', host: '10.20.0.10', port: 22 }],
  };
  const form = new FormData();
  form.append('session_json', new Blob([JSON.stringify(doc)], { type: 'application/json' }), 'session_results.json');
  const res = await fetch(`${portal.url}/api/upload`, {
    method: 'POST',
    headers: { 'x-api-key': key },
    body: form,
    signal: within(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST /api/upload: HTTP ${res.status} ${text.slice(0, 300)}`);
}

async function createSubscription(
  portal: PortalProcess,
  token: string,
  url: string,
  i: number,
): Promise<{ id: string; secret: string }> {
  const body = await callJson<{ subscription: { id: string; signing_secret: string } }>(`${portal.url}/api/webhooks`, {
    headers: { 'x-identity-token': token },
    body: { url, event_types: [EVENT_TYPE], description: `bench receiver ${i}` },
  });
  return { id: body.subscription.id, secret: body.subscription.signing_secret };
}

interface PortalEvent {
  eventId: string;
  /** Wall ms when the PATCH was sent. */
  sendAt: number;
  patchMs: number;
  /** Wall ms when this process learnt that every counted receiver had it. */
  doneAt: number;
}

interface PortalRun {
  startedAt: number;
  finishedAt: number;
  events: PortalEvent[];
}

/** Closed loop: each slot PATCHes its session, waits until the receivers have the event, repeats. */
async function runPortalLoop(
  side: PortalSide,
  receivers: Receivers,
  durationMs: number,
  maxEvents: number,
  inFlight: number,
): Promise<PortalRun> {
  const events: PortalEvent[] = [];
  const deadline = performance.now() + durationMs;
  let issued = 0;
  const startedAt = wallMs();
  const slot = async (k: number): Promise<void> => {
    const sessionId = side.sessions[k] as string;
    while (issued < maxEvents && performance.now() < deadline) {
      stopSignal.throwIfAborted();
      issued++;
      const next = side.status[k] === 'in_review' ? 'resolved' : 'in_review';
      const waiter = receivers.waitDone(sessionId, 30_000);
      const sendAt = wallMs();
      const t0 = performance.now();
      let patchMs: number;
      try {
        const res = await request(`${side.portal.url}/api/sessions?session=${sessionId}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', 'x-identity-token': side.token },
          body: JSON.stringify({ status: next }),
          dispatcher: side.agent,
          signal: within(30_000),
        });
        const text = await res.body.text();
        patchMs = performance.now() - t0;
        if (res.statusCode !== 200)
          throw new Error(`PATCH /api/sessions: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
        if ((JSON.parse(text) as { changed?: unknown }).changed !== true)
          throw new Error(`PATCH /api/sessions: the status did not change (${text.slice(0, 200)})`);
      } catch (err) {
        waiter.cancel();
        throw err;
      }
      side.status[k] = next;
      const d = await waiter.done;
      events.push({ eventId: d.eventId, sendAt, patchMs, doneAt: d.at });
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, k) => slot(k)));
  const last = events.reduce((m, e) => Math.max(m, e.doneAt), startedAt);
  return { startedAt, finishedAt: last, events };
}

/** Wait until the portal has given up on every delivery to the black-holed subscription. */
async function drainBlackHole(
  side: PortalSide,
  subscriptionId: string,
  lastEventAt: number,
): Promise<{ waitedMs: number; pendingLeft: number }> {
  const t0 = Date.now();
  const floor = lastEventAt + BLACK_HOLE_GIVE_UP_MS + 500;
  const deadline = Date.now() + BLACK_HOLE_GIVE_UP_MS * 3 + 30_000;
  let pending = -1;
  while (Date.now() < deadline) {
    stopSignal.throwIfAborted();
    if (Date.now() >= floor) {
      const body = await callJson<{ deliveries: { status: string }[] }>(
        `${side.portal.url}/api/webhooks/deliveries?id=${subscriptionId}&limit=500`,
        { headers: { 'x-identity-token': side.token } },
      );
      pending = body.deliveries.filter((d) => d.status === 'pending').length;
      if (pending === 0) break;
    }
    await sleep(500, undefined, { signal: stopSignal });
  }
  return { waitedMs: Date.now() - t0, pendingLeft: pending };
}

// ---------------------------------------------------------------------------------------
// Figures of one phase

type Kind = 'baseline' | 'portal' | 'portal+blackhole';

interface PhaseFigures {
  kind: Kind;
  round: number;
  events: number;
  durationS: number;
  eventsPerS: number;
  deliveriesPerS: number;
  /** Event creation (envelope timestamp) → arrival, every counted receiver. */
  latencyMs: Dist;
  /** The same over the receivers that are not the black hole in any phase (the fair comparison). */
  othersLatencyMs: Dist;
  /** Event creation → the last counted receiver has it. */
  fanoutMs: Dist;
  /** PATCH sent → arrival (portal only). */
  fromTriggerMs: Dist | null;
  /** PATCH round trip (portal only). */
  patchMs: Dist | null;
  missing: number;
  duplicates: number;
  malformed: number;
  blackHoleRequests: number;
  blackHoleConnections: number;
  signaturesOk: number;
  signaturesBad: number;
  senderFailures: number;
  drain: { waitedMs: number; pendingLeft: number } | null;
  /** PostgreSQL work per event over the phase (approximate; portal phases only). */
  pgPerEvent: PgCounters | null;
  cpuPercent: Record<string, number | null>;
  machineBusyBeforePercent: number | null;
  sample: Omit<RequestSample, 'body' | 'headers'> | null;
}

function figures(
  kind: Kind,
  roundNo: number,
  rx: ReceiversResult,
  run: { startedAt: number; finishedAt: number; events: number },
  opts: {
    blackHole: number | null;
    othersExclude: number;
    portal: PortalEvent[] | null;
    senderFailures: number;
    cpu: Record<string, number | null>;
    busy: number | null;
  },
): PhaseFigures {
  const latency = new Samples();
  const others = new Samples();
  const fanout = new Samples();
  const fromTrigger = new Samples();
  const patch = new Samples();
  const sentAt = new Map<string, number>();
  for (const e of opts.portal ?? []) {
    sentAt.set(e.eventId, e.sendAt);
    patch.push(e.patchMs);
  }
  let missing = 0;
  for (const e of rx.events) {
    let last = Number.NEGATIVE_INFINITY;
    const sent = sentAt.get(e.id);
    e.arrivals.forEach((a, i) => {
      if (i === opts.blackHole) return;
      if (a === null) {
        missing++;
        return;
      }
      latency.push(a - e.ts);
      if (i !== opts.othersExclude) others.push(a - e.ts);
      if (sent !== undefined) fromTrigger.push(a - sent);
      last = Math.max(last, a);
    });
    if (last > Number.NEGATIVE_INFINITY) fanout.push(last - e.ts);
  }
  // Events the sender sent that no receiver saw at all.
  const counted = rx.events.length > 0 ? (rx.events[0]?.arrivals.length ?? 0) - (opts.blackHole === null ? 0 : 1) : 0;
  if (run.events > rx.events.length) missing += (run.events - rx.events.length) * counted;
  const durationS = (run.finishedAt - run.startedAt) / 1000;
  const receivers = rx.events[0]?.arrivals.length ?? 0;
  const eventsPerS = durationS > 0 ? run.events / durationS : 0;
  const sample =
    rx.sample === null
      ? null
      : {
          receiver: rx.sample.receiver,
          headerNames: rx.sample.headerNames,
          headerBytes: rx.sample.headerBytes,
          bodyBytes: rx.sample.bodyBytes,
        };
  return {
    kind,
    round: roundNo,
    events: run.events,
    durationS: round(durationS, 3),
    eventsPerS: round(eventsPerS, 2),
    deliveriesPerS: round(eventsPerS * receivers, 1),
    latencyMs: dist(latency),
    othersLatencyMs: dist(others),
    fanoutMs: dist(fanout),
    fromTriggerMs: opts.portal ? dist(fromTrigger) : null,
    patchMs: opts.portal ? dist(patch) : null,
    missing,
    duplicates: rx.duplicates,
    malformed: rx.malformed,
    blackHoleRequests: rx.blackHoleRequests,
    blackHoleConnections: rx.blackHoleConnections,
    signaturesOk: rx.signaturesOk,
    signaturesBad: rx.signaturesBad,
    senderFailures: opts.senderFailures,
    drain: null,
    pgPerEvent: null,
    cpuPercent: opts.cpu,
    machineBusyBeforePercent: opts.busy,
    sample,
  };
}

function problems(f: PhaseFigures): string | null {
  const p: string[] = [];
  if (f.events === 0) p.push('no events');
  if (f.missing > 0) p.push(`${f.missing} deliveries never arrived`);
  if (f.malformed > 0) p.push(`${f.malformed} malformed bodies`);
  if (f.signaturesBad > 0) p.push(`${f.signaturesBad} bad signatures`);
  if (f.senderFailures > 0) p.push(`${f.senderFailures} failed posts`);
  return p.length ? `${f.kind} #${f.round}: ${p.join(', ')}` : null;
}

// ---------------------------------------------------------------------------------------
// The run

/**
 * What one tls.connect() with a `ca` option costs before any byte is sent: Node builds a
 * new SecureContext from the PEM list each time. Measured in this process, ms per context.
 */
function secureContextCost(caPem: string): { withPublicRoots: number; caOnly: number } {
  const time = (ca: string[], reps: number): number => {
    tls.createSecureContext({ ca });
    const t = performance.now();
    for (let i = 0; i < reps; i++) tls.createSecureContext({ ca });
    return round((performance.now() - t) / reps, 3);
  };
  return { withPublicRoots: time([...tls.rootCertificates, caPem], 20), caOnly: time([caPem], 200) };
}

async function run(opts: Options): Promise<void> {
  const started = new Date();
  const machine = machineInfo();
  const loadAtStart = os.loadavg().map((v) => round(v, 2));
  const n = opts.receivers;
  const blackHoleIndex = n - 1;
  log(
    `webhooks benchmark: one ${EVENT_TYPE} event to ${n} local HTTPS receivers, ${opts.inFlight} event(s) in flight, ${opts.warmupS} s warm-up + ${opts.durationS} s per phase ` +
      `(at most ${opts.maxEvents} events), ${opts.rounds} round(s) of baseline, portal, portal with receiver #${blackHoleIndex} black-holed (${opts.blackHoleMode}; warm-up ${opts.blackHoleWarmupS} s)`,
  );
  log(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, ${machine.platform}, load average ${loadAtStart.join(' ')}`,
  );

  const ca = await createBenchCa();
  const tlsContextMs = secureContextCost(ca.caPem);
  log(
    `one TLS client context: ${tlsContextMs.withPublicRoots.toFixed(2)} ms with Node's ${tls.rootCertificates.length} public roots + the bench CA (what the portal builds per new connection), ` +
      `${tlsContextMs.caOnly.toFixed(3)} ms with the bench CA only (the baseline)`,
  );
  const receivers = await startReceivers(ca, n);
  log(
    `receivers up: ${n} HTTPS servers on 127.0.0.1 ports ${receivers.ports[0]}..${receivers.ports[n - 1]} (pid ${receivers.child.pid})`,
  );

  const uploadKey = `bench-legacy-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const profileDir = path.join(RESULTS_DIR, `webhooks-${stampOf(started)}-profile`);
  if (opts.profile)
    log(`profiling the portal into ${profileDir}: its figures are slowed by the profiler, do not report them`);
  log('starting the portal (embedded PostgreSQL in a fresh temp dir) ...');
  const t0 = Date.now();
  const portal = await startPortalProcess({
    echo: opts.verbose,
    env: {
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      SVC_WEBHOOK_CA_FILE: ca.caFile,
      SVC_WEBHOOK_DISABLE_AFTER: '100000',
      SVC_UPLOAD_API_KEY: uploadKey,
    },
    nodeArgs: opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
  });
  log(
    `portal up at ${portal.url} (pid ${portal.child.pid}, PostgreSQL on port ${portal.pgPort}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );

  const token = await adminToken(portal);
  const pgStats = await openPgStats(portal);
  const sessions: string[] = [];
  for (let k = 0; k < opts.inFlight; k++) {
    const id = `20250301_140512_${Math.random().toString(16).slice(2, 12).padEnd(10, '0')}`;
    await uploadSession(portal, uploadKey, id);
    sessions.push(id);
  }
  const subscriptions: { id: string; secret: string }[] = [];
  for (let i = 0; i < n; i++)
    subscriptions.push(await createSubscription(portal, token, receivers.urls[i] as string, i));
  const agent = new Agent({ connections: opts.inFlight, keepAliveTimeout: 60_000 });
  onCleanup('close the PATCH client', () => agent.close());
  const side: PortalSide = { portal, token, sessions, status: sessions.map(() => 'new'), subscriptions, agent };
  await callJson(`${receivers.control}/secrets`, { body: { secrets: subscriptions.map((s) => s.secret) } });
  log(`${sessions.length} session(s) uploaded, ${n} subscriptions to ${EVENT_TYPE} created`);

  // Capture what the portal sends, so the baseline sends the same bytes (the `data` of the event).
  // The first change of each session starts from `new`; from then on every event carries
  // in_review/resolved (the same length either way), so the sample comes from the second.
  await receivers.setPhase({
    name: 'first change',
    expected: n,
    blackHole: null,
    blackHoleMode: opts.blackHoleMode,
    notify: true,
  });
  await runPortalLoop(side, receivers, 60_000, opts.inFlight, opts.inFlight);
  await receivers.setPhase({
    name: 'capture',
    expected: n,
    blackHole: null,
    blackHoleMode: opts.blackHoleMode,
    notify: true,
  });
  await runPortalLoop(side, receivers, 60_000, opts.inFlight, opts.inFlight);
  const captured = await receivers.result();
  if (captured.sample === null || captured.signaturesBad > 0 || captured.signaturesOk !== n) {
    throw new Error(
      `capture: expected ${n} good signatures, got ${captured.signaturesOk} good and ${captured.signaturesBad} bad`,
    );
  }
  const envelope = JSON.parse(captured.sample.body) as {
    event_type: string;
    data: { session_id?: string; previous_status?: string };
  };
  log(
    `captured one delivery: ${captured.sample.bodyBytes} body bytes, ${captured.sample.headerBytes} header bytes (${captured.sample.headerNames.join(', ')})`,
  );

  const sender = await startSender(
    ca,
    receivers.urls,
    subscriptions.map((s) => s.secret),
  );
  log(`baseline sender up (pid ${sender.child.pid})`);

  const cpuTargets: CpuTarget[] = [
    { name: 'portal', pid: () => portal.child.pid },
    { name: 'postgres', pid: () => portal.postmasterPid(), withChildren: true },
    { name: 'receivers', pid: () => receivers.child.pid },
    { name: 'sender', pid: () => sender.child.pid },
  ];

  const quiet = async (label: string): Promise<number | null> => {
    if (opts.quietWaitS <= 0) return null;
    const q = await waitForQuietMachine({
      maxBusyPercent: opts.quietBusyPercent,
      timeoutMs: opts.quietWaitS * 1000,
      signal: stopSignal,
    });
    if (q.busyPercent !== null && q.busyPercent > opts.quietBusyPercent)
      log(
        `  (the machine is still busy: ${q.busyPercent}% of a core used after ${Math.round(q.waitedMs / 1000)} s; running ${label} anyway)`,
      );
    return q.busyPercent;
  };

  const baselinePhase = async (roundNo: number): Promise<PhaseFigures> => {
    const label = `baseline #${roundNo}`;
    const busy = await quiet(label);
    const common = { inFlight: opts.inFlight, eventType: envelope.event_type, data: envelope.data };
    if (opts.warmupS > 0) {
      await receivers.setPhase({
        name: `${label} warm-up`,
        expected: n,
        blackHole: null,
        blackHoleMode: opts.blackHoleMode,
        notify: false,
      });
      const w = await sender.run({ ...common, durationMs: opts.warmupS * 1000, maxEvents: opts.maxEvents });
      if (w.failures > 0) throw new Error(`${label} warm-up: ${w.failures} failed posts (${w.firstError})`);
    }
    await receivers.setPhase({
      name: label,
      expected: n,
      blackHole: null,
      blackHoleMode: opts.blackHoleMode,
      notify: false,
    });
    const cpu = startCpuSample(cpuTargets);
    const r = await sender.run({ ...common, durationMs: opts.durationS * 1000, maxEvents: opts.maxEvents });
    const cpuPercent = cpu.stop();
    const rx = await receivers.result();
    return figures('baseline', roundNo, rx, r, {
      blackHole: null,
      othersExclude: blackHoleIndex,
      portal: null,
      senderFailures: r.failures,
      cpu: cpuPercent,
      busy,
    });
  };

  const portalPhase = async (roundNo: number, withBlackHole: boolean): Promise<PhaseFigures> => {
    const kind: Kind = withBlackHole ? 'portal+blackhole' : 'portal';
    const label = `${kind} #${roundNo}`;
    const busy = await quiet(label);
    const bh = withBlackHole ? blackHoleIndex : null;
    const phase = (name: string): PhaseConfig => ({
      name,
      expected: withBlackHole ? n - 1 : n,
      blackHole: bh,
      blackHoleMode: opts.blackHoleMode,
      notify: true,
    });
    const warmupS = withBlackHole ? Math.max(opts.warmupS, opts.blackHoleWarmupS) : opts.warmupS;
    if (withBlackHole || warmupS > 0) {
      // The black hole is switched on here, so the warm-up fills the portal with black-holed deliveries up to steady state.
      await receivers.setPhase(phase(`${label} warm-up`));
      if (warmupS > 0) await runPortalLoop(side, receivers, warmupS * 1000, opts.maxEvents, opts.inFlight);
    }
    // Same black hole, fresh records (the receivers keep what the black hole holds when it stays the same).
    await receivers.setPhase(phase(label));
    const pg0 = await pgStats.snapshot();
    const cpu = startCpuSample(cpuTargets);
    const r = await runPortalLoop(side, receivers, opts.durationS * 1000, opts.maxEvents, opts.inFlight);
    const cpuPercent = cpu.stop();
    const pg1 = await pgStats.snapshot();
    const rx = await receivers.result();
    const fig = figures(
      kind,
      roundNo,
      rx,
      { startedAt: r.startedAt, finishedAt: r.finishedAt, events: r.events.length },
      { blackHole: bh, othersExclude: blackHoleIndex, portal: r.events, senderFailures: 0, cpu: cpuPercent, busy },
    );
    fig.pgPerEvent = perEvent(pg0, pg1, r.events.length);
    if (withBlackHole) {
      const sub = subscriptions[blackHoleIndex] as { id: string };
      log(
        `  ${label}: waiting until the portal has given up on every black-holed delivery (5 s + 0.5 s + 5 s each) ...`,
      );
      fig.drain = await drainBlackHole(side, sub.id, r.finishedAt);
      if (fig.drain.pendingLeft !== 0)
        log(
          `  warning: ${fig.drain.pendingLeft} black-holed deliveries still pending after ${(fig.drain.waitedMs / 1000).toFixed(1)} s`,
        );
      await receivers.setPhase({
        name: 'idle',
        expected: n,
        blackHole: null,
        blackHoleMode: opts.blackHoleMode,
        notify: false,
      });
    }
    return fig;
  };

  const runs: PhaseFigures[] = [];
  const rows: (string | number)[][] = [
    [
      'run',
      'events',
      'events/s',
      'deliv/s',
      'p50 ms',
      'p99 ms',
      'p99 others',
      'fan-out p50',
      'PATCH p50',
      'PATCH p99',
      'portal CPU',
      'pg CPU',
      'recv CPU',
      'sender CPU',
      'bench CPU',
      'other CPU',
    ],
  ];
  const report = (f: PhaseFigures): void => {
    const c = f.cpuPercent;
    log(
      `  ${`${f.kind} #${f.round}`.padEnd(20)} ${f.eventsPerS.toFixed(1).padStart(7)} events/s (${f.deliveriesPerS.toFixed(0)} deliveries/s, ${f.events} events)  ` +
        `latency p50 ${f2(f.latencyMs.p50)} p99 ${f2(f.latencyMs.p99)} ms` +
        (f.patchMs ? `  PATCH p50 ${f2(f.patchMs.p50)} p99 ${f2(f.patchMs.p99)} ms` : '') +
        `  (CPU portal ${pctCell(c['portal'])}, pg ${pctCell(c['postgres'])}, receivers ${pctCell(c['receivers'])}, sender ${pctCell(c['sender'])}, other ${pctCell(c['other'])})` +
        (f.kind === 'portal+blackhole'
          ? `; the black hole took ${f.blackHoleConnections} connections and swallowed ${f.blackHoleRequests} requests`
          : '') +
        (f.pgPerEvent
          ? `; PostgreSQL per event ≈ ${f.pgPerEvent.commits} commits, ${f.pgPerEvent.walSyncs} WAL syncs`
          : ''),
    );
    rows.push([
      `${f.kind} #${f.round}`,
      f.events,
      f.eventsPerS.toFixed(1),
      f.deliveriesPerS.toFixed(0),
      f2(f.latencyMs.p50),
      f2(f.latencyMs.p99),
      f2(f.othersLatencyMs.p99),
      f2(f.fanoutMs.p50),
      f2(f.patchMs?.p50),
      f2(f.patchMs?.p99),
      pctCell(c['portal']),
      pctCell(c['postgres']),
      pctCell(c['receivers']),
      pctCell(c['sender']),
      pctCell(c['loadgen']),
      pctCell(c['other']),
    ]);
  };

  for (let r = 1; r <= opts.rounds; r++) {
    // The two portal phases swap places every other round, so a machine that drifts faster
    // or slower during a round does not always favour the same one (the baseline, the
    // reference of both, stays first).
    const portalPhases = [() => portalPhase(r, false), () => portalPhase(r, true)];
    if (r % 2 === 0) portalPhases.reverse();
    for (const phase of [() => baselinePhase(r), ...portalPhases]) {
      const f = await phase();
      const problem = problems(f);
      if (problem) throw new Error(problem);
      runs.push(f);
      report(f);
    }
  }

  // Medians over rounds.
  const summarize = (kind: Kind) => {
    const rs = runs.filter((f) => f.kind === kind);
    const m = (pick: (f: PhaseFigures) => number | undefined): number =>
      round(median(rs.map(pick).filter((v): v is number => v !== undefined && !Number.isNaN(v))), 3);
    return {
      runs: rs.length,
      eventsPerS: m((f) => f.eventsPerS),
      deliveriesPerS: m((f) => f.deliveriesPerS),
      latencyP50Ms: m((f) => f.latencyMs.p50),
      latencyP99Ms: m((f) => f.latencyMs.p99),
      othersP50Ms: m((f) => f.othersLatencyMs.p50),
      othersP99Ms: m((f) => f.othersLatencyMs.p99),
      fanoutP50Ms: m((f) => f.fanoutMs.p50),
      fanoutP99Ms: m((f) => f.fanoutMs.p99),
      fromTriggerP50Ms: m((f) => f.fromTriggerMs?.p50),
      fromTriggerP99Ms: m((f) => f.fromTriggerMs?.p99),
      patchP50Ms: m((f) => f.patchMs?.p50),
      patchP99Ms: m((f) => f.patchMs?.p99),
      portalCpuMsPerEvent: m(
        (f) => (((f.cpuPercent['portal'] ?? Number.NaN) / 100) * 1e3) / (f.eventsPerS || Number.NaN),
      ),
      postgresCpuMsPerEvent: m(
        (f) => (((f.cpuPercent['postgres'] ?? Number.NaN) / 100) * 1e3) / (f.eventsPerS || Number.NaN),
      ),
      portalCpuUsPerDelivery: m(
        (f) => (((f.cpuPercent['portal'] ?? Number.NaN) / 100) * 1e6) / (f.deliveriesPerS || Number.NaN),
      ),
      postgresCpuUsPerDelivery: m(
        (f) => (((f.cpuPercent['postgres'] ?? Number.NaN) / 100) * 1e6) / (f.deliveriesPerS || Number.NaN),
      ),
      senderCpuUsPerDelivery: m(
        (f) => (((f.cpuPercent['sender'] ?? Number.NaN) / 100) * 1e6) / (f.deliveriesPerS || Number.NaN),
      ),
    };
  };
  const baseline = summarize('baseline');
  const portalS = summarize('portal');
  const blackHole = summarize('portal+blackhole');
  const ratio = {
    /** The target: the fan-out of one event, from its creation to the last receiver, as a rate (1 event in flight). */
    fanOut: round(baseline.fanoutP50Ms / portalS.fanoutP50Ms, 3),
    /** End to end, the triggering PATCH included (the baseline makes none). */
    throughput: round(portalS.eventsPerS / baseline.eventsPerS, 3),
    latencyP50: round(portalS.latencyP50Ms / baseline.latencyP50Ms, 3),
    latencyP99: round(portalS.latencyP99Ms / baseline.latencyP99Ms, 3),
    blackHoleOthersP99: round(blackHole.othersP99Ms / portalS.othersP99Ms, 3),
    blackHoleOthersP50: round(blackHole.othersP50Ms / portalS.othersP50Ms, 3),
    blackHolePatchP50: round(blackHole.patchP50Ms / portalS.patchP50Ms, 3),
    blackHolePatchP99: round(blackHole.patchP99Ms / portalS.patchP99Ms, 3),
    blackHoleThroughput: round(blackHole.eventsPerS / portalS.eventsPerS, 3),
  };
  const undrained = runs.filter((f) => f.drain !== null && f.drain.pendingLeft !== 0);
  const targets = {
    fanOutAtLeastHalf: ratio.fanOut >= 0.5,
    /** Every black-holed delivery was given up within the documented 5 s + 0.5 s + 5 s (plus the drain's margin). */
    blackHoleDeliveriesBounded: undrained.length === 0,
    othersP99Within125: ratio.blackHoleOthersP99 <= 1.25,
    patchUnchangedWithin125: ratio.blackHolePatchP50 <= 1.25 && ratio.blackHolePatchP99 <= 1.25,
  };
  const portalSample = runs.find((f) => f.kind === 'portal')?.sample ?? null;
  const baselineSample = runs.find((f) => f.kind === 'baseline')?.sample ?? null;
  const sameWire = {
    headerNames:
      portalSample !== null &&
      baselineSample !== null &&
      JSON.stringify(portalSample.headerNames) === JSON.stringify(baselineSample.headerNames),
    portal: portalSample,
    baseline: baselineSample,
  };

  log('');
  log(
    `CPU is in % of one core (the machine has ${machine.cpus}); "bench" is this process (the PATCH loop), "other" everything else on the machine.`,
  );
  log(
    'Latencies: event creation (the envelope timestamp) → the request body has arrived at the receiver; "others" leaves out the receiver that is black-holed in the third phase.',
  );
  log(table(rows));
  log('');
  const sRows: (string | number)[][] = [
    [
      'median of runs',
      'events/s',
      'deliveries/s',
      'p50 ms',
      'p99 ms',
      'p99 others',
      'fan-out p50',
      'fan-out p99',
      'PATCH p50',
      'PATCH p99',
    ],
    [
      'baseline (bare undici)',
      baseline.eventsPerS.toFixed(1),
      baseline.deliveriesPerS.toFixed(0),
      f2(baseline.latencyP50Ms),
      f2(baseline.latencyP99Ms),
      f2(baseline.othersP99Ms),
      f2(baseline.fanoutP50Ms),
      f2(baseline.fanoutP99Ms),
      '-',
      '-',
    ],
    [
      'portal',
      portalS.eventsPerS.toFixed(1),
      portalS.deliveriesPerS.toFixed(0),
      f2(portalS.latencyP50Ms),
      f2(portalS.latencyP99Ms),
      f2(portalS.othersP99Ms),
      f2(portalS.fanoutP50Ms),
      f2(portalS.fanoutP99Ms),
      f2(portalS.patchP50Ms),
      f2(portalS.patchP99Ms),
    ],
    [
      'portal, 1 black hole',
      blackHole.eventsPerS.toFixed(1),
      blackHole.deliveriesPerS.toFixed(0),
      f2(blackHole.latencyP50Ms),
      f2(blackHole.latencyP99Ms),
      f2(blackHole.othersP99Ms),
      f2(blackHole.fanoutP50Ms),
      f2(blackHole.fanoutP99Ms),
      f2(blackHole.patchP50Ms),
      f2(blackHole.patchP99Ms),
    ],
  ];
  log(table(sRows));
  log('');
  // The issue's target compares the fan-out of one event with a bare loop posting the same
  // payloads: from the event's creation (inside the triggering request's statement) to the
  // last receiver having it, against the baseline's envelope timestamp to its last receiver.
  // The closed loop's end-to-end rate also carries the triggering PATCH, which the baseline
  // does not make; it is printed too, for what a caller of the API sees.
  log(
    `fan-out of one event (event created -> last receiver, p50): portal ${portalS.fanoutP50Ms.toFixed(2)} ms, baseline ${baseline.fanoutP50Ms.toFixed(2)} ms; rate ratio ${ratio.fanOut.toFixed(3)} (target >= 0.5: ${targets.fanOutAtLeastHalf ? 'met' : 'MISSED'})`,
  );
  log(
    `end to end, the triggering PATCH included (the baseline makes none): throughput ratio ${ratio.throughput.toFixed(3)}; latency p50 ${ratio.latencyP50.toFixed(2)}x, p99 ${ratio.latencyP99.toFixed(2)}x`,
  );
  log(
    `black hole: other receivers' p99 ${ratio.blackHoleOthersP99.toFixed(2)}x the fault-free run (target <= 1.25: ${targets.othersP99Within125 ? 'met' : 'MISSED'}); PATCH p50 ${ratio.blackHolePatchP50.toFixed(2)}x, p99 ${ratio.blackHolePatchP99.toFixed(2)}x (unchanged = within 1.25x: ${targets.patchUnchangedWithin125 ? 'yes' : 'NO'})`,
  );
  const pgFf = runs.filter((f) => f.kind === 'portal' && f.pgPerEvent !== null).map((f) => f.pgPerEvent as PgCounters);
  const pgBh = runs
    .filter((f) => f.kind === 'portal+blackhole' && f.pgPerEvent !== null)
    .map((f) => f.pgPerEvent as PgCounters);
  const pgMedian = (xs: PgCounters[], k: keyof PgCounters): string => f2(median(xs.map((x) => x[k])));
  log(
    `PostgreSQL per event (approximate): fault-free ${pgMedian(pgFf, 'commits')} commits, ${pgMedian(pgFf, 'inserted')} rows inserted, ${pgMedian(pgFf, 'updated')} updated, ${pgMedian(pgFf, 'walSyncs')} WAL syncs; ` +
      `with the black hole ${pgMedian(pgBh, 'commits')} commits, ${pgMedian(pgBh, 'walSyncs')} WAL syncs`,
  );
  log(
    `CPU per event (less sensitive to other work on the machine than the rates): portal ${f2(portalS.portalCpuMsPerEvent)} ms + PostgreSQL ${f2(portalS.postgresCpuMsPerEvent)} ms fault-free; ` +
      `${f2(blackHole.portalCpuMsPerEvent)} ms + ${f2(blackHole.postgresCpuMsPerEvent)} ms with the black hole`,
  );
  if (undrained.length > 0) {
    log(
      `black-holed deliveries NOT bounded: ${undrained.map((f) => `${f.drain?.pendingLeft} still pending ${((f.drain?.waitedMs ?? 0) / 1000).toFixed(0)} s after ${f.kind} #${f.round} ended`).join('; ')} ` +
        `(each should give up after ${BLACK_HOLE_GIVE_UP_MS / 1000} s; the black hole saw ${undrained.map((f) => f.blackHoleConnections).join('/')} connections in the measured phase)`,
    );
  }
  log(
    `CPU per delivery: portal ${f2(portalS.portalCpuUsPerDelivery)} µs + PostgreSQL ${f2(portalS.postgresCpuUsPerDelivery)} µs; baseline sender ${f2(baseline.senderCpuUsPerDelivery)} µs`,
  );
  log(
    `same wire traffic: header names ${sameWire.headerNames ? 'identical' : 'DIFFER'}; body ${portalSample?.bodyBytes} vs ${baselineSample?.bodyBytes} bytes; headers ${portalSample?.headerBytes} vs ${baselineSample?.headerBytes} bytes (portal vs baseline)`,
  );
  const contended = runs.filter((f) => (f.cpuPercent['other'] ?? 0) > opts.quietBusyPercent);
  if (contended.length > 0)
    log(
      `warning: ${contended.length} of ${runs.length} runs shared the machine with other work (other CPU > ${opts.quietBusyPercent}% of a core); their figures are less reliable.`,
    );

  const file = writeResult(
    'webhooks',
    {
      benchmark: 'webhooks',
      description: `one ${EVENT_TYPE} event (PATCH /api/sessions) fanned out by the portal to ${n} local HTTPS receivers vs a bare undici loop posting the same signed payloads; then with receiver #${blackHoleIndex} black-holed (${opts.blackHoleMode})`,
      startedAt: started.toISOString(),
      finishedAt: new Date().toISOString(),
      profiled: opts.profile,
      machine,
      loadAverage: { atStart: loadAtStart, atEnd: os.loadavg().map((v) => round(v, 2)) },
      options: opts,
      blackHoleIndex,
      tlsContextMs,
      captured: {
        bodyBytes: captured.sample.bodyBytes,
        headerBytes: captured.sample.headerBytes,
        headerNames: captured.sample.headerNames,
        envelopeExample: JSON.parse(captured.sample.body) as unknown,
      },
      sameWire,
      summary: { baseline, portal: portalS, portalWithBlackHole: blackHole, ratio, targets },
      runs,
    },
    started,
  );
  log(`result written to ${file}`);
  if (opts.profile) {
    await portal.stop();
    if (fs.existsSync(profileDir))
      for (const f of fs.readdirSync(profileDir))
        log(`portal CPU profile: ${path.join(profileDir, f)} (summary: node bench/lib/profile-summary.ts <file>)`);
  }
}

async function main(): Promise<number> {
  let opts: Options | 'help';
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    console.error(usage());
    return 2;
  }
  if (opts === 'help') {
    console.log(usage());
    return 0;
  }
  installSignalHandlers();
  const hardTimer = setTimeout(() => {
    console.error(`\nhard timeout: the run took longer than ${opts.timeoutS} s; stopping`);
    hardStop.abort(new Error(`hard timeout after ${opts.timeoutS} s`));
    // If something does not listen to the abort, clean up and leave anyway.
    setTimeout(() => {
      void cleanupAll().finally(() => process.exit(124));
    }, 60_000).unref();
  }, opts.timeoutS * 1000);
  hardTimer.unref();
  try {
    await run(opts);
    return 0;
  } catch (err) {
    if (interrupted.aborted) return 130;
    console.error('\nbenchmark failed:', err instanceof Error ? err.message : err);
    return hardStop.signal.aborted ? 124 : 1;
  } finally {
    clearTimeout(hardTimer);
    log(
      'cleaning up (stopping the portal, PostgreSQL, the receivers and the baseline sender; removing the temp dirs) ...',
    );
    const t = Date.now();
    await cleanupAll();
    log(`cleaned up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
}

process.exitCode = await main();
