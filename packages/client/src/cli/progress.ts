import { SingleBar } from 'cli-progress';

/**
 * A progress bar on standard error for long runs, only when it is a terminal (piped or
 * redirected output stays exactly what the command prints). It stays on screen when done.
 */
export interface Progress {
  tick(): void;
  stop(): void;
}

const NONE: Progress = { tick: () => {}, stop: () => {} };

export function progressBar(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  total: number,
  label = 'sessions',
): Progress {
  if (stream.isTTY !== true || total < 2) return NONE;
  const bar = new SingleBar({
    stream: stream as NodeJS.WriteStream,
    format: `{bar} {value}/{total} ${label} ({percentage}%, {eta_formatted} left)`,
    barsize: 30,
    hideCursor: true,
    fps: 5,
  });
  bar.start(total, 0);
  return {
    tick: () => bar.increment(),
    stop: () => bar.stop(),
  };
}
