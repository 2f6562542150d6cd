import fs from 'node:fs/promises';
import path from 'node:path';
import { NETLAB_SUBNET } from './index.ts';

/** Refuses any address outside the test network: nothing else is ever a target. */
export function assertInTestNetwork(ips: readonly string[]): void {
  const prefix = NETLAB_SUBNET.replace(/0\/24$/, '');
  for (const ip of ips) if (!ip.startsWith(prefix)) throw new Error(`refusing to scan ${ip}: outside the test network`);
}

/**
 * Writes `<dir>/<tool>` wrappers that run /usr/bin/<tool> inside the scanner namespace (from
 * outside it the lab's addresses are unreachable); put `dir` first on the scanner's PATH.
 */
export async function scannerTools(wrapper: readonly string[], dir: string, tools: readonly string[]): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  for (const tool of tools)
    await fs.writeFile(path.join(dir, tool), `#!/bin/sh\nexec ${wrapper.join(' ')} /usr/bin/${tool} "$@"\n`, {
      mode: 0o755,
    });
}
