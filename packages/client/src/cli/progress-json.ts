import { commandProgressOf, type ProgressStage, progressLine, stageProgress } from '@svc/protocol';
import type { NmapProgress } from '../scanner/parse/types.ts';

/**
 * `svc scan --progress-json`: nmap's progress and the pipeline's stages for a caller that is not
 * a terminal (svcd's run_scan), one JSON line per report on stderr,
 * `{"progress":{"task":"SYN Stealth Scan","percent":45.2,"stage":"nmap"}}`,
 * in the protocol's one shape (command-progress.ts: one-line task of at most 64 characters,
 * percent 0-100). A report without a task is left out. stdout is left alone: `--json` still
 * prints one answer there.
 */
export function progressJsonWriter(stream: NodeJS.WritableStream): (progress: NmapProgress) => void {
  return (p) => {
    const progress = commandProgressOf(p.task, p.percent, 'nmap');
    if (progress !== null) stream.write(`${progressLine(progress)}\n`);
  };
}

/** The pipeline's stage as it starts: one line in the same shape, percent 0. */
export function stageJsonWriter(stream: NodeJS.WritableStream): (stage: ProgressStage) => void {
  return (stage) => void stream.write(`${progressLine(stageProgress(stage))}\n`);
}

/** `--stats-every <seconds>`: a whole number from 1 to 3600, else null. */
export function statsEveryOf(value: string): number | null {
  if (!/^\d{1,4}$/.test(value)) return null;
  const n = Number(value);
  return n >= 1 && n <= 3600 ? n : null;
}
