import fs from 'node:fs';
import path from 'node:path';

/** The checkout this agent runs from (for `update`), or null when it is not a git checkout. */
export function installDirOf(agentDir: string): string | null {
  const root = path.resolve(agentDir, '..', '..');
  return fs.existsSync(path.join(root, '.git')) ? root : null;
}
