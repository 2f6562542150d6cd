import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/**
 * The first executable named one of `names` in an absolute PATH directory, or undefined. Relative
 * PATH entries are ignored so that the working directory can never supply a scanner binary.
 */
export function findTool(names: readonly string[], env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here; try the next name and directory.
      }
    }
  }
  return undefined;
}
