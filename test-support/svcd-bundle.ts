import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Part of vitest's global set-up: the agent's daemon runs from its one-file bundle
 * (packages/agent/dist/svcd.mjs), which `npm test` builds before the suite. A test file run by hand
 * after an edit of the sources that go into it would otherwise exercise the daemon as it was
 * before the edit, without a word; so the bundle is rebuilt first when a source is newer.
 */

const REPO = path.resolve(import.meta.dirname, '..');
const BUNDLE = path.join(REPO, 'packages/agent/dist/svcd.mjs');
/** Where the bundle's sources live: the agent, and the client kit and protocol it imports. */
const SOURCES = ['packages/agent/src', 'packages/client/src', 'packages/protocol/src'].map((d) => path.join(REPO, d));

/** A TypeScript source under `dirs` modified after `bundle` (the bundle itself when it is missing), else null. */
export function newerSource(bundle: string, dirs: readonly string[]): string | null {
  const built = fs.statSync(bundle, { throwIfNoEntry: false });
  if (built === undefined) return bundle;
  for (const dir of dirs)
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
      const file = path.join(entry.parentPath, entry.name);
      if (fs.statSync(file).mtimeMs > built.mtimeMs) return file;
    }
  return null;
}

export default function rebuildStaleSvcdBundle(): void {
  const newer = newerSource(BUNDLE, SOURCES);
  if (newer === null) return;
  console.log(`rebuilding packages/agent/dist/svcd.mjs (${path.relative(REPO, newer)} is newer)`);
  execFileSync(process.execPath, ['packages/agent/scripts/build-svcd.ts', '--quiet'], { cwd: REPO, stdio: 'inherit' });
}
