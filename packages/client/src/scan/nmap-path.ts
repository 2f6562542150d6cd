import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** The first executable `nmap` on PATH, or undefined when there is none. */
export function findNmap(env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'nmap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}

export const NMAP_MISSING =
  'nmap not found on PATH: install it (Debian: apt-get install nmap); tools/dependency_check.sh lists what the client tools need';
