/** Small numeric helpers shared by the benchmarks. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nearest-rank percentile (0 < p <= 100) of an ascending-sorted array. */
export function percentileSorted(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** A growable Float64Array (one entry per response; cheaper than number[] at 10^6 entries). */
export class Samples {
  #data = new Float64Array(1 << 16);
  #length = 0;

  push(value: number): void {
    if (this.#length === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#length++] = value;
  }

  get length(): number {
    return this.#length;
  }

  sorted(): Float64Array {
    return this.#data.slice(0, this.#length).sort();
  }
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export interface LatencySummary {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Latency figures (ms, 3 decimals) of an ascending-sorted sample. */
export function latencySummary(sorted: Float64Array): LatencySummary {
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    mean: round(sorted.length > 0 ? sum / sorted.length : Number.NaN, 3),
    p50: round(percentileSorted(sorted, 50), 3),
    p90: round(percentileSorted(sorted, 90), 3),
    p99: round(percentileSorted(sorted, 99), 3),
    p999: round(percentileSorted(sorted, 99.9), 3),
    max: round(sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN, 3),
  };
}

/** autocannon's per-status statistics as status code → count. */
export function statusCountsOf(stats: Record<string, { count: number }>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(stats)) out[code] = count;
  return out;
}
