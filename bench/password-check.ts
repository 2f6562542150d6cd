/**
 * Benchmark: how long the portal's password-strength check holds the event loop
 * (packages/portal/src/identity/password-strength.ts), per password length up to the 1,024
 * characters the API takes, against the same estimator with the library's defaults (the
 * baseline, in the same run, on the same passwords). Each row is the median of `--rounds`
 * checks of fresh random passwords of that shape; the check is synchronous, so its time is
 * the time every other request of that portal waits. See bench/README.md.
 *
 *   node bench/password-check.ts [--rounds=5]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ESTIMATOR_TUNING, newEstimator } from '@svc/portal/identity/password-strength';
import { machineInfo } from './lib/machine.ts';
import { wholeNumber } from './lib/options.ts';
import { table, writeResult } from './lib/report.ts';
import { median, round } from './lib/stats.ts';

/** What the portal's check may hold the event loop for, at any length. */
const TARGET_MS = 250;

const SHAPES: Record<string, (length: number) => string> = {
  hex: (n) => randomBytes(n).toString('hex').slice(0, n),
  base64url: (n) => randomBytes(n).toString('base64url').slice(0, n),
  words: (n) => 'Kestrel-orbit-lantern-quarry-'.repeat(Math.ceil(n / 29)).slice(0, n),
};
const LENGTHS = [16, 24, 48, 128, 256, 1024];

const { values } = parseArgs({ options: { rounds: { type: 'string' } } });
const rounds = wholeNumber('rounds', values.rounds, 5, 1, 1000);

const ours = newEstimator();
const library = newEstimator({});
// The dictionaries are ranked on the first check: not part of any row.
ours.check('warm-up');
library.check('warm-up');

function timed(check: (password: string) => unknown, password: string): number {
  const start = performance.now();
  check(password);
  return performance.now() - start;
}

const rows: (string | number)[][] = [['shape', 'length', 'library ms', 'portal ms', 'ratio']];
const results = [];
let worst = 0;
for (const [shape, make] of Object.entries(SHAPES))
  for (const length of LENGTHS) {
    const lib: number[] = [];
    const own: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const password = make(length);
      lib.push(timed((p) => library.check(p), password));
      own.push(timed((p) => ours.check(p), password));
    }
    const [l, o] = [median(lib), median(own)];
    worst = Math.max(worst, o);
    rows.push([shape, length, round(l, 1), round(o, 1), round(o / l, 3)]);
    results.push({ shape, length, libraryMs: l, portalMs: o });
  }
console.log(table(rows));
console.log(
  `\nportal tuning ${JSON.stringify(ESTIMATOR_TUNING)}: longest hold ${round(worst, 1)} ms (target <= ${TARGET_MS} ms: ${worst <= TARGET_MS ? 'met' : 'NOT met'})`,
);
console.log(`result: ${writeResult('password-check', { machine: machineInfo(), rounds, results })}`);
