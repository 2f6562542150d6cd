/**
 * Type-checks each package on its own tsconfig.json, two at a time: a package must compile with
 * only its own files and what it imports by name, not lean on a file the root program includes.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const packages = fs
  .readdirSync(path.join(root, 'packages'))
  .filter((p) => fs.existsSync(path.join(root, 'packages', p, 'tsconfig.json')))
  .sort();

let failed = false;
async function check(name: string): Promise<void> {
  try {
    await run(process.execPath, [tsc, '-p', path.join('packages', name, 'tsconfig.json')], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    console.log(`typecheck packages/${name}: ok`);
  } catch (err) {
    failed = true;
    const e = err as { stdout?: string; stderr?: string; message: string };
    console.error(`typecheck packages/${name}: failed\n${e.stdout || e.stderr || e.message}`);
  }
}

const queue = [...packages];
await Promise.all(
  [0, 1].map(async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) await check(name);
  }),
);
process.exit(failed ? 1 : 0);
