/**
 * Summarise a V8 .cpuprofile (from `node --cpu-prof`, e.g. `npm run bench -- --profile`):
 * where the CPU time went, by package and by function.
 *
 *   node bench/lib/profile-summary.ts <file.cpuprofile> [top=25]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The package (or area) a frame belongs to. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const pkg = /\/packages\/([^/]+)\/src\//.exec(url);
  if (pkg) return `@svc/${pkg[1]}`;
  if (url.startsWith('node:')) return 'node core';
  return url;
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time per area, ms. */
  byArea: [string, number][];
  /** Self time per function, ms. */
  bySelf: [string, number][];
  /** Inclusive time per function (each call stack counted once per function), ms. */
  byTotal: [string, number][];
}

export function summarizeProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const selfUs = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));

  const label = (f: CallFrame): string => {
    const file =
      f.url === ''
        ? ''
        : ` ${f.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|packages)\//, '$1/')}:${f.lineNumber + 1}`;
    return `${f.functionName || '(anonymous)'}${file}`;
  };
  const add = (m: Map<string, number>, k: string, v: number): void => {
    m.set(k, (m.get(k) ?? 0) + v);
  };

  const area = new Map<string, number>();
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    all += us;
    add(area, areaOf(node.callFrame), us);
    add(self, label(node.callFrame), us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n) break;
      const l = label(n.callFrame);
      if (!seen.has(l)) {
        seen.add(l);
        add(total, l, us);
      }
    }
  }
  const sorted = (m: Map<string, number>): [string, number][] =>
    [...m.entries()].map(([k, v]): [string, number] => [k, v / 1000]).sort((a, b) => b[1] - a[1]);
  return { totalMs: all / 1000, byArea: sorted(area), bySelf: sorted(self), byTotal: sorted(total) };
}

function print(file: string, top: number): void {
  const s = summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile);
  const busy = s.totalMs - (s.byArea.find(([a]) => a === '(idle)')?.[1] ?? 0);
  const pct = (ms: number, of: number): string => `${((ms / of) * 100).toFixed(1).padStart(5)}%`;
  console.log(
    `${file}: ${(s.totalMs / 1000).toFixed(1)} s sampled, ${(busy / 1000).toFixed(1)} s not idle (percentages below are of the non-idle time)\n`,
  );
  console.log('self time by area');
  for (const [a, ms] of s.byArea.filter(([a]) => a !== '(idle)').slice(0, top)) console.log(`  ${pct(ms, busy)}  ${a}`);
  console.log('\nself time by function');
  for (const [f, ms] of s.bySelf.filter(([f]) => !f.startsWith('(idle)')).slice(0, top))
    console.log(`  ${pct(ms, busy)}  ${f}`);
  console.log('\ninclusive time by function');
  for (const [f, ms] of s.byTotal.filter(([f]) => !f.startsWith('(idle)') && !f.startsWith('(root)')).slice(0, top))
    console.log(`  ${pct(ms, busy)}  ${f}`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node bench/lib/profile-summary.ts <file.cpuprofile> [top=25]');
    process.exit(2);
  }
  print(file, Number(process.argv[3] ?? 25));
}
