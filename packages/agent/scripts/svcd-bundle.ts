/**
 * The agent daemon as one plain JavaScript file (why: packages/agent/scripts/build-svcd.ts). Shared
 * by that build and the release archives (scripts/release/client-archive.ts), so the daemon a
 * release ships is the one the tests run.
 */
import fs from 'node:fs';
import path from 'node:path';

const agentDir = path.resolve(import.meta.dirname, '..');

export interface SvcdBundle {
  code: string;
  /** The source files that went in (for the build's one-line summary). */
  inputs: string[];
}

export const bundleSvcd = (): Promise<SvcdBundle> => bundleOneFile(path.join(agentDir, 'src/main.ts'));

/** A program and everything it imports as one file (the client's `svc` in a release is made the same way). */
export async function bundleOneFile(input: string): Promise<SvcdBundle> {
  // Loaded here so a missing rolldown (an install without it) fails only the build that needs it.
  const { build } = await import('rolldown');
  const result = await build({
    input,
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
  // A source's `#!/usr/bin/env node` line has no place in a file a launcher runs.
  return {
    code: chunk.code.replace(/^#!.*\n/, ''),
    inputs: chunk.moduleIds.filter((id) => path.isAbsolute(id) && fs.existsSync(id)),
  };
}
