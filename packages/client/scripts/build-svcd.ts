/**
 * Builds svcd as one plain JavaScript file: packages/client/dist/svcd.mjs, with
 * dist/svcd.inputs beside it (every file the bundle was made from and their SHA-256, as
 * `sha256sum` prints them). bin/svcd runs the bundle only while those files are unchanged and
 * otherwise runs this build first (or, when the build cannot run, the TypeScript sources).
 *
 * Why a bundle: the daemon idles for months between heartbeats. From the sources, Node keeps its
 * TypeScript stripper and 300 module records resident; one file without them is about 13 MB
 * less resident memory, and it can run in V8's lite mode (bench/README.md, "Idle agent daemon").
 *
 *   node packages/client/scripts/build-svcd.ts [--quiet]
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const clientDir = path.resolve(import.meta.dirname, '..');
const rootDir = path.resolve(clientDir, '..', '..');
const outDir = path.join(clientDir, 'dist');
const quiet = process.argv.includes('--quiet');

async function main(): Promise<void> {
  // Loaded here so a missing rolldown (an install without it) is the one-line failure below.
  const { build } = await import('rolldown');
  const result = await build({
    input: path.join(clientDir, 'src/agent/main.ts'),
    platform: 'node',
    logLevel: 'warn',
    write: false,
    // TypeBox's builders are pure: the protocol's schemas the daemon never checks are left out.
    treeshake: { manualPureFunctions: ['Type'] },
    output: {
      format: 'esm',
      codeSplitting: false,
      // Smaller source held in memory; names kept, so a stack trace in a log still reads.
      minify: { compress: true, mangle: false, codegen: { removeWhitespace: true } },
      // ASCII source is stored one byte per character (a single other character makes V8 use two).
      charset: 'ascii',
    },
  });
  const chunk = result.output.find((o) => o.type === 'chunk');
  if (chunk === undefined) throw new Error('rolldown produced no chunk');

  const inputs = chunk.moduleIds
    .filter((id) => path.isAbsolute(id) && fs.existsSync(id))
    .map((id) => path.relative(rootDir, id))
    .sort();
  const listing = inputs
    .map(
      (file) =>
        `${createHash('sha256')
          .update(fs.readFileSync(path.join(rootDir, file)))
          .digest('hex')}  ${file}\n`,
    )
    .join('');

  // Written under temporary names and renamed: two daemons starting at once never read half a file.
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = `.${process.pid}`;
  fs.writeFileSync(path.join(outDir, `svcd.mjs${tmp}`), chunk.code);
  fs.writeFileSync(path.join(outDir, `svcd.inputs${tmp}`), listing);
  fs.renameSync(path.join(outDir, `svcd.mjs${tmp}`), path.join(outDir, 'svcd.mjs'));
  fs.renameSync(path.join(outDir, `svcd.inputs${tmp}`), path.join(outDir, 'svcd.inputs'));
  if (!quiet)
    console.log(
      `packages/client/dist/svcd.mjs: ${(chunk.code.length / 1024).toFixed(0)} KiB from ${inputs.length} files`,
    );
}

try {
  await main();
} catch (err) {
  // One line: bin/svcd shows it when it falls back to the sources.
  console.error(`build-svcd: ${(err as Error).message.split('\n')[0]}`);
  process.exitCode = 1;
}
