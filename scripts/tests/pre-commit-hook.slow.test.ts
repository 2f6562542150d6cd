import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/**
 * scripts/git-hooks/pre-commit in a scratch repository with this project's Biome settings: a
 * staged file Biome refuses stops the commit; a clean one, or a bad file left unstaged, does not.
 */
const repo = path.resolve(import.meta.dirname, '../..');
let dir: string;

const git = (...args: string[]) => spawnSync('git', args, { cwd: dir, encoding: 'utf8' });
const commit = (message: string) =>
  spawnSync('git', ['commit', '-q', '-m', message], {
    cwd: dir,
    encoding: 'utf8',
    // The hook finds Biome in the repository's node_modules; the scratch repo links the project's.
    env: { ...process.env, PATH: `${path.join(repo, 'node_modules', '.bin')}:${process.env['PATH']}` },
  });

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-hook-'));
  git('init', '-q');
  git('config', 'user.email', 'dev@example.test');
  git('config', 'user.name', 'dev');
  git('config', 'core.hooksPath', path.join(repo, 'scripts', 'git-hooks'));
  fs.copyFileSync(path.join(repo, 'biome.json'), path.join(dir, 'biome.json'));
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the pre-commit hook', () => {
  it('refuses a staged file Biome refuses, and names it', () => {
    fs.writeFileSync(path.join(dir, 'bad.ts'), 'const  x = {a:1}\nexport default x\n');
    git('add', '.');
    const res = commit('bad');
    expect(res.status).not.toBe(0);
    expect(`${res.stdout}${res.stderr}`).toContain('bad.ts');
    expect(git('rev-list', '--all').stdout).toBe('');
  });

  it('lets a clean change through, and does not look at files left unstaged', () => {
    fs.writeFileSync(path.join(dir, 'good.ts'), 'const x = { a: 1 };\nexport default x;\n');
    git('add', 'good.ts', '.gitignore', 'biome.json');
    fs.writeFileSync(path.join(dir, 'unstaged.ts'), 'const  y = {b:2}\n');
    const res = commit('good');
    expect(res.status, `${res.stdout}${res.stderr}`).toBe(0);
    expect(git('log', '--format=%s').stdout.trim()).toBe('good');
  });
});
