import os from 'node:os';
import type { Command } from 'commander';
import type { Streams } from './output.ts';

/** What a command may touch of the outside world; tests run the same code as real processes. */
export interface CliContext {
  streams: Streams;
  env: NodeJS.ProcessEnv;
  /** Where ~/.svc lives. */
  home: string;
  now: () => Date;
  /** Whether standard input is an interactive terminal (prompts are offered only then). */
  stdinIsTTY: boolean;
}

export function processContext(): CliContext {
  return {
    streams: { stdout: process.stdout, stderr: process.stderr, env: process.env },
    env: process.env,
    home: process.env['HOME'] ?? os.homedir(),
    now: () => new Date(),
    stdinIsTTY: process.stdin.isTTY === true,
  };
}

/** Each command file exports one of these; cli/main.ts registers them all. */
export type RegisterCommand = (program: Command, ctx: CliContext) => void;
