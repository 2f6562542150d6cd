import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, globSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * `npm run screenshots`: runs the test files that take screenshots with SCREENSHOTS=1 (they
 * write into the ignored test-output/screenshots/), then copies the pictures the docs show over
 * their tracked copies. Tests never write a tracked file themselves; this is the one deliberate
 * step that does. Pictures the docs do not show yet are listed, not copied.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'test-output/screenshots');
/** Pictures kept outside docs/screenshots/. */
const ELSEWHERE: Record<string, string> = { 'report-screenshot.png': 'docs/report-screenshot.png' };

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const r = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const files = globSync(['packages/*/tests/**/*.test.ts', 'e2e/**/*.test.ts'], { cwd: ROOT })
  .filter((f) => readFileSync(path.join(ROOT, f), 'utf8').includes('test-support/screenshots.ts'))
  .sort();
rmSync(OUT, { recursive: true, force: true });
run('npm', ['run', 'build:web']);
run('npx', ['vitest', 'run', ...files], { ...process.env, SCREENSHOTS: '1' });

const notShown: string[] = [];
for (const name of readdirSync(OUT).sort()) {
  const target = ELSEWHERE[name] ?? `docs/screenshots/${name}`;
  if (!existsSync(path.join(ROOT, target))) {
    notShown.push(name);
    continue;
  }
  copyFileSync(path.join(OUT, name), path.join(ROOT, target));
  console.log(`${target} refreshed`);
}
if (notShown.length > 0)
  console.log(
    `Not shown in the docs (copy by hand to add one): ${notShown.map((n) => `test-output/screenshots/${n}`).join(', ')}`,
  );
console.log('Look at the pictures (git diff --stat docs) before committing them.');
