/**
 * Resident memory of another process, from /proc/<pid>/status (Linux only): VmRSS sampled
 * on a timer, plus VmHWM (the kernel's own peak, which no sample can miss). Before a
 * window the peak is reset to the current RSS (`echo 5 > /proc/<pid>/clear_refs`, Linux
 * >= 4.0, allowed for our own children), so VmHWM at the end is the peak of that window.
 */
import fs from 'node:fs';

export interface MemStatus {
  /** Resident set size, KiB. */
  rssKiB: number;
  /** Peak resident set size since start (or since the last reset), KiB. */
  hwmKiB: number;
}

export function readMem(pid: number): MemStatus | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string): number | null => {
    const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const rss = field('VmRSS');
  const hwm = field('VmHWM');
  return rss === null || hwm === null ? null : { rssKiB: rss, hwmKiB: hwm };
}

/** Reset VmHWM of `pid` to its current RSS; false when the kernel or permissions do not allow it. */
export function resetPeak(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface RssWindow {
  /** VmRSS when the window opened, KiB. */
  beforeKiB: number;
  /** Highest VmRSS sampled during the window, KiB. */
  sampledPeakKiB: number;
  /** VmHWM at the end of the window: the window's true peak when `peakWasReset`, else the process's lifetime peak. */
  hwmKiB: number;
  peakWasReset: boolean;
  /** The peak of the window: max(sampled, VmHWM) when the peak was reset, else the sampled one. */
  peakKiB: number;
  /** peakKiB - beforeKiB. */
  growthKiB: number;
  /** VmRSS when the window closed, KiB. */
  afterKiB: number;
  samples: number;
  /** Longest gap between two samples, ms (the timer runs on the benchmark's event loop). */
  maxGapMs: number;
}

export interface RssSampler {
  stop(): RssWindow;
}

/** Open a window on `pid`'s memory: reset its peak, then sample VmRSS every `intervalMs`. */
export function startRssSampler(pid: number, intervalMs: number): RssSampler {
  const first = readMem(pid);
  if (first === null) throw new Error(`cannot read /proc/${pid}/status (process gone, or not Linux)`);
  const peakWasReset = resetPeak(pid);
  let sampledPeak = first.rssKiB;
  let samples = 1;
  let last = performance.now();
  let maxGap = 0;
  const sample = (): void => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    const m = readMem(pid);
    if (m === null) return;
    samples++;
    if (m.rssKiB > sampledPeak) sampledPeak = m.rssKiB;
  };
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      const end = readMem(pid);
      const hwm = end?.hwmKiB ?? first.hwmKiB;
      const peak = peakWasReset ? Math.max(sampledPeak, hwm) : sampledPeak;
      return {
        beforeKiB: first.rssKiB,
        sampledPeakKiB: sampledPeak,
        hwmKiB: hwm,
        peakWasReset,
        peakKiB: peak,
        growthKiB: peak - first.rssKiB,
        afterKiB: end?.rssKiB ?? Number.NaN,
        samples,
        maxGapMs: Math.round(maxGap * 10) / 10,
      };
    },
  };
}
