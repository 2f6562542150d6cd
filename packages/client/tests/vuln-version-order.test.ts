import { describe, expect, it } from 'vitest';
import { cpeVersion, orderedVersion } from '@svc/protocol';
import { compareVersionKeys, releaseKey } from '../src/cve-match/compare.ts';
import { seededRandom } from '@svc/test-support/random';

/**
 * The order the vulnerability index's versions compare in (docs/vuln-matching.md, "Versions"):
 * a banner's or NVD's version put in the index's form (orderedVersion, the CPE's update folded
 * in by cpeVersion), then dpkg's order with trailing zero components dropped (releaseKey). A
 * property test over versions drawn with a seeded generator (fast-check is not a dependency of
 * this repository): the same seed draws the same versions on every run.
 */

const SEEDS = [36, 7696, 20260101];
const DRAWS = 400;

const sign = (n: number) => (n > 0 ? 1 : n < 0 ? -1 : 0);
const cmp = (a: string, b: string) =>
  sign(compareVersionKeys(releaseKey(orderedVersion(a)), releaseKey(orderedVersion(b))));

const PRE = ['alpha', 'beta', 'rc', 'pre', 'preview', 'dev'];
const SEPARATORS = ['', '-', '.', '_'];

/** A release number of 1 to 4 components, each 0 to 30 (zeros often, so trailing zeros occur). */
function release(rnd: () => number): number[] {
  const n = 1 + Math.floor(rnd() * 4);
  return Array.from({ length: n }, () => (rnd() < 0.3 ? 0 : Math.floor(rnd() * 31)));
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

/** Numbers compared component by component, a missing component being 0. */
function compareNumbers(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return sign(d);
  }
  return 0;
}

/** A version of one of the forms banners and NVD write, with its expected place: [release, stage, n]. */
interface Drawn {
  text: string;
  release: number[];
  /** 0 pre-release, 1 the release, 2 a patch (p<n>). */
  stage: number;
  word: string;
  n: number;
}

function draw(rnd: () => number): Drawn {
  const r = release(rnd);
  const text = r.join('.');
  const kind = rnd();
  if (kind < 0.4) return { text, release: r, stage: 1, word: '', n: 0 };
  const n = 1 + Math.floor(rnd() * 12);
  if (kind < 0.75) {
    const word = pick(rnd, PRE);
    return { text: `${text}${pick(rnd, SEPARATORS)}${word}${pick(rnd, ['', '.'])}${n}`, release: r, stage: 0, word, n };
  }
  return { text: `${text}p${n}`, release: r, stage: 2, word: 'p', n };
}

/** What the order should say of two drawn versions, from their parts alone. */
function expected(a: Drawn, b: Drawn): number {
  const byRelease = compareNumbers(a.release, b.release);
  if (byRelease !== 0) return byRelease;
  if (a.stage !== b.stage) return sign(a.stage - b.stage);
  if (a.word !== b.word) return a.word < b.word ? -1 : 1;
  return sign(a.n - b.n);
}

describe.each(SEEDS)('the index version order, seed %i', (seed) => {
  const rnd = seededRandom(seed);
  const drawn = Array.from({ length: DRAWS }, () => draw(rnd));

  it('orders by release number, then pre-release < release < patch, then by the update number', () => {
    const wrong = [];
    for (let i = 0; i + 1 < drawn.length; i++) {
      const a = drawn[i] as Drawn;
      const b = drawn[i + 1] as Drawn;
      if (cmp(a.text, b.text) !== expected(a, b)) wrong.push([a.text, b.text, cmp(a.text, b.text), expected(a, b)]);
    }
    expect(wrong).toEqual([]);
  });

  it('is a total preorder: reflexive, antisymmetric and transitive over every triple drawn', () => {
    const sample = drawn.slice(0, 60).map((d) => d.text);
    // Each pair compared once: the triples then read the table (216,000 of them, three comparisons each).
    const order = sample.map((a) => sample.map((b) => cmp(a, b)));
    const at = (i: number, j: number) => order[i]![j]!;
    const violations = [];
    for (let a = 0; a < sample.length; a++) {
      if (at(a, a) !== 0) violations.push(['reflexive', sample[a]]);
      for (let b = 0; b < sample.length; b++) {
        if (at(a, b) !== -at(b, a)) violations.push(['antisymmetric', sample[a], sample[b]]);
        for (let c = 0; c < sample.length; c++)
          if (at(a, b) <= 0 && at(b, c) <= 0 && at(a, c) > 0)
            violations.push(['transitive', sample[a], sample[b], sample[c]]);
      }
    }
    expect(violations).toEqual([]);
  });

  it('puts every pre-release before its release and every patch after it, whatever the separator', () => {
    for (const d of drawn) {
      const base = d.release.join('.');
      expect(cmp(`${base}-rc${d.n}`, base), base).toBe(-1);
      expect(cmp(`${base}${pick(rnd, SEPARATORS)}${pick(rnd, PRE)}${d.n}`, base), base).toBe(-1);
      expect(cmp(`${base}p${d.n}`, base), base).toBe(1);
      // Trailing zero components do not count: NVD's 2.10 is TensorFlow's 2.10.0.
      expect(cmp(`${base}.0`, base), base).toBe(0);
    }
  });

  it('reads a CPE update as the same version written in one string', () => {
    for (const d of drawn.filter((x) => x.stage !== 1)) {
      const base = d.release.join('.');
      const cpe = `cpe:2.3:a:vendor:product:${base}:${d.word}${d.n}:*:*:*:*:*:*`;
      expect(cmp(cpeVersion(cpe) ?? '', d.text), cpe).toBe(0);
    }
  });

  it('writes a version in the index form once: orderedVersion is idempotent', () => {
    for (const d of drawn) expect(orderedVersion(orderedVersion(d.text))).toBe(orderedVersion(d.text));
  });
});
