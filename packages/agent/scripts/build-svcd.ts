/**
 * Builds svcd as one plain JavaScript file: packages/agent/dist/svcd.mjs. It runs when the agent
 * is installed (`npm ci`, the root package's postinstall) and updated (the `update` command), and
 * by `npm run build:agent`; bin/svcd only runs the bundle.
 *
 * Why a bundle: the daemon idles for months between heartbeats. From the sources, Node keeps its
 * TypeScript stripper and 300 module records resident; one file without them is about 13 MB
 * less resident memory, and it can run in V8's lite mode (bench/README.md, "Idle agent daemon").
 *
 *   node packages/agent/scripts/build-svcd.ts [--quiet]
 */
import fs from 'node:fs';
import path from 'node:path';

const agentDir = path.resolve(import.meta.dirname, '..');
const outDir = path.join(agentDir, 'dist');
const quiet = process.argv.includes('--quiet');

async function main(): Promise<void> {
  // Loaded here so a missing rolldown (an install without it) is the one-line failure below.
  const { build } = await import('rolldown');
  const result = await build({
    input: path.join(agentDir, 'src/main.ts'),
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

  const inputs = chunk.moduleIds.filter((id) => path.isAbsolute(id) && fs.existsSync(id));

  // Written under a temporary name and renamed: a daemon starting during a rebuild never reads half a file.
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = path.join(outDir, `svcd.mjs.${process.pid}`);
  fs.writeFileSync(tmp, chunk.code);
  fs.renameSync(tmp, path.join(outDir, 'svcd.mjs'));
  if (!quiet)
    console.log(
      `packages/agent/dist/svcd.mjs: ${(chunk.code.length / 1024).toFixed(0)} KiB from ${inputs.length} files`,
    );
}

try {
  await main();
} catch (err) {
  // One line: the install or the `update` command shows it.
  console.error(`build-svcd: ${(err as Error).message.split('\n')[0]}`);
  process.exitCode = 1;
}
