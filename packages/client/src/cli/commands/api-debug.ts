import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

export default function register(_program: Command, _ctx: CliContext): void {}
