/**
 * Where a request's CPU time goes, per hook and layer, from a V8 .cpuprofile of the portal
 * (`npm run bench -- --profile`). Each sample is charged to the innermost frame on its stack
 * that belongs to a named layer (our hooks, key check, logging, serialisation, Fastify ...): a
 * hook's own time is its own, what Fastify does after it (sending) is Fastify's. A sample whose
 * stack holds none of them is Node's (parsing, events, timers, microtasks). Samples before
 * the first `GET /api/license` answer (start-up, the admin calls) are left out.
 *
 *   node bench/lib/profile-layers.ts <file.cpuprofile> [server µs per answer, from the same run]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallFrame, CpuProfile, ProfileNode } from './profile-summary.ts';

const FASTIFY = 'Fastify core (hook runner, request/reply objects, send)';
const NODE = 'Node HTTP parsing, events, timers, microtasks';

/** A layer and what marks its frames. Earlier rules win when one frame matches several. */
const LAYERS: [string, (f: CallFrame) => boolean][] = [
  [
    'socket write (kernel, also in the baseline)',
    (f) => /^(writeUtf8String|writev|writeBuffer|writeLatin1String)$/.test(f.functionName),
  ],
  [
    'logging (pino, child loggers, access log)',
    (f) =>
      /\/(pino|@pinojs)\/|\/http\/access-log\.ts$|request-logger\.ts$/.test(f.url) ||
      /\/fastify\/lib\/logger-factory\.js$/.test(f.url),
  ],
  ['serialisation (fast-json-stringify)', (f) => /\/fast-json-stringify\//.test(f.url)],
  [
    'key check (hash, cache, throttle)',
    (f) =>
      /\/auth\/(api-keys|key-throttle|authenticate|guards|key-digests)\.ts$|\/licenses\/keys\.ts$|\/license-key\.ts$/.test(
        f.url,
      ),
  ],
  ['handler and answer (validationResult)', (f) => /\/api\/license\/get\.ts$|\/licenses\/present\.ts$/.test(f.url)],
  ['connection accounting (per address)', (f) => /\/http\/connections\.ts$/.test(f.url)],
  ['cache-control hook', (f) => /\/http\/cache-control\.ts$/.test(f.url)],
  ['compression hooks', (f) => /\/@fastify\/compress\/|\/http\/compression\.ts$/.test(f.url)],
  ['timeout hooks', (f) => /\/http\/timeouts\.ts$/.test(f.url)],
  [
    'input rules and Authorization hooks',
    (f) => /\/src\/app\.ts$|\/http\/(input-rules|credentials|edge-hooks)\.ts$/.test(f.url),
  ],
  ['handlers-in-flight accounting', (f) => /\/http\/handlers-in-flight\.ts$/.test(f.url)],
  ['metrics', (f) => /\/src\/metrics\/|\/prom-client\//.test(f.url)],
  ['request summary (periodic log)', (f) => /\/http\/request-summary\.ts$/.test(f.url)],
  ['routing (find-my-way)', (f) => /\/find-my-way\//.test(f.url)],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  [
    'Node: writing the answer (writeHead, end)',
    (f) => /\/fastify\/lib\/reply\.js$/.test(f.url) && /^(onSendEnd|writePayload)$/.test(f.functionName),
  ],
  [FASTIFY, (f) => /\/fastify\/(lib\/|fastify\.js)/.test(f.url)],
];

export interface LayerBreakdown {
  /** Busy (not idle) time after the first license answer, ms. */
  busyMs: number;
  layers: [string, number][];
}

export function layersOf(profile: CpuProfile): LayerBreakdown {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const layerOfNode = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    const known = layerOfNode.get(id);
    if (known !== undefined) return known;
    let found: string | null = null;
    for (let cur: number | undefined = id; cur !== undefined && found === null; cur = parent.get(cur)) {
      const f = byId.get(cur)?.callFrame;
      if (f === undefined) break;
      if (f.functionName === '(idle)') return null;
      found = LAYERS.find(([, match]) => match(f))?.[0] ?? null;
    }
    const layer = found ?? NODE;
    layerOfNode.set(id, layer);
    return layer;
  };
  const isLicenseHandler = (id: number): boolean => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      if (byId.get(cur)?.callFrame.url.endsWith('/api/license/get.ts')) return true;
    return false;
  };

  const totals = new Map<string, number>();
  let started = false;
  let busy = 0;
  for (const [i, id] of profile.samples.entries()) {
    if (!started) started = isLicenseHandler(id);
    if (!started) continue;
    const layer = classify(id);
    if (layer === null) continue;
    const us = profile.timeDeltas[i] ?? 0;
    busy += us;
    totals.set(layer, (totals.get(layer) ?? 0) + us);
  }
  const layers = [...totals.entries()].map(([k, v]): [string, number] => [k, v / 1000]).sort((a, b) => b[1] - a[1]);
  return { busyMs: busy / 1000, layers };
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/lib/profile-layers.ts <file.cpuprofile> [server µs per answer]');
    process.exit(2);
  }
  const perAnswer = process.argv[3] === undefined ? null : Number(process.argv[3]);
  const { busyMs, layers } = layersOf(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
  console.log(`${(busyMs / 1000).toFixed(1)} s busy after the first license answer\n`);
  for (const [layer, ms] of layers) {
    const share = ms / busyMs;
    const us = perAnswer === null ? '' : `  ${(share * perAnswer).toFixed(1).padStart(5)} µs`;
    console.log(`  ${(share * 100).toFixed(1).padStart(5)}%${us}  ${layer}`);
  }
}
