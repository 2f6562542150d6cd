import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Starts the long files first, so that the run does not end with one worker alone on a
 * two-minute file started late. With timings from an earlier run on this checkout, vitest's
 * own order (longest first) is used; on a clean clone there are none, and the file names say
 * which are long (`heavyFirst`).
 */
export class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const { cache, config } = this.ctx;
    const timed = sorted.every(
      (f) => cache.getFileTestResults(`${f.project.name}:${path.relative(config.root, f.moduleId)}`) !== undefined,
    );
    return timed ? sorted : heavyFirst(sorted, (f) => f.moduleId);
  }
}

/**
 * Scans of the test network first, then browser files, then the other slow and end-to-end
 * files, then the rest; the given order within each.
 */
export function heavyFirst<T>(items: readonly T[], pathOf: (item: T) => string): T[] {
  return items
    .map((item, index) => ({ item, index, weight: weightOf(pathOf(item)) }))
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((x) => x.item);
}

function weightOf(file: string): number {
  if (file.includes('netlab')) return 3;
  if (file.includes('browser') || file.includes('/packages/web/tests/')) return 2;
  if (file.endsWith('.slow.test.ts') || file.includes('/e2e/')) return 1;
  return 0;
}
