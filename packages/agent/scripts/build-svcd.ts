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
import { replaceFileSync } from '@svc/protocol/node';
import { bundleSvcd } from './svcd-bundle.ts';

const agentDir = path.resolve(import.meta.dirname, '..');
const outDir = path.join(agentDir, 'dist');
const quiet = process.argv.includes('--quiet');

async function main(): Promise<void> {
  const { code, inputs } = await bundleSvcd();

  // Replaced whole: a daemon starting during a rebuild never reads half a file. Durably: the
  // service starts this file at boot, so a power cut after an update must not leave it empty.
  fs.mkdirSync(outDir, { recursive: true });
  replaceFileSync(path.join(outDir, 'svcd.mjs'), code, { durable: true });
  if (!quiet)
    console.log(`packages/agent/dist/svcd.mjs: ${(code.length / 1024).toFixed(0)} KiB from ${inputs.length} files`);
}

try {
  await main();
} catch (err) {
  // One line: the install or the `update` command shows it.
  console.error(`build-svcd: ${(err as Error).message.split('\n')[0]}`);
  process.exitCode = 1;
}
