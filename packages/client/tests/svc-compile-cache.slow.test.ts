import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO, runCli, SVC, tempHome } from '@svc/test-support/cli';

const SVCD = path.join(REPO, 'packages/agent/bin/svcd');

/**
 * bin/svc starts Node on its compile cache (a cheaper start: bench/README.md, bench:scan) in the
 * user's own cache directory; an explicit setting wins, and nothing is created for a HOME that
 * does not exist. bin/svcd starts through the same launcher (bin/launch.bash) and follows the same rules.
 */

const homes: string[] = [];
afterEach(async () => {
  for (const h of homes.splice(0)) await fs.rm(h, { recursive: true, force: true });
});

async function home(): Promise<string> {
  const h = await tempHome();
  homes.push(h);
  return h;
}

/** Entries of a directory, or null when it does not exist. */
const list = async (dir: string) => fs.readdir(dir).catch(() => null);

describe('svc and the Node compile cache', () => {
  it('keeps the cache in ~/.cache/svc/node-compile-cache when nothing else is set', async () => {
    const h = await home();
    const r = await runCli(SVC, ['--version'], { home: h, env: { NODE_COMPILE_CACHE: undefined } });
    expect(r.code, r.stderr).toBe(0);
    expect(await list(h)).toEqual(['.cache']);
    const entries = await list(path.join(h, '.cache', 'svc', 'node-compile-cache'));
    expect(entries).toHaveLength(1);
    expect(entries?.[0]).toMatch(/^v\d+\.\d+\.\d+-/);
  });

  it('uses XDG_CACHE_HOME when it is set', async () => {
    const h = await home();
    const xdg = path.join(h, 'xdg');
    const r = await runCli(SVC, ['--version'], {
      home: h,
      env: { NODE_COMPILE_CACHE: undefined, XDG_CACHE_HOME: xdg },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(await list(path.join(xdg, 'svc', 'node-compile-cache'))).toHaveLength(1);
    expect(await list(path.join(h, '.cache'))).toBeNull();
  });

  it('leaves an explicit NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE alone', async () => {
    const h = await home();
    const own = path.join(h, 'own-cache');
    const a = await runCli(SVC, ['--version'], { home: h, env: { NODE_COMPILE_CACHE: own } });
    expect(a.code, a.stderr).toBe(0);
    expect(await list(own)).toHaveLength(1);
    const b = await runCli(SVC, ['--version'], {
      home: h,
      env: { NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: '1' },
    });
    expect(b.code, b.stderr).toBe(0);
    expect((await list(h))?.sort()).toEqual(['own-cache']);
  });

  it('creates nothing for a HOME that does not exist', async () => {
    const h = await home();
    const missing = path.join(h, 'missing');
    const r = await runCli(SVC, ['--version'], { home: missing, env: { NODE_COMPILE_CACHE: undefined } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(await list(missing)).toBeNull();
  });
});

/**
 * A node for SVC_NODE that writes the NODE_COMPILE_CACHE it was started with (one line per
 * start, "-" when unset) to `log`, then runs the real node: what the launcher exported, seen
 * from outside.
 */
async function recordingNode(dir: string, log: string): Promise<string> {
  const file = path.join(dir, 'node');
  await fs.writeFile(
    file,
    `#!/usr/bin/env bash\necho "\${NODE_COMPILE_CACHE:--}" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    { mode: 0o755 },
  );
  return file;
}

describe('svcd and the Node compile cache', () => {
  // The directory svcd once fell back to with HOME unset: shared by every user of the host.
  const shared = '/tmp/.cache/svc/node-compile-cache';

  it('with HOME unset creates nothing in the shared temp directory and sets no cache', async () => {
    const h = await home();
    const log = path.join(h, 'node-starts.log');
    const before = await list(shared);
    const r = await runCli(SVCD, ['--version'], {
      home: h,
      env: { HOME: undefined, NODE_COMPILE_CACHE: undefined, SVC_NODE: await recordingNode(h, log) },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    const starts = (await fs.readFile(log, 'utf8')).trim().split('\n');
    // The version probe and the daemon: neither got a cache.
    expect(starts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(starts)).toEqual(new Set(['-']));
    expect(await list(shared)).toEqual(before);
  });

  it('keeps the cache in ~/.cache/svc/node-compile-cache like svc', async () => {
    const h = await home();
    const r = await runCli(SVCD, ['--version'], { home: h, env: { NODE_COMPILE_CACHE: undefined } });
    expect(r.code, r.stderr).toBe(0);
    expect(await list(path.join(h, '.cache', 'svc', 'node-compile-cache'))).toHaveLength(1);
  });
});
